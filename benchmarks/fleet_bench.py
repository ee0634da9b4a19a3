"""A fleet of agents dreamed overnight on the quick start's Temporal dev server.

    python -m benchmarks.fleet_bench [--agents 2000] [--entries 100]
                                     [--baseline-agents 200] [--ceiling 400] [--quick]
                                     [--json PATH]

What a user runs: a Temporal dev server as the quick start starts it (a database file,
our search attributes, plus --metrics-port so its own Prometheus counters can be read),
an embedded PostgreSQL, and ``--workers`` worker processes (``python worker.py``, as
users run it).
``--agents`` memoryRefs of ``--entries`` entries each (realistic notes with a few
commitment-like lines and a few exact restatements, so every step has work) are loaded
through the store's put path before anything is timed.

Measured in the same run:
1. Ceiling: ``--ceiling`` one-activity workflows started at once (the dev server's own
   limit for the lightest workflow there is).
2. The per-agent path as it shipped: a DreamWorkflow per agent for ``--baseline-agents``
   agents of their own, 50 in flight (what one schedule per memoryRef does at 23:00).
3. FleetDreamWorkflow over every agent (each agent's first dream): agents/s, Temporal
   persistence requests per agent (the dev server's ``persistence_requests`` counter),
   and the check that every agent was distilled, consolidated and inferred exactly once.
4. Half the fleet idle: a night's new notes for every other agent, then a fleet dream;
   only the busy half may cost anything (dreamed count, batches, requests), and the
   idle half's rows show no second dream.
5. An idle fleet: nothing new anywhere; the run's requests are one page read.
Then the extrapolation to 100,000 agents at the measured rate. For each timed phase the
CPU seconds per agent of the worker processes, PostgreSQL and the Temporal dev server
(from /proc) say where the time goes on this machine. Results also go to
benchmarks/results/fleet.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from benchmarks.commitments_bench import WorkerProcess, dev_server_ceiling
from benchmarks.common import bench_server, fresh_database
from benchmarks.corpus import COMPANIES, PEOPLE
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from memoryctl.dev_server import dev_server_command
from runtime.converter import data_converter
from schemas.fleet import FleetDreamInput, FleetDreamResult
from schemas.memory_entry import NewMemoryEntry
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamInput
from workflows.dream import DreamWorkflow
from workflows.fleet_dream import FleetDreamWorkflow

RESULTS = Path(__file__).with_name("results") / "fleet.json"
TARGET_AGENTS_PER_S = 28  # 100,000 agents within an hour
BASELINE_IN_FLIGHT = 50
LOAD_CONCURRENCY = 8
NOTES = [
    "{person} from {company} prefers invoices by email, not paper.",
    "Call with {person} at {company}: they want the Q3 numbers before the board meeting.",
    "{company} renewed their plan; {person} is the new billing contact.",
    "{person} mentioned {company} is moving their office next month.",
    "The {company} integration failed twice on Tuesday; {person} filed a ticket.",
    "{person} asked for the onboarding guide to be shared with {company}'s new hires.",
]
COMMITMENTS = [
    "Remind me on Friday at 9am to send {person} the contract for {company}.",
    "Follow up with {person} in 3 days about the {company} renewal.",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _notes(rng: random.Random, count: int, commitments: int) -> list[NewMemoryEntry]:
    def fill(template: str) -> str:
        return template.format(person=rng.choice(PEOPLE), company=rng.choice(COMPANIES))

    texts = [fill(rng.choice(NOTES)) + f" (note {n})" for n in range(count - commitments)]
    texts[-3:] = texts[:3]  # exact restatements: consolidation has something to merge
    texts += [fill(template) for template in rng.sample(COMMITMENTS, commitments)]
    return [NewMemoryEntry(content=text) for text in texts]


async def _load(store: PostgresMemoryStore, refs: Sequence[str], entries: int, seed: int) -> float:
    rng = random.Random(seed)
    batches = [(ref, _notes(rng, entries, 2)) for ref in refs]
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def one(ref: str, notes: list[NewMemoryEntry]) -> None:
        async with gate:
            await store.put_many(ref, notes)

    started = time.perf_counter()
    await asyncio.gather(*(one(ref, notes) for ref, notes in batches))
    return time.perf_counter() - started


def _cpu_seconds(match: str) -> float:
    """utime + stime of every process whose command line contains ``match``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if match not in command:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return total


class CpuMeter:
    """CPU seconds spent by the workers, PostgreSQL and the dev server between two reads."""

    PARTS = {"workers": "worker.py", "postgres": "postgres", "temporal": "start-dev"}

    def read(self) -> dict[str, float]:
        return {part: _cpu_seconds(match) for part, match in self.PARTS.items()}

    @staticmethod
    def per_agent(
        before: dict[str, float], after: dict[str, float], agents: int
    ) -> dict[str, float]:
        return {
            part: round((after[part] - before[part]) / max(agents, 1) * 1000, 1) for part in before
        }


class DevServer:
    """The quick start's dev server (memoryctl/dev_server.py), headless, with metrics."""

    def __init__(self, state: Path) -> None:
        self.port, self.metrics_port = _free_port(), _free_port()
        command = dev_server_command(state, self.port, None)
        command += ["--metrics-port", str(self.metrics_port)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    async def client(self) -> Client:
        for _ in range(300):
            try:
                return await Client.connect(f"127.0.0.1:{self.port}", data_converter=data_converter)
            except RuntimeError:
                await asyncio.sleep(0.1)
        raise RuntimeError("the dev server did not start")

    def persistence_requests(self) -> float:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
        pattern = re.compile(r"^persistence_requests(?:_total)?(?:\{[^}]*\})? ([0-9.e+]+)$")
        return sum(float(m.group(1)) for line in body.splitlines() if (m := pattern.match(line)))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


async def _fleet(
    client: Client,
    queue: str,
    server: DevServer,
    label: str,
    cpu: dict[str, Any],
    options: FleetDreamInput,
) -> tuple[FleetDreamResult, float, float]:
    meter = CpuMeter()
    cpu_before = meter.read()
    before = server.persistence_requests()
    started = time.perf_counter()
    result: FleetDreamResult = await client.execute_workflow(
        FleetDreamWorkflow.run,
        options,
        id=f"fleet-{label}-{uuid.uuid4().hex[:6]}",
        task_queue=queue,
    )
    seconds = time.perf_counter() - started
    cpu.update(CpuMeter.per_agent(cpu_before, meter.read(), result.progress.dreamed))
    return result, seconds, server.persistence_requests() - before


async def _per_agent_dreams(
    client: Client, queue: str, server: DevServer, refs: Sequence[str]
) -> tuple[float, float]:
    gate = asyncio.Semaphore(BASELINE_IN_FLIGHT)

    async def one(ref: str) -> None:
        async with gate:
            await client.execute_workflow(
                DreamWorkflow.run,
                DreamInput(memory_ref=ref, token_budget=8000),
                id=f"dream-{uuid.uuid4().hex[:10]}",
                task_queue=queue,
            )

    before = server.persistence_requests()
    started = time.perf_counter()
    await asyncio.gather(*(one(ref) for ref in refs))
    return time.perf_counter() - started, server.persistence_requests() - before


async def _dreams_per_ref(engine: AsyncEngine, refs: Sequence[str]) -> dict[str, list[int]]:
    """Per ref: distillations (memory.compacted events), consolidation passes, and
    whether inference recorded its watermark."""
    query = text(
        "SELECT r.ref,"
        " (SELECT count(*) FROM memory_events e"
        "   WHERE e.memory_ref = r.ref AND e.type = 'memory.compacted'),"
        " (SELECT count(*) FROM consolidation_passes p WHERE p.memory_ref = r.ref),"
        " (SELECT count(*) FROM commitment_watermarks w WHERE w.memory_ref = r.ref)"
        " FROM unnest(CAST(:refs AS text[])) AS r(ref)"
    )
    async with engine.connect() as connection:
        rows = (await connection.execute(query, {"refs": list(refs)})).all()
    return {row[0]: [int(row[1]), int(row[2]), int(row[3])] for row in rows}


def _exactly(counts: dict[str, list[int]], refs: Sequence[str], expected: list[int]) -> int:
    """How many of ``refs`` do not show exactly ``expected``."""
    return sum(counts[ref] != expected for ref in refs)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    fleet_refs = [f"mem://fleet-t{n % 20:02d}/agent-{n:05d}" for n in range(args.agents)]
    baseline_refs = [f"mem://baseline-t0/agent-{n:05d}" for n in range(args.baseline_agents)]
    report: dict[str, Any] = {"agents": args.agents, "entries_per_agent": args.entries}
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as state:
        server = DevServer(Path(state))
        try:
            async with (
                bench_server("fleet-bench") as pg,
                fresh_database(pg, "fleet") as url,
            ):
                engine = create_engine(url.render_as_string(hide_password=False), pool_size=20)
                await migrate(engine)
                store = PostgresMemoryStore(engine)
                try:
                    client = await server.client()
                    report.update(
                        await _measure(
                            args,
                            client,
                            server,
                            store,
                            engine,
                            url.render_as_string(hide_password=False),
                            fleet_refs,
                            baseline_refs,
                        )
                    )
                finally:
                    await engine.dispose()
        finally:
            server.stop()
    return report


async def _measure(
    args: argparse.Namespace,
    client: Client,
    server: DevServer,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    database_url: str,
    fleet_refs: list[str],
    baseline_refs: list[str],
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    print(f"loading {len(fleet_refs) + len(baseline_refs):,} agents x {args.entries} entries")
    report["load_s"] = await _load(store, fleet_refs + baseline_refs, args.entries, seed=7)
    print(f"  loaded in {report['load_s']:.1f} s", flush=True)

    ceiling = await dev_server_ceiling(client, args.ceiling)
    report["ceiling_workflows_per_s"] = ceiling
    print(f"ceiling: {ceiling:.1f} one-activity workflows/s", flush=True)

    queue = f"fleet-{uuid.uuid4().hex[:6]}"
    state = Path(tempfile.mkdtemp(prefix="fleet-workers-"))
    workers = [
        WorkerProcess(f"127.0.0.1:{server.port}", database_url, queue, state)
        for _ in range(args.workers)
    ]
    report["workers"] = args.workers
    try:
        for worker in workers:
            await worker.ready()
        options = FleetDreamInput(batch_size=args.batch_size, concurrency=args.concurrency)
        report["fleet_options"] = options.model_dump(mode="json", by_alias=True)
        phases = await _phases(
            client, queue, server, store, engine, fleet_refs, baseline_refs, options
        )
    finally:
        for worker in workers:
            worker.stop()
    report.update(phases)
    per_agent, first = phases["per_agent_dream_workflows"], phases["fleet_first_dream"]
    rate = first["agents_per_s"]
    report["extrapolated_100k_hours"] = 100_000 / rate / 3600
    report["per_agent_100k_hours"] = 100_000 / per_agent["agents_per_s"] / 3600
    verdict = "PASS" if rate >= TARGET_AGENTS_PER_S else "FAIL"
    print(
        f"100,000 agents: {report['extrapolated_100k_hours']:.2f} h at {rate:.1f} agents/s "
        f"(per-agent path: {report['per_agent_100k_hours']:.1f} h); target "
        f">= {TARGET_AGENTS_PER_S} agents/s: {verdict}",
        flush=True,
    )
    return report


async def _phases(
    client: Client,
    queue: str,
    server: DevServer,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    fleet_refs: list[str],
    baseline_refs: list[str],
    options: FleetDreamInput,
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    seconds, requests = await _per_agent_dreams(client, queue, server, baseline_refs)
    per_agent_seconds = seconds
    per_agent = {
        "agents": len(baseline_refs),
        "seconds": seconds,
        "agents_per_s": len(baseline_refs) / seconds,
        "requests_per_agent": requests / len(baseline_refs),
    }
    report["per_agent_dream_workflows"] = per_agent
    print(
        f"per-agent DreamWorkflow ({BASELINE_IN_FLIGHT} in flight): "
        f"{per_agent['agents_per_s']:.1f} agents/s, "
        f"{per_agent['requests_per_agent']:.0f} persistence requests/agent",
        flush=True,
    )
    # A per-agent dream does not record the fleet's mark: these agents were dreamed.
    for ref in baseline_refs:
        parsed = parse_memory_ref(ref)
        await store.fleet_selection.mark_dreamed(
            parsed, await store.fleet_selection.work_seq(parsed)
        )

    cpu: dict[str, Any] = {}
    result, seconds, requests = await _fleet(client, queue, server, "first", cpu, options)
    counts = await _dreams_per_ref(engine, fleet_refs)
    first = {
        "seconds": seconds,
        "dreamed": result.progress.dreamed,
        "failed": result.progress.failed,
        "batches": result.progress.batches,
        "agents_per_s": result.progress.dreamed / seconds,
        "requests_per_agent": requests / max(result.progress.dreamed, 1),
        "cpu_ms_per_agent": cpu,
        "not_exactly_once": _exactly(counts, fleet_refs, [1, 1, 1]),
    }
    report["fleet_first_dream"] = first
    speedup = (result.progress.dreamed / seconds) / (len(baseline_refs) / per_agent_seconds)
    print(
        f"fleet, every agent new: {first['dreamed']:,} dreamed in {seconds:.1f} s = "
        f"{first['agents_per_s']:.1f} agents/s ({speedup:.1f}x the per-agent path); "
        f"{first['requests_per_agent']:.1f} requests/agent "
        f"(per-agent path {per_agent['requests_per_agent']:.0f}); CPU ms/agent {cpu}; "
        f"{first['not_exactly_once']} agents not distilled+consolidated+inferred exactly once",
        flush=True,
    )

    busy, idle = fleet_refs[::2], fleet_refs[1::2]
    rng = random.Random(11)
    for ref in busy:
        await store.put_many(ref, _notes(rng, 10, 1))
    cpu = {}
    result, seconds, requests = await _fleet(client, queue, server, "half-idle", cpu, options)
    counts = await _dreams_per_ref(engine, fleet_refs)
    half = {
        "seconds": seconds,
        "busy": len(busy),
        "dreamed": result.progress.dreamed,
        "batches": result.progress.batches,
        "agents_per_s": result.progress.dreamed / seconds,
        "requests_per_busy_agent": requests / max(len(busy), 1),
        "cpu_ms_per_agent": cpu,
        "idle_dreamed_again": _exactly(counts, idle, [1, 1, 1]),
        "busy_not_dreamed_once_more": _exactly(counts, busy, [2, 2, 1]),
    }
    report["fleet_half_idle"] = half
    print(
        f"fleet, half idle (a night's 10 new notes each): {half['dreamed']:,} of "
        f"{len(busy):,} busy dreamed in {seconds:.1f} s = {half['agents_per_s']:.1f} agents/s, "
        f"{half['batches']} batches, {half['requests_per_busy_agent']:.1f} requests/busy agent, "
        f"CPU ms/agent {cpu}; idle agents dreamed again: {half['idle_dreamed_again']}; "
        f"busy agents not dreamed exactly once more: {half['busy_not_dreamed_once_more']}",
        flush=True,
    )

    cpu = {}
    result, seconds, requests = await _fleet(client, queue, server, "idle", cpu, options)
    report["fleet_idle"] = {
        "seconds": seconds,
        "dreamed": result.progress.dreamed,
        "batches": result.progress.batches,
        "requests": requests,
    }
    print(
        f"fleet, all idle: {result.progress.dreamed} dreamed, {result.progress.batches} "
        f"batches, {requests:.0f} persistence requests in {seconds:.2f} s",
        flush=True,
    )
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--baseline-agents", type=int, default=200)
    parser.add_argument("--ceiling", type=int, default=400)
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    defaults = FleetDreamInput()
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument(
        "--concurrency", type=int, default=defaults.concurrency, help="batches in flight"
    )
    parser.add_argument("--quick", action="store_true", help="200 agents, 50 baseline")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.agents, args.baseline_agents, args.ceiling = 200, 50, 100
    report = asyncio.run(run(args))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
