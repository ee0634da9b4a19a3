"""The option the commitments benchmark measures beside the product's own path: one timer
workflow per memoryRef that holds the next instants of all its commitments (issue 21,
part 5). A prototype for the figures only; the product arms one CommitmentWorkflow per
commitment (activities/commitment_activities.py), which keeps the documented per-
commitment ids, cancel path, continue-as-new per recurrence and recorded histories.

Arming here is one store inference and one workflow start per memoryRef and pass, run
from the benchmark process; the workflow sleeps to its earliest instant, fires every
instant now due through the product's FIRE_COMMITMENT activity (same ledger claim, same
worker queue), and sleeps again. In its own module because the workflow sandbox
refuses workflows defined in ``__main__``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import Client

with workflow.unsafe.imports_passed_through():
    from activities.contracts import FIRE_COMMITMENT
    from memory.store import PostgresMemoryStore
    from schemas.commitments import FireCommitmentRequest, InferCommitmentsRequest
    from schemas.memory_ref import parse_memory_ref
    from workflows import policies


class Instant(BaseModel):
    commitment_id: str
    due_at: datetime


class RefTimersInput(BaseModel):
    memory_ref: str
    fire_queue: str
    instants: list[Instant]


@workflow.defn(name="BenchRefTimers")
class RefTimersWorkflow:
    @workflow.run
    async def run(self, request: RefTimersInput) -> int:
        ref = parse_memory_ref(request.memory_ref)
        pending = sorted(request.instants, key=lambda i: i.due_at)
        fired = 0
        while pending:
            wait = pending[0].due_at - workflow.now()
            if wait > timedelta():
                await workflow.sleep(wait)
            now = workflow.now()
            due = [i for i in pending if i.due_at <= now]
            pending = pending[len(due) :]
            await asyncio.gather(
                *(
                    workflow.execute_activity(
                        FIRE_COMMITMENT.name,
                        FireCommitmentRequest(
                            commitment_id=i.commitment_id,
                            memory_ref=ref,
                            due_at=i.due_at,
                            fired_at=now,
                        ),
                        task_queue=request.fire_queue,
                        start_to_close_timeout=policies.FIRE.start_to_close,
                        retry_policy=policies.FIRE.retry,
                    )
                    for i in due
                )
            )
            fired += len(due)
        return fired


async def infer_and_arm_per_ref(
    client: Client,
    store: PostgresMemoryStore,
    refs: Sequence[str],
    timer_queue: str,
    fire_queue: str,
    ids_by_ref: dict[str, list[str]] | None = None,
) -> int:
    """Infer each ref's commitments and start one timer workflow per ref for them (20
    refs at a time, like the benchmark's inference workflows). Returns how many armed."""
    gate = asyncio.Semaphore(20)

    async def one(ref: str) -> int:
        memory_ref = parse_memory_ref(ref)
        ids = tuple(ids_by_ref[ref]) if ids_by_ref is not None else None
        async with gate:
            await store.commitments.infer(
                InferCommitmentsRequest(memory_ref=memory_ref, memory_ids=ids, enqueue_runs=False)
            )
            rows = await store.commitments.unarmed(memory_ref, 100_000)
            instants = [
                Instant(commitment_id=r.commitment_id, due_at=r.next_at)
                for r in rows
                if r.next_at is not None
            ]
            await client.start_workflow(
                RefTimersWorkflow.run,
                RefTimersInput(memory_ref=ref, fire_queue=fire_queue, instants=instants),
                id=f"bench-ref-timers-{uuid.uuid4().hex[:8]}",
                task_queue=timer_queue,
            )
            await store.commitments.mark_armed(memory_ref, [r.commitment_id for r in rows])
            return len(rows)

    return sum(await asyncio.gather(*(one(ref) for ref in refs)))
