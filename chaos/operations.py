"""What the chaos run does to the product while it kills things: one operation per
workflow kind, each on a memoryRef of its own, each knowing what "applied exactly once"
means for it.

- distillation: 200 entries, one DistillationWorkflow; exactly one archive and one
  memory.compacted event must result.
- consolidation: a planted corpus (benchmarks/consolidation_corpus.py) whose outcome
  without faults is measured first on a control memoryRef; exactly one pass, one
  agent.memory.consolidated event and the control's survivor count must result.
- commitments: reminders due a few seconds ahead, armed by CommitmentInferenceWorkflow;
  each must be claimed once as fired (not missed), with one commitment.fired event and
  its agent run completed.
- forget: a distillation of the memoryRef races `memoryctl forget --tag` (run as the
  operator runs it, and itself SIGKILLed at random); the erasure must be all or nothing
  at every instant, and afterwards the forgotten text is in no table.
- proposals (chaos/proposals.py): a dream that proposes a weekly routine, then an apply.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError

from benchmarks.consolidation_corpus import generate
from memory.store import PostgresMemoryStore
from schemas.commitments import CommitmentInferenceInput, commitment_workflow_id
from schemas.consolidation import ConsolidationInput
from schemas.memory_entry import NewMemoryEntry, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DistillationInput
from workflows.consolidation import consolidation_workflow_id
from workflows.dream import distillation_workflow_id

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
CORPUS_SEED = 4711
CORPUS_SIZE = 40
FORGET_TAG = "chaos-forget"
FORGET_ATTEMPTS = 60
# Transient failures while PostgreSQL or the Temporal server restarts.
DISTILLATION = "DistillationWorkflow"
CONSOLIDATION = "ConsolidationWorkflow"
INFERENCE = "CommitmentInferenceWorkflow"
TRANSIENT = (RPCError, OSError, ConnectionError, OperationalError, InterfaceError, DBAPIError)


async def retrying(call: Callable[[], Awaitable[T]], *, seconds: float = 120) -> T:
    """Retry ``call`` through a restart of PostgreSQL or the Temporal server."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        try:
            return await call()
        except TRANSIENT:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.5)


@dataclass
class Context:
    client: Client
    engine: AsyncEngine
    task_queue: str
    cli_env: dict[str, str]
    rng: random.Random
    record_cli_kill: Callable[[], None]
    # The survivors the planted corpus keeps when consolidated without faults.
    expected_survivors: int = 0
    # Workflows whose result came back (every operation awaits all it started).
    workflows_completed: int = 0

    async def completed(self, handle: WorkflowHandle[Any, Any]) -> None:
        await retrying(handle.result, seconds=600)
        self.workflows_completed += 1

    @property
    def store(self) -> PostgresMemoryStore:
        return PostgresMemoryStore(self.engine)


@dataclass
class Verdict:
    duplicates: int = 0
    losses: int = 0
    partial: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, other: Verdict) -> None:
        self.duplicates += other.duplicates
        self.losses += other.losses
        self.partial += other.partial
        self.problems += other.problems


async def scalar(engine: AsyncEngine, sql: str, **params: object) -> int:
    async def read() -> int:
        async with engine.connect() as connection:
            return int((await connection.execute(text(sql), params)).scalar_one())

    return await retrying(read)


async def run_workflow(context: Context, workflow: str, argument: object, workflow_id: str) -> None:
    """Start ``workflow`` (by type name, as the Temporal CLI does) or join it when a
    retried start already started it, and wait for its result."""

    async def start() -> WorkflowHandle[Any, Any]:
        return await context.client.start_workflow(
            workflow,
            argument,
            id=workflow_id,
            task_queue=context.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )

    await context.completed(await retrying(start))


class Operation:
    kind: ClassVar[str]

    def __init__(self, number: int) -> None:
        self.number = number
        self.ref = f"mem://chaos-{number % 3}/{self.kind}-{number}"

    async def prepare(self, context: Context) -> None:
        raise NotImplementedError

    async def run(self, context: Context) -> None:
        raise NotImplementedError

    async def verify(self, context: Context) -> Verdict:
        raise NotImplementedError

    async def events(self, context: Context, event_type: str) -> int:
        return await scalar(
            context.engine,
            "SELECT count(*) FROM memory_events WHERE memory_ref = :ref AND type = :type",
            ref=self.ref,
            type=event_type,
        )


class Distillation(Operation):
    kind = "distillation"
    ENTRIES = 200

    async def prepare(self, context: Context) -> None:
        notes = [
            NewMemoryEntry(content=f"Chaos note {self.number}.{i}: the customer prefers plan {i}.")
            for i in range(self.ENTRIES)
        ]
        await retrying(lambda: context.store.put_many(self.ref, notes))

    async def run(self, context: Context) -> None:
        ref = parse_memory_ref(self.ref)
        await run_workflow(
            context,
            DISTILLATION,
            DistillationInput(memory_ref=ref),
            distillation_workflow_id(ref),
        )

    async def verify(self, context: Context) -> Verdict:
        archives = await scalar(
            context.engine,
            "SELECT count(*) FROM memory_archives WHERE memory_ref = :ref",
            ref=self.ref,
        )
        compacted = await self.events(context, "memory.compacted")
        return exactly_once(self, {"archive": archives, "memory.compacted": compacted})


class Consolidation(Operation):
    kind = "consolidation"

    @staticmethod
    def corpus() -> list[NewMemoryEntry]:
        planted = generate(CORPUS_SIZE, CORPUS_SEED)
        return [NewMemoryEntry(content=e.content, tier=Tier.SEMANTIC) for e in planted.entries]

    async def prepare(self, context: Context) -> None:
        await retrying(lambda: context.store.put_many(self.ref, self.corpus()))

    async def run(self, context: Context) -> None:
        ref = parse_memory_ref(self.ref)
        await run_workflow(
            context,
            CONSOLIDATION,
            ConsolidationInput(memory_ref=ref),
            consolidation_workflow_id(ref),
        )

    async def survivors(self, context: Context) -> int:
        return await scalar(
            context.engine,
            "SELECT count(*) FROM memory_entries WHERE memory_ref = :ref AND superseded_by IS NULL",
            ref=self.ref,
        )

    async def verify(self, context: Context) -> Verdict:
        passes = await scalar(
            context.engine,
            "SELECT count(*) FROM consolidation_passes WHERE memory_ref = :ref",
            ref=self.ref,
        )
        consolidated = await self.events(context, "agent.memory.consolidated")
        verdict = exactly_once(self, {"pass": passes, "agent.memory.consolidated": consolidated})
        survivors = await self.survivors(context)
        if survivors < context.expected_survivors:
            verdict.duplicates += 1
            verdict.problems.append(
                f"{self.ref}: {survivors} survivors, fault-free: {context.expected_survivors}"
            )
        elif survivors > context.expected_survivors:
            verdict.losses += 1
            verdict.problems.append(
                f"{self.ref}: {survivors} survivors, fault-free: {context.expected_survivors}"
            )
        return verdict


class SettableClock:
    def __init__(self) -> None:
        self.value: datetime | None = None

    def __call__(self) -> datetime:
        return self.value or datetime.now(UTC)

    @classmethod
    def at(cls, instant: datetime) -> SettableClock:
        clock = cls()
        clock.value = instant
        return clock


class Commitments(Operation):
    kind = "commitments"
    REMINDERS = 2
    SAID_BEFORE = timedelta(days=5)

    def __init__(self, number: int, due_in: list[float]) -> None:
        super().__init__(number)
        self.due_in = due_in
        self.entry_ids: list[str] = []

    async def prepare(self, context: Context) -> None:
        # "in 5 days", said 5 days before the instant: due a few seconds from now.
        clock = SettableClock()
        store = PostgresMemoryStore(context.engine, clock=clock)
        self.entry_ids = []
        for n, seconds in enumerate(self.due_in):
            clock.value = datetime.now(UTC) + timedelta(seconds=seconds) - self.SAID_BEFORE
            reminder = NewMemoryEntry(
                content=f"Remind me in 5 days to call supplier {self.number}-{n}"
            )

            async def put(entry: NewMemoryEntry = reminder) -> str:
                return (await store.put(self.ref, entry)).id

            self.entry_ids.append(await retrying(put))

    async def run(self, context: Context) -> None:
        ref = parse_memory_ref(self.ref)
        await run_workflow(
            context,
            INFERENCE,
            CommitmentInferenceInput(memory_ref=ref, memory_ids=tuple(self.entry_ids)),
            f"chaos-infer/{self.number}",
        )
        for commitment in await self.commitment_ids(context):
            handle = context.client.get_workflow_handle(commitment_workflow_id(commitment))
            await context.completed(handle)
        for run_id in await self.enqueued_runs(context):
            await context.completed(context.client.get_workflow_handle(run_id))

    async def commitment_ids(self, context: Context) -> list[str]:
        async def read() -> list[str]:
            async with context.engine.connect() as connection:
                rows = await connection.execute(
                    text("SELECT commitment_id FROM commitments WHERE memory_ref = :ref"),
                    {"ref": self.ref},
                )
                return [row[0] for row in rows]

        return await retrying(read)

    async def enqueued_runs(self, context: Context) -> list[str]:
        async def read() -> list[str]:
            async with context.engine.connect() as connection:
                rows = await connection.execute(
                    text(
                        "SELECT enqueued_run_id FROM commitment_occurrences"
                        " WHERE memory_ref = :ref AND enqueued_run_id IS NOT NULL"
                    ),
                    {"ref": self.ref},
                )
                return [row[0] for row in rows]

        return await retrying(read)

    async def verify(self, context: Context) -> Verdict:
        verdict = Verdict()
        commitments = await self.commitment_ids(context)
        if len(commitments) != len(self.due_in):
            verdict.losses += abs(len(self.due_in) - len(commitments))
            verdict.problems.append(
                f"{self.ref}: {len(commitments)} commitments of {len(self.due_in)}"
            )
        for commitment in commitments:
            fired = await scalar(
                context.engine,
                "SELECT count(*) FROM commitment_occurrences"
                " WHERE commitment_id = :c AND outcome = 'fired'",
                c=commitment,
            )
            events = await scalar(
                context.engine,
                "SELECT count(*) FROM memory_events WHERE type = 'commitment.fired'"
                " AND payload->>'commitmentId' = :c",
                c=commitment,
            )
            verdict.add(
                exactly_once(self, {f"{commitment} fired": fired, f"{commitment} event": events})
            )
        return verdict


class Forget(Operation):
    kind = "forget"
    ENTRIES = 60
    FORGOTTEN = 20

    def __init__(self, number: int) -> None:
        super().__init__(number)
        # Forgotten entries still stored right after each SIGKILL of the forget CLI.
        self.after_kill_counts: list[int] = []

    def canary(self, n: int) -> str:
        return f"chaos-forget-canary-{self.number}-{n}-zq"

    async def prepare(self, context: Context) -> None:
        entries = [
            NewMemoryEntry(content=f"The vault code is {self.canary(n)}.", tags=[FORGET_TAG])
            for n in range(self.FORGOTTEN)
        ] + [
            NewMemoryEntry(content=f"Forget-run {self.number} keeps note {n}.")
            for n in range(self.ENTRIES - self.FORGOTTEN)
        ]
        await retrying(lambda: context.store.put_many(self.ref, entries))

    def _forget_command(self) -> list[str]:
        return [
            sys.executable, "-m", "memoryctl.main", "forget",
            "--memory-ref", self.ref, "--tag", FORGET_TAG, "--yes",
        ]  # fmt: skip

    async def run(self, context: Context) -> None:
        ref = parse_memory_ref(self.ref)
        distill = asyncio.create_task(
            run_workflow(
                context,
                DISTILLATION,
                DistillationInput(memory_ref=ref),
                distillation_workflow_id(ref),
            )
        )
        await asyncio.sleep(context.rng.uniform(0, 1.0))
        if context.rng.random() < 0.5:
            await self._forget(context, kill_after=context.rng.uniform(0.2, 2.5))
        for _ in range(FORGET_ATTEMPTS):
            if await self._forget(context, kill_after=None):
                break
            await asyncio.sleep(1)  # PostgreSQL restarting: the operator tries again
        else:
            raise RuntimeError(f"memoryctl forget failed {FORGET_ATTEMPTS} times")
        await distill

    async def _forget(self, context: Context, kill_after: float | None) -> bool:
        process = await asyncio.create_subprocess_exec(
            *self._forget_command(),
            env=context.cli_env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            code = await asyncio.wait_for(process.wait(), kill_after)
        except TimeoutError:
            process.kill()
            await process.wait()
            context.record_cli_kill()
            self.after_kill_counts.append(await self.tagged(context))
            return False
        return code == 0

    async def tagged(self, context: Context) -> int:
        return await scalar(
            context.engine,
            "SELECT count(*) FROM memory_entries WHERE memory_ref = :ref AND :tag = ANY(tags)",
            ref=self.ref,
            tag=FORGET_TAG,
        )

    async def verify(self, context: Context) -> Verdict:
        verdict = Verdict()
        for count in self.after_kill_counts:
            if count not in (0, self.FORGOTTEN):
                verdict.partial += 1
                verdict.problems.append(
                    f"{self.ref}: a killed forget left {count} of {self.FORGOTTEN}"
                )
        left = await self.tagged(context)
        if left:
            verdict.losses += 1
            verdict.problems.append(f"{self.ref}: {left} entries the forget named are still stored")
        return verdict

    def needles(self) -> list[str]:
        return [self.canary(n) for n in range(self.FORGOTTEN)]


def exactly_once(operation: Operation, counts: dict[str, int]) -> Verdict:
    verdict = Verdict()
    for what, count in counts.items():
        if count > 1:
            verdict.duplicates += count - 1
            verdict.problems.append(f"{operation.ref}: {count} x {what}")
        elif count == 0:
            verdict.losses += 1
            verdict.problems.append(f"{operation.ref}: no {what}")
    return verdict
