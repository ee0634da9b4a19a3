"""Commitments under load: 10,000 armed time commitments across 100 tenants on a local
Temporal dev server, 2,000 of them due within a two-minute window and the rest days
ahead; every due one must fire exactly once.

    python -m benchmarks.commitments_bench            # the full run (about 6 minutes)
    python -m benchmarks.commitments_bench --quick    # 1,000 armed, 200 due in 30 s

How it runs, end to end through the product's own paths:
1. Baseline in the same run: the dev server's ceiling for one-activity workflows (a
   no-op activity, started all at once, worker in this process), in workflows/s.
2. The real worker (`python worker.py`) runs as a subprocess against the same dev server
   and database, so its memory is measured alone (peak RSS, sampled every 0.5 s, and the
   kernel's high-water mark).
3. Entries ("Remind me in 5 days to ...") are written to 100 memoryRefs. The far ones
   are said now (due in 5 days) and armed first: a CommitmentInferenceWorkflow per
   memoryRef parses them and starts one CommitmentWorkflow each (durable timers). The
   due ones are then written with a back-dated creation so that "in 5 days" falls inside
   the window, and inferred on demand by id (the watermark has passed their back-dated
   time); the window opens once writing and arming them has had time to finish.
4. After the window: the ledger and the event log are read. Lateness is the ledger's
   claim time (wall clock, when the firing transaction ran) minus the due instant.

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
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from benchmarks.ceiling_workflow import OneActivityWorkflow, noop
from benchmarks.common import bench_server, fresh_database
from memory import tables
from memory.database import create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter
from schemas.commitments import CommitmentInferenceInput
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
) -> tuple[int, float]:
    """One CommitmentInferenceWorkflow per ref (20 at a time): from the watermark, or,
    for back-dated entries the watermark has passed, on demand by their ids."""
    gate = asyncio.Semaphore(20)
    started = time.perf_counter()

    async def one(ref: str) -> int:
        ids = tuple(ids_by_ref[ref]) if ids_by_ref is not None else None
        async with gate:
            result = await client.execute_workflow(
                CommitmentInferenceWorkflow.run,
                CommitmentInferenceInput(
                    memory_ref=parse_memory_ref(ref), memory_ids=ids, enqueue_runs=False
                ),
                id=f"bench-infer-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
            )
            return result.armed.started

    armed = sum(await asyncio.gather(*(one(ref) for ref in refs)))
    return armed, time.perf_counter() - started


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


async def run(plan: Plan) -> dict[str, Any]:
    report: dict[str, Any] = {"plan": plan.__dict__}
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
            report.update(await _measure(plan, engine, env, database_url))
        finally:
            await env.shutdown()
            await engine.dispose()
    return report


async def _measure(
    plan: Plan, engine: AsyncEngine, env: WorkflowEnvironment, database_url: str
) -> dict[str, Any]:
    client = env.client
    print(f"baseline: {plan.ceiling_workflows:,} one-activity workflows at once", flush=True)
    ceiling = await dev_server_ceiling(client, plan.ceiling_workflows)
    print(f"  dev server ceiling: {ceiling:.1f} workflows/s", flush=True)

    refs = [f"mem://bench-t{n:03d}/agent" for n in range(plan.tenants)]
    queue = f"commitments-{uuid.uuid4().hex[:6]}"
    address = client.service_client.config.target_host
    state = Path(tempfile.mkdtemp(prefix="commitments-bench-"))
    worker = WorkerProcess(address, database_url, queue, state)
    try:
        await worker.ready()
        far = plan.armed - plan.due
        print(f"arming {far:,} commitments due in 5 days", flush=True)
        await write_far_entries(engine, refs, far)
        armed_far, far_s = await infer_all(client, queue, refs)
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
        armed_due, due_s = await infer_all(client, queue, refs, due_ids)
        print(f"  {armed_due:,} armed in {due_s:.1f} s", flush=True)
        armed, arm_s = armed_far + armed_due, far_s + due_s
        if datetime.now(UTC) > window_start:
            print("  warning: arming ran into the window; lateness includes it", flush=True)
        wait_s = (window_start - datetime.now(UTC)).total_seconds() + plan.window_s
        print(f"waiting {wait_s:.0f} s for the window to pass", flush=True)
        await wait_for_fires(engine, plan.due, time.monotonic() + wait_s + 180)
        await asyncio.sleep(5)  # anything firing twice would land now
        peak_rss, high_water = worker.peak_rss_mb, worker.high_water_mb()
    finally:
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
    result = {
        "armed": armed,
        "arm_rate_per_s": round(armed / arm_s, 1),
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
        "worker_peak_rss_mb": round(peak_rss, 1),
        "worker_high_water_mb": round(high_water, 1),
        "states": states,
    }
    result["pass"] = (
        result["fired"] == plan.due
        and result["fired_twice"] == 0
        and result["events"] == plan.due
        and result["fired_early_or_far"] == 0
    )
    return result


def print_report(report: dict[str, Any]) -> None:
    rows = [
        ("armed commitments", f"{report['armed']:,} ({report['arm_rate_per_s']}/s to arm)"),
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
            "worker peak RSS",
            f"{report['worker_peak_rss_mb']} MB sampled, {report['worker_high_water_mb']} MB "
            "high-water",
        ),
    ]
    for label, value in rows:
        print(f"  {label:<32} {value}")
    print("PASS" if report["pass"] else "FAIL")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1,000 armed, 200 due in 30 s")
    parser.add_argument("--smoke", action="store_true", help="60 armed, 20 due in 5 s")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = parser.parse_args()
    plan, label = (
        (SMOKE, "-smoke") if args.smoke else (QUICK, "-quick") if args.quick else (FULL, "")
    )
    report = asyncio.run(run(plan))
    print_report(report)
    target = args.json or RESULTS / f"commitments{label}.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"wrote {target}")
    if not report["pass"]:
        raise SystemExit(1)


if __name__ == "__main__":
    cli()
