"""Commitments under load: 10,000 armed time commitments across 100 tenants on a local
Temporal dev server, 2,000 of them due within a two-minute window and the rest days
ahead; every due one must fire exactly once.

    python -m benchmarks.commitments_bench            # the full run (about 7 minutes)
    python -m benchmarks.commitments_bench --quick    # 1,000 armed, 200 due in 30 s (90 s)
    python -m benchmarks.commitments_bench --quick --option per-ref   # the prototype

How it runs, end to end through the product's own paths:
1. Baselines in the same run: the dev server's ceiling for one-activity workflows (a
   no-op activity, started all at once, worker in this process), in workflows/s, and its
   ceiling for workflow starts held back by a start delay (no worker involved), in
   starts/s: arming one run per commitment cannot beat the second.
2. The real worker (`python worker.py`) runs as a subprocess against the same dev server
   and database, so its memory is measured alone (peak RSS, sampled every 0.5 s, and the
   kernel's high-water mark).
3. Entries ("Remind me in 5 days to ...") are written to 100 memoryRefs. The far ones
   are said now (due in 5 days) and armed first: a CommitmentInferenceWorkflow per
   memoryRef (20 at once) parses them, and its arming activity, finding them beyond the
   24 h arming horizon, leaves them to the memoryRef's CommitmentHorizonWorkflow (one
   signal-with-start per memoryRef). The due ones are then written with a back-dated creation so
   that "in 5 days" falls inside the window, and inferred on demand by id (the watermark
   has passed their back-dated time); the window opens once writing and arming them has
   had time to finish; their arming activity starts one CommitmentWorkflow each. The
   arming rate is commitments over the wall time of those inference runs (inference,
   arming activity, started workflows or horizon signals), far and due passes.
   The far ones' workflows are started later, by their horizon run's pass 12 h before
   their instant. That pass is measured too (``horizon_pass_per_s``): the same arming
   activity, run here as of that moment for every memoryRef (20 at once), starting the
   8,000 held-back runs; and every memoryRef must have its horizon run waiting, and no
   far commitment a workflow, before it.
4. After the window: the ledger and the event log are read. Lateness is the ledger's
   claim time (wall clock, when the firing transaction ran) minus the due instant; every
   tenth fired one's history splits it into hops (benchmarks/lateness_hops.py), and the
   inference runs' histories split the arming time between inference and arming.
   The 1/5/15-minute load average at the end says how busy the machine was.

``--option per-ref`` measures the alternative the issue names instead of the product's
path: one timer workflow per memoryRef holding all its instants
(benchmarks/ref_timer_option.py).

Runs enqueue no agent run (enqueueRuns false): the figures are the firing path alone.
Results go to benchmarks/results/commitments.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment
from temporalio.worker import Worker

from activities.commitment_activities import CommitmentActivities
from benchmarks.ceiling_workflow import OneActivityWorkflow, noop
from benchmarks.common import bench_server, fresh_database
from benchmarks.lateness_hops import Claim, lateness_hops
from benchmarks.ref_timer_option import RefTimersWorkflow, infer_and_arm_per_ref
from memory.storage import tables
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter
from runtime.workflow_ids import PLAIN
from schemas.commitments import ARM_HORIZON, ArmCommitmentsRequest, CommitmentInferenceInput
from schemas.memory_entry import NewMemoryEntry
from schemas.memory_ref import parse_memory_ref
from workflows.commitment_inference import CommitmentInferenceWorkflow

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("results")
REMIND_AFTER = timedelta(days=5)


@dataclass(frozen=True)
class Plan:
    tenants: int
    armed: int
    due: int
    window_s: int
    ceiling_workflows: int
    # Headroom before the window opens beyond the estimated writing and arming time, so
    # no commitment is armed after its instant (the run warns if one is).
    margin_s: int = 30


# What arms and fires: the product's path (one CommitmentWorkflow per commitment,
# activities/commitment_activities.py), or the per-memoryRef timer prototype
# (benchmarks/ref_timer_option.py) measured beside it.
PER_COMMITMENT, PER_REF = "per-commitment", "per-ref"

FULL = Plan(tenants=100, armed=10_000, due=2_000, window_s=120, ceiling_workflows=1_000)
QUICK = Plan(tenants=20, armed=1_000, due=200, window_s=30, ceiling_workflows=200)
# For the test suite: the whole path in about 20 s (20 due ones arm in well under 1 s).
SMOKE = Plan(tenants=4, armed=60, due=20, window_s=5, ceiling_workflows=20, margin_s=5)


# ------------------------------------------------------------ the ceiling baseline


async def dev_server_ceiling(client: Client, count: int) -> float:
    """One-activity workflows per second, all started at once (same worker settings)."""
    queue = f"ceiling-{uuid.uuid4().hex[:6]}"
    async with Worker(client, task_queue=queue, workflows=[OneActivityWorkflow], activities=[noop]):
        started = time.perf_counter()
        handles = await asyncio.gather(
            *(
                client.start_workflow(
                    OneActivityWorkflow.run, n, id=f"{queue}-{n}", task_queue=queue
                )
                for n in range(count)
            )
        )
        await asyncio.gather(*(handle.result() for handle in handles))
        return count / (time.perf_counter() - started)


async def start_ceiling(client: Client, count: int, concurrency: int = 64) -> float:
    """Workflow starts per second the dev server takes at all: ``count`` one-activity
    workflows started with a day's start delay (as arming starts a commitment's run, no
    worker involved), ``concurrency`` in flight. Arming one run per commitment cannot
    beat it."""
    queue = f"start-ceiling-{uuid.uuid4().hex[:6]}"
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with gate:
            await client.start_workflow(
                OneActivityWorkflow.run,
                n,
                id=f"{queue}-{n}",
                task_queue=queue,
                start_delay=timedelta(days=1),
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(count)))
    return count / (time.perf_counter() - started)


# ------------------------------------------------------------ the worker process


class WorkerProcess:
    def __init__(self, address: str, database_url: str, task_queue: str, state: Path) -> None:
        env = {
            **os.environ,
            "TEMPORAL_ADDRESS": address,
            "TEMPORAL_NAMESPACE": "default",
            "AGENT_MEMORY_TASK_QUEUE": task_queue,
            "DATABASE_URL": database_url,
            "AGENT_MEMORY_SECRETS_FILE": str(state / "secrets.json"),
        }
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "worker.py")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.peak_rss_mb = 0.0
        self._sampler: asyncio.Task[None] | None = None
        self._drain: asyncio.Task[str] | None = None

    async def ready(self) -> None:
        assert self.process.stdout is not None
        while True:
            line = await asyncio.to_thread(self.process.stdout.readline)
            if not line:
                raise RuntimeError("the worker exited before polling")
            if "worker polling" in line:
                break
        self._sampler = asyncio.create_task(self._sample())
        # Drain the log so the pipe never fills and blocks the worker.
        self._drain = asyncio.create_task(asyncio.to_thread(self.process.stdout.read))

    def _status(self, field: str) -> float:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    async def _sample(self) -> None:
        while True:
            self.peak_rss_mb = max(self.peak_rss_mb, self._status("VmRSS"))
            await asyncio.sleep(0.5)

    def high_water_mb(self) -> float:
        return self._status("VmHWM")

    def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


# ------------------------------------------------------------ arming


class SettableClock:
    def __init__(self) -> None:
        self.value: datetime | None = None

    def __call__(self) -> datetime:
        return self.value or datetime.now(UTC)


async def write_far_entries(engine: AsyncEngine, refs: Sequence[str], count: int) -> None:
    """``count`` reminders said now (due in 5 days), one batch per memoryRef."""
    store = PostgresMemoryStore(engine)
    for index, ref in enumerate(refs):
        numbers = range(index, count, len(refs))
        await store.put_many(
            ref, [NewMemoryEntry(content=f"Remind me in 5 days to check item {n}") for n in numbers]
        )


async def write_due_entries(
    engine: AsyncEngine, refs: Sequence[str], count: int, due_from: datetime, window_s: int
) -> dict[str, list[str]]:
    """``count`` reminders due evenly inside [due_from, due_from + window): each is said
    5 days before its instant (a back-dated creation). Returns their ids per ref."""
    clock = SettableClock()
    store = PostgresMemoryStore(engine, clock=clock)
    ids: dict[str, list[str]] = {ref: [] for ref in refs}
    for n in range(count):
        clock.value = due_from + timedelta(seconds=window_s * n / count) - REMIND_AFTER
        ref = refs[n % len(refs)]
        entry = await store.put(ref, NewMemoryEntry(content=f"Remind me in 5 days to call {n}"))
        ids[ref].append(entry.id)
    return ids


async def infer_all(
    client: Client,
    task_queue: str,
    refs: Sequence[str],
    ids_by_ref: dict[str, list[str]] | None = None,
    runs: list[str] | None = None,
    count_deferred: bool = False,
) -> tuple[int, float]:
    """One CommitmentInferenceWorkflow per ref (20 at a time): from the watermark, or,
    for back-dated entries the watermark has passed, on demand by their ids. Appends
    the runs' workflow ids to ``runs``."""
    gate = asyncio.Semaphore(20)
    started = time.perf_counter()

    async def one(ref: str) -> int:
        ids = tuple(ids_by_ref[ref]) if ids_by_ref is not None else None
        workflow_id = f"bench-infer-{uuid.uuid4().hex[:8]}"
        if runs is not None:
            runs.append(workflow_id)
        async with gate:
            result = await client.execute_workflow(
                CommitmentInferenceWorkflow.run,
                CommitmentInferenceInput(
                    memory_ref=parse_memory_ref(ref), memory_ids=ids, enqueue_runs=False
                ),
                id=workflow_id,
                task_queue=task_queue,
            )
            # Armed: started, or held for the memoryRef's horizon run (``deferred`` counts
            # every commitment of the memoryRef waiting for it, so only the first pass
            # over fresh memoryRefs, the far one, adds it).
            return result.armed.started + (result.armed.deferred if count_deferred else 0)

    armed = sum(await asyncio.gather(*(one(ref) for ref in refs)))
    return armed, time.perf_counter() - started


async def arming_split(client: Client, runs: Sequence[str]) -> dict[str, float]:
    """Seconds the inference runs spent in each activity (started to completed, summed
    over runs) and in all (the runs' spans, summed): where arming time goes."""
    split: dict[str, float] = {"workflow_total": 0.0}
    for workflow_id in runs:
        events = [e async for e in client.get_workflow_handle(workflow_id).fetch_history_events()]
        at = {e.event_id: e.event_time.ToDatetime() for e in events}
        names = {
            e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
            for e in events
            if e.HasField("activity_task_scheduled_event_attributes")
        }
        for e in events:
            if e.HasField("activity_task_completed_event_attributes"):
                done = e.activity_task_completed_event_attributes
                name = names[done.scheduled_event_id]
                took = (at[e.event_id] - at[done.started_event_id]).total_seconds()
                split[name] = split.get(name, 0.0) + took
        split["workflow_total"] += (
            at[events[-1].event_id] - at[events[0].event_id]
        ).total_seconds()
    return {name: round(seconds, 1) for name, seconds in split.items()}


async def horizon_runs_waiting(client: Client, refs: Sequence[str]) -> int:
    """How many of ``refs`` have their CommitmentHorizonWorkflow running."""
    waiting = 0
    for ref in refs:
        description = await client.get_workflow_handle(PLAIN.commitment_horizon(ref)).describe()
        waiting += description.status == WorkflowExecutionStatus.RUNNING
    return waiting


async def unstarted_far(engine: AsyncEngine, after: datetime) -> int:
    commitments = tables.commitments
    async with engine.connect() as connection:
        query = select(func.count()).where(
            commitments.c.state == "armed",
            commitments.c.armed_at.is_(None),
            commitments.c.next_at > after,
        )
        return int((await connection.execute(query)).scalar_one())


async def horizon_pass(
    client: Client, store: PostgresMemoryStore, queue: str, refs: Sequence[str], as_of: datetime
) -> tuple[int, float]:
    """The pass each memoryRef's horizon run makes 12 h before the far instants: the
    arming activity as of then (20 memoryRefs at once), starting their held-back runs."""
    activities = CommitmentActivities(store.commitments, client, queue)
    gate = asyncio.Semaphore(20)
    started = time.perf_counter()

    async def one(ref: str) -> int:
        request = ArmCommitmentsRequest(
            memory_ref=parse_memory_ref(ref), from_horizon=True, as_of=as_of
        )
        async with gate:
            report = await ActivityEnvironment().run(activities.arm_commitments, request)
        return report.started

    total = sum(await asyncio.gather(*(one(ref) for ref in refs)))
    return total, time.perf_counter() - started


# ------------------------------------------------------------ measuring


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def ledger(engine: AsyncEngine) -> list[Any]:
    claims = tables.occurrences
    query = select(claims.c.commitment_id, claims.c.due_at, claims.c.claimed_at, claims.c.outcome)
    async with engine.connect() as connection:
        return list((await connection.execute(query)).all())


async def fired_events(engine: AsyncEngine) -> dict[str, int]:
    ev = tables.events
    cid = ev.c.payload["commitmentId"].astext
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(cid, func.count()).where(ev.c.type == "commitment.fired").group_by(cid)
        )
        return {row[0]: row[1] for row in rows}


async def wait_for_fires(engine: AsyncEngine, expected: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if len(await ledger(engine)) >= expected:
            return
        await asyncio.sleep(2)


async def run(plan: Plan, option: str = PER_COMMITMENT) -> dict[str, Any]:
    report: dict[str, Any] = {"plan": plan.__dict__, "option": option}
    async with (
        bench_server("commitments-bench") as server,
        fresh_database(server, "commitments") as url,
    ):
        database_url = url.render_as_string(hide_password=False)
        engine = create_engine(database_url)
        await migrate(engine)
        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter,
            dev_server_existing_path=temporal_cli(),
            search_attributes=list(search_attributes.ALL),
        )
        try:
            report.update(await _measure(plan, engine, env, database_url, option))
        finally:
            await env.shutdown()
            await engine.dispose()
    return report


async def _measure(
    plan: Plan, engine: AsyncEngine, env: WorkflowEnvironment, database_url: str, option: str
) -> dict[str, Any]:
    client = env.client
    print(f"baseline: {plan.ceiling_workflows:,} one-activity workflows at once", flush=True)
    ceiling = await dev_server_ceiling(client, plan.ceiling_workflows)
    print(f"  dev server ceiling: {ceiling:.1f} workflows/s", flush=True)
    starts = await start_ceiling(client, plan.ceiling_workflows * 2)
    print(f"  dev server start ceiling: {starts:.0f} delayed starts/s", flush=True)

    refs = [f"mem://bench-t{n:03d}/agent" for n in range(plan.tenants)]
    queue = f"commitments-{uuid.uuid4().hex[:6]}"
    address = client.service_client.config.target_host
    state = Path(tempfile.mkdtemp(prefix="commitments-bench-"))
    worker = WorkerProcess(address, database_url, queue, state)
    timer_queue = f"ref-timers-{uuid.uuid4().hex[:6]}"
    store = PostgresMemoryStore(engine)

    far_runs: list[str] = []
    due_runs: list[str] = []

    async def arm(
        ids_by_ref: dict[str, list[str]] | None = None, *, runs: list[str]
    ) -> tuple[int, float]:
        if option == PER_COMMITMENT:
            return await infer_all(client, queue, refs, ids_by_ref, runs, ids_by_ref is None)
        started = time.perf_counter()
        armed = await infer_and_arm_per_ref(client, store, refs, timer_queue, queue, ids_by_ref)
        return armed, time.perf_counter() - started

    # The per-memoryRef prototype's timer workflows run in this process; their FIRE
    # activities run on the real worker's queue.
    timers = Worker(client, task_queue=timer_queue, workflows=[RefTimersWorkflow])
    try:
        await worker.ready()
        if option == PER_REF:
            await timers.__aenter__()
        far = plan.armed - plan.due
        print(f"arming {far:,} commitments due in 5 days", flush=True)
        await write_far_entries(engine, refs, far)
        armed_far, far_s = await arm(runs=far_runs)
        print(f"  {armed_far:,} armed in {far_s:.1f} s ({armed_far / far_s:.0f}/s)", flush=True)
        # Writing one back-dated entry at a time runs at 100-200/s here, arming at the rate
        # just measured: the window opens once both are done.
        lead = timedelta(seconds=plan.margin_s + plan.due / 50 + plan.due / (armed_far / far_s))
        window_start = datetime.now(UTC) + lead
        print(
            f"arming {plan.due:,} commitments due within {plan.window_s} s from "
            f"{window_start:%H:%M:%S}",
            flush=True,
        )
        due_ids = await write_due_entries(engine, refs, plan.due, window_start, plan.window_s)
        armed_due, due_s = await arm(due_ids, runs=due_runs)
        print(f"  {armed_due:,} armed in {due_s:.1f} s ({armed_due / due_s:.0f}/s)", flush=True)
        armed, arm_s = armed_far + armed_due, far_s + due_s
        if datetime.now(UTC) > window_start:
            print("  warning: arming ran into the window; lateness includes it", flush=True)
        wait_s = (window_start - datetime.now(UTC)).total_seconds() + plan.window_s
        print(f"waiting {wait_s:.0f} s for the window to pass", flush=True)
        await wait_for_fires(engine, plan.due, time.monotonic() + wait_s + 180)
        await asyncio.sleep(5)  # anything firing twice would land now
        peak_rss, high_water = worker.peak_rss_mb, worker.high_water_mb()
        horizon: dict[str, Any] = {}
        if option == PER_COMMITMENT:
            far_after = window_start + timedelta(seconds=plan.window_s)
            horizon["waiting_runs"] = await horizon_runs_waiting(client, refs)
            horizon["unstarted_before"] = await unstarted_far(engine, far_after)
            as_of = datetime.now(UTC) + REMIND_AFTER - ARM_HORIZON / 2
            print("horizon pass: arming the far ones as of 12 h before them", flush=True)
            passed, pass_s = await horizon_pass(client, store, queue, refs, as_of)
            print(f"  {passed:,} started in {pass_s:.1f} s ({passed / pass_s:.0f}/s)", flush=True)
            horizon.update(
                started=passed,
                pass_per_s=round(passed / pass_s, 1),
                unstarted_after=await unstarted_far(engine, far_after),
            )
    finally:
        if option == PER_REF:
            await timers.__aexit__(None, None, None)
        worker.stop()
        shutil.rmtree(state, ignore_errors=True)

    claims = await ledger(engine)
    events = await fired_events(engine)
    window_end = window_start + timedelta(seconds=plan.window_s)
    due_claims = [c for c in claims if c.due_at <= window_end]
    fired = [c for c in due_claims if c.outcome == "fired"]
    lateness = [(c.claimed_at - c.due_at).total_seconds() for c in fired]
    claimed_times = sorted(c.claimed_at for c in fired)
    span = (claimed_times[-1] - claimed_times[0]).total_seconds() if len(fired) > 1 else 0.0
    per_commitment = [events.get(c.commitment_id, 0) for c in due_claims]
    async with engine.connect() as connection:
        commitments = tables.commitments
        states: dict[str, int] = dict(
            (
                await connection.execute(
                    select(commitments.c.state, func.count()).group_by(commitments.c.state)
                )
            ).all()
        )
    rate = len(fired) / span if span else 0.0
    # Every tenth fired one (200 of the full run's 2,000), spread over the window.
    sample = [Claim(c.commitment_id, c.due_at, c.claimed_at) for c in fired[::10]]
    hops = await lateness_hops(client, sample) if option == PER_COMMITMENT else {}
    split_far = await arming_split(client, far_runs)
    split_due = await arming_split(client, due_runs)
    result = {
        "armed": armed,
        "arm_rate_per_s": round(armed / arm_s, 1),
        "arm_far_per_s": round(armed_far / far_s, 1),
        "arm_due_per_s": round(armed_due / due_s, 1),
        "due": plan.due,
        "fired": len(fired),
        "missed": sum(1 for c in due_claims if c.outcome == "missed"),
        "fired_twice": sum(1 for n in per_commitment if n > 1),
        "events": sum(events.values()),
        "not_fired": plan.due - len(due_claims),
        "fired_early_or_far": len(claims) - len(due_claims),
        "lateness_p50_s": round(percentile(lateness, 0.5), 3) if lateness else None,
        "lateness_p99_s": round(percentile(lateness, 0.99), 3) if lateness else None,
        "lateness_max_s": round(max(lateness), 3) if lateness else None,
        "lateness_mean_s": round(statistics.fmean(lateness), 3) if lateness else None,
        "fires_per_s": round(rate, 1),
        "arrival_per_s": round(plan.due / plan.window_s, 1),
        "ceiling_workflows_per_s": round(ceiling, 1),
        "fires_to_ceiling": round(rate / ceiling, 2) if ceiling else None,
        "start_ceiling_per_s": round(starts, 1),
        "arming_to_start_ceiling": round(armed / arm_s / starts, 2),
        "worker_peak_rss_mb": round(peak_rss, 1),
        "worker_high_water_mb": round(high_water, 1),
        "states": states,
        "lateness_hops_s": hops,
        # Seconds summed over the inference runs (20 run at once), far and due passes.
        "arming_split_s": {"far": split_far, "due": split_due},
        "horizon": horizon,
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }
    result["pass"] = (
        result["fired"] == plan.due
        and result["fired_twice"] == 0
        and result["events"] == plan.due
        and result["fired_early_or_far"] == 0
    )
    if option == PER_COMMITMENT:
        far = plan.armed - plan.due
        result["pass"] = result["pass"] and horizon == {
            **horizon,
            "waiting_runs": plan.tenants,
            "unstarted_before": far,
            "started": far,
            "unstarted_after": 0,
        }
    return result


def print_report(report: dict[str, Any]) -> None:
    rows = [
        ("option", report["option"]),
        (
            "armed commitments",
            f"{report['armed']:,} ({report['arm_rate_per_s']}/s to arm: far ones "
            f"{report['arm_far_per_s']}/s, due ones {report['arm_due_per_s']}/s)",
        ),
        ("due in the window", f"{report['due']:,}"),
        ("fired exactly once", f"{report['fired']:,} ({report['fired_twice']} twice)"),
        ("commitment.fired events", f"{report['events']:,}"),
        ("missed / not fired", f"{report['missed']} / {report['not_fired']}"),
        ("fired early (far ones)", f"{report['fired_early_or_far']}"),
        (
            "lateness p50 / p99 / max",
            f"{report['lateness_p50_s']} / {report['lateness_p99_s']} / "
            f"{report['lateness_max_s']} s",
        ),
        (
            "sustained fires/s",
            f"{report['fires_per_s']} (arrivals {report['arrival_per_s']}/s)",
        ),
        (
            "dev server ceiling (baseline)",
            f"{report['ceiling_workflows_per_s']} one-activity workflows/s; "
            f"fires/ceiling {report['fires_to_ceiling']}",
        ),
        (
            "dev server start ceiling",
            f"{report['start_ceiling_per_s']} delayed starts/s; arming/ceiling "
            f"{report['arming_to_start_ceiling']}",
        ),
        (
            "worker peak RSS",
            f"{report['worker_peak_rss_mb']} MB sampled, {report['worker_high_water_mb']} MB "
            "high-water",
        ),
    ]
    for label, value in rows:
        print(f"  {label:<32} {value}")
    for hop, figures in report["lateness_hops_s"].items():
        print(
            f"    {hop:<30} min {figures['min']} / p50 {figures['p50']} / p99 {figures['p99']}"
            f" / max {figures['max']} s"
            f" (n={figures['n']:.0f})"
        )
    if horizon := report["horizon"]:
        print(
            f"  {'horizon runs waiting':<32} {horizon['waiting_runs']} "
            f"({horizon['unstarted_before']:,} far commitments without a workflow)"
        )
        print(
            f"  {'horizon pass (12 h before)':<32} {horizon['started']:,} started at "
            f"{horizon['pass_per_s']}/s; {horizon['unstarted_after']} left"
        )
    for phase, split in report["arming_split_s"].items():
        print(f"  {'arming ' + phase + ' (run-seconds)':<32} {split}")
    print(f"  {'load average (1/5/15 min)':<32} {report['load_average']}")
    print("PASS" if report["pass"] else "FAIL")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1,000 armed, 200 due in 30 s")
    parser.add_argument("--smoke", action="store_true", help="60 armed, 20 due in 5 s")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument(
        "--option",
        choices=(PER_COMMITMENT, PER_REF),
        default=PER_COMMITMENT,
        help="the product's path (default) or the per-memoryRef timer prototype",
    )
    args = parser.parse_args()
    plan, label = (
        (SMOKE, "-smoke") if args.smoke else (QUICK, "-quick") if args.quick else (FULL, "")
    )
    report = asyncio.run(run(plan, args.option))
    print_report(report)
    target = args.json or RESULTS / f"commitments{label}.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"wrote {target}")
    if not report["pass"]:
        raise SystemExit(1)


if __name__ == "__main__":
    cli()
