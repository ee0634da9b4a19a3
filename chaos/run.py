"""One chaos run: start the real parts, stream operations of every kind at the product
while SIGKILLing workers at seeded random moments (and restarting PostgreSQL and the
Temporal server along the way), then wait for every workflow and check that nothing was
applied twice, lost or left half-written.

Everything random comes from one ``random.Random(seed)``; the seed is printed first,
so a failing run replays with ``python -m chaos --seed N``. (The kill moments replay,
the operating system's scheduling does not.)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.client import Client

from chaos import checks
from chaos.cluster import Postgres, TemporalServer, WorkerPool, worker_env
from chaos.operations import (
    Commitments,
    Consolidation,
    Context,
    Distillation,
    Forget,
    Operation,
    Verdict,
    retrying,
)
from chaos.proposals import Proposals
from memory.storage.engines import create_engine, migrate
from runtime.converter import data_converter

KINDS = ("distillation", "consolidation", "commitments", "forget", "proposals")


@dataclass(frozen=True)
class Plan:
    kills: int
    workers: int = 2
    # Seconds between kills, drawn uniformly.
    kill_gap: tuple[float, float] = (0.4, 2.0)
    # An operation starts every this many seconds (uniform) while kills go on.
    operation_gap: tuple[float, float] = (0.2, 0.8)
    # At most this many operations at once: the feeder waits for room, so a long run
    # keeps a steady load instead of a backlog that grows with every worker restart.
    max_in_flight: int = 16
    # Restart PostgreSQL / the Temporal server after every this many kills (0: never).
    postgres_every: int = 0
    temporal_every: int = 0
    drain_seconds: float = 120


CI = Plan(kills=24, postgres_every=10, temporal_every=16)
SOAK = Plan(kills=500, postgres_every=50, temporal_every=125, drain_seconds=600)


@dataclass
class Report:
    seed: int
    kills: int = 0
    cli_kills: int = 0
    postgres_restarts: int = 0
    temporal_restarts: int = 0
    worker_self_exits: int = 0
    kills_during: Counter[str] = field(default_factory=Counter)
    operations: Counter[str] = field(default_factory=Counter)
    completed: Counter[str] = field(default_factory=Counter)
    verdict: Verdict = field(default_factory=Verdict)
    store: dict[str, list[str]] = field(default_factory=dict)
    elapsed_s: float = 0.0
    workflows_completed: int = 0

    @property
    def workflows_failed(self) -> int:
        return sum(self.operations.values()) - sum(self.completed.values())

    @property
    def ok(self) -> bool:
        return (
            not self.workflows_failed
            and not self.verdict.problems
            and not any(self.store.values())
            # A worker must survive a database or server restart by itself; the pool
            # replaces one that exits, which would otherwise hide the defect.
            and not self.worker_self_exits
            and self.kills + self.cli_kills > 0
        )

    def lines(self) -> list[str]:
        total_ops = sum(self.operations.values())
        store_problems = sum(len(v) for v in self.store.values())
        return [
            f"seed: {self.seed}",
            f"kills: {self.kills} worker SIGKILLs + {self.cli_kills} forget-CLI SIGKILLs; "
            f"PostgreSQL restarts: {self.postgres_restarts}; Temporal server restarts: "
            f"{self.temporal_restarts}; workers that exited by themselves: "
            f"{self.worker_self_exits}",
            "kills while in flight: "
            + ", ".join(f"{kind} {self.kills_during[kind]}" for kind in KINDS),
            "operations: " + ", ".join(f"{kind} {self.operations[kind]}" for kind in KINDS),
            f"operations completed (every workflow each started returned): "
            f"{sum(self.completed.values())}/{total_ops}",
            f"workflows completed: {self.workflows_completed}",
            f"duplicates: {self.verdict.duplicates}",
            f"losses: {self.verdict.losses}",
            f"partial archives: {len(self.store.get('archives', []))}",
            f"partial forgets: {self.verdict.partial}",
            f"event gaps: {len(self.store.get('event gaps', []))}",
            f"dangling lineage: {len(self.store.get('lineage', []))}",
            f"store problems: {store_problems}",
            f"elapsed: {self.elapsed_s:.0f} s",
            "RESULT: " + ("ok" if self.ok else "FAILED"),
        ]


class Chaos:
    def __init__(self, plan: Plan, seed: int, state: Path, say: Callable[[str], None]) -> None:
        self.plan = plan
        self.rng = random.Random(seed)
        self.report = Report(seed=seed)
        self.state = state
        self.say = say
        self.in_flight: Counter[str] = Counter()
        self.operations: list[Operation] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def run(self) -> Report:
        # SIGTERM (a CI timeout, `kill`) cancels the run like Ctrl-C does, so the
        # servers and workers it started are stopped on the way out.
        main = asyncio.current_task()
        if main is not None:
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        started = time.perf_counter()
        postgres = Postgres(self.state)
        temporal = TemporalServer(self.state)
        pool: WorkerPool | None = None
        try:
            database = f"chaos_{uuid.uuid4().hex[:8]}"
            admin = create_async_engine(postgres.url("postgres"), isolation_level="AUTOCOMMIT")
            async with admin.connect() as connection:
                await connection.exec_driver_sql(f'CREATE DATABASE "{database}"')
            await admin.dispose()
            url = postgres.url(database)
            engine = create_engine(url, pool_size=8)
            await migrate(engine)
            await temporal.start()
            task_queue = f"chaos-{uuid.uuid4().hex[:6]}"
            env = worker_env(temporal.address, url, task_queue, self.state)
            (self.state / "workers").mkdir(exist_ok=True)
            pool = WorkerPool(self.plan.workers, env, self.state / "workers", self.rng)
            pool.start()
            client = await Client.connect(temporal.address, data_converter=data_converter)
            context = Context(client, engine, task_queue, env, self.rng, self._cli_killed)
            context.expected_survivors = await self._control(context)
            self.say(f"fault-free consolidation keeps {context.expected_survivors} of the corpus")
            await self._chaos(context, pool, postgres, temporal)
            self.say("kills done; waiting for every workflow to finish")
            await self._drain()
            await self._verify(context)
            self.report.workflows_completed = context.workflows_completed
            await engine.dispose()
        finally:
            if pool is not None:
                self.report.worker_self_exits = pool.self_exits
                pool.stop()
            temporal.kill()
            postgres.stop()
        self.report.elapsed_s = time.perf_counter() - started
        return self.report

    async def _control(self, context: Context) -> int:
        control = Consolidation(-1)
        await control.prepare(context)
        await control.run(context)
        return await control.survivors(context)

    def _cli_killed(self) -> None:
        self.report.cli_kills += 1
        self.report.kills_during["forget"] += 1

    async def _chaos(
        self, context: Context, pool: WorkerPool, postgres: Postgres, temporal: TemporalServer
    ) -> None:
        stop = asyncio.Event()
        feeder = asyncio.create_task(self._feed(context, stop))
        # Let the first operations get going before the first kill.
        await asyncio.sleep(2)
        for kill in range(1, self.plan.kills + 1):
            await asyncio.sleep(self.rng.uniform(*self.plan.kill_gap))
            pool.replace_exited()
            for kind in KINDS:
                if self.in_flight[kind]:
                    self.report.kills_during[kind] += 1
            pool.kill_one()
            self.report.kills = pool.kills
            if self.plan.postgres_every and kill % self.plan.postgres_every == 0:
                await postgres.restart()
                self.report.postgres_restarts += 1
                self.say(f"kill {kill}: PostgreSQL restarted (immediate stop)")
            if self.plan.temporal_every and kill % self.plan.temporal_every == 0:
                await temporal.restart()
                self.report.temporal_restarts += 1
                self.say(f"kill {kill}: Temporal server SIGKILLed and restarted")
            if kill % 10 == 0 or kill == self.plan.kills:
                flight = ", ".join(f"{k} {n}" for k, n in self.in_flight.items() if n)
                self.say(f"kill {kill}/{self.plan.kills} (in flight: {flight or 'nothing'})")
        stop.set()
        await feeder
        pool.replace_exited()

    async def _feed(self, context: Context, stop: asyncio.Event) -> None:
        number = 0
        while not stop.is_set():
            if sum(self.in_flight.values()) >= self.plan.max_in_flight:
                await asyncio.sleep(0.1)
                continue
            kind = KINDS[number % len(KINDS)]
            operation = self._make(kind, number)
            number += 1
            self.operations.append(operation)
            self.report.operations[kind] += 1
            self.in_flight[kind] += 1
            self.tasks.append(asyncio.create_task(self._perform(context, operation)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.rng.uniform(*self.plan.operation_gap))

    def _make(self, kind: str, number: int) -> Operation:
        if kind == "distillation":
            return Distillation(number)
        if kind == "consolidation":
            return Consolidation(number)
        if kind == "commitments":
            return Commitments(
                number, [self.rng.uniform(2, 8) for _ in range(Commitments.REMINDERS)]
            )
        if kind == "proposals":
            return Proposals(number)
        return Forget(number)

    async def _perform(self, context: Context, operation: Operation) -> None:
        try:
            await operation.prepare(context)
            await operation.run(context)
            self.report.completed[operation.kind] += 1
        except Exception as error:  # reported, and the run fails
            self.report.verdict.problems.append(
                f"{operation.ref}: {type(error).__name__}: {str(error)[:200]}"
            )
        finally:
            self.in_flight[operation.kind] -= 1

    async def _drain(self) -> None:
        _, pending = await asyncio.wait(self.tasks, timeout=self.plan.drain_seconds)
        for task in pending:
            task.cancel()
        if pending:
            self.report.verdict.problems.append(
                f"{len(pending)} operations still running after {self.plan.drain_seconds:.0f} s"
            )

    async def _verify(self, context: Context) -> None:
        for operation in self.operations:
            self.report.verdict.add(await operation.verify(context))
        needles = [n for op in self.operations if isinstance(op, Forget) for n in op.needles()]
        self.report.store = await retrying(lambda: checks.store_problems(context.engine))
        self.report.store["forgotten text"] = await checks.texts_anywhere(context.engine, needles)


async def chaos_run(
    plan: Plan, seed: int, say: Callable[[str], None] = print, keep: Path | None = None
) -> Report:
    """``keep``: leave the state (worker and server logs) there instead of a temp dir."""
    if keep is not None:
        await asyncio.to_thread(keep.mkdir, parents=True, exist_ok=True)
        say(f"chaos seed {seed}: {plan.kills} kills, {plan.workers} workers (state in {keep})")
        return await Chaos(plan, seed, keep, say).run()
    with tempfile.TemporaryDirectory(prefix="agent-memory-chaos-") as tmp:
        say(f"chaos seed {seed}: {plan.kills} kills, {plan.workers} workers (state in {tmp})")
        return await Chaos(plan, seed, Path(tmp), say).run()
