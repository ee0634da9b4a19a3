"""Where a dream's time goes, read from its histories, and what it read.

A dream's steps are activities: distillation's in its child DistillationWorkflow,
consolidation, inference, arming and garbage collection in the dream itself (dreams
recorded before the patch dream-steps-as-activities ran consolidation and inference as
child workflows). Step times are therefore read by *activity type name* from the
dream's history and every child's (found through the child-started events), so the same
code reports either shape.

The tokenizer floors need the texts a dream read: ``rows_read`` replays, read-only and
just before the dream, the three reads that load text into the worker (the
distillation queue's pages, the consolidation corpus, the inference candidates since
the watermark) on the same memoryRef.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from temporalio.api.enums.v1 import EventType, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHandle, WorkflowHistory

from memory.commitments.scan import _candidates as inference_candidates
from memory.consolidation.corpus import read_corpus
from memory.storage import tables
from memory.storage.tenant_scope import scoped
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens_batch
from schemas.commitments import InferCommitmentsRequest
from schemas.memory_ref import parse_memory_ref

# Every activity a dream step runs, by type name (the legacy names only appear in
# histories recorded before the budget-bounded selection).
STEP_OF_ACTIVITY = {
    "create_snapshot": "distill",
    "distill": "distill",
    "distill_memory": "distill",
    "consolidate_memory": "consolidate",
    "infer_commitments": "infer",
    "arm_commitments": "arm",
    "collect_garbage": "gc",
}
STEPS = ("distill", "consolidate", "infer", "arm", "gc")
_QUEUE_TYPES = (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)
_CLOSING = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: ("completed", "activity_task_completed"),
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: ("failed", "activity_task_failed"),
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: ("timed-out", "activity_task_timed_out"),
}


def _at(event: Any) -> float:
    return float(event.event_time.ToMicroseconds()) / 1e6


def activity_spans(history: WorkflowHistory) -> list[dict[str, Any]]:
    """Per activity: queued (scheduled -> started) and run (started -> closed) seconds,
    and the attempt that closed it. History records only an activity's last attempt, so
    a retried one shows as one span whose run time counts from its last start and whose
    queue time holds the attempts before it."""
    scheduled: dict[int, tuple[str, float]] = {}
    started: dict[int, float] = {}
    attempts: dict[int, int] = {}
    spans: list[dict[str, Any]] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = (name, _at(event))
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            start = event.activity_task_started_event_attributes
            started[start.scheduled_event_id] = _at(event)
            attempts[start.scheduled_event_id] = start.attempt
        elif event.event_type in _CLOSING:
            status, attributes = _CLOSING[event.event_type]
            scheduled_id = getattr(event, f"{attributes}_event_attributes").scheduled_event_id
            name, queued_at = scheduled[scheduled_id]
            begin = started.get(scheduled_id, queued_at)
            spans.append(
                {
                    "activity": name,
                    "step": STEP_OF_ACTIVITY.get(name, "other"),
                    "status": status,
                    "attempt": attempts.get(scheduled_id, 1),
                    "queued_s": round(begin - queued_at, 3),
                    "run_s": round(_at(event) - begin, 3),
                }
            )
    return spans


def history_span_s(history: WorkflowHistory) -> float:
    times = [_at(event) for event in history.events]
    return round(max(times) - min(times), 3) if times else 0.0


def _children(history: WorkflowHistory) -> list[tuple[str, str, str]]:
    """(workflow type, workflow id, run id) of every child this history started."""
    found = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            attributes = event.child_workflow_execution_started_event_attributes
            execution = attributes.workflow_execution
            found.append((attributes.workflow_type.name, execution.workflow_id, execution.run_id))
    return found


async def dream_histories(
    client: Client, handle: WorkflowHandle[Any, Any]
) -> dict[str, WorkflowHistory]:
    """The dream's history and its children's (and theirs), keyed "dream" and by the
    child's workflow type."""
    histories = {"dream": await handle.fetch_history()}
    pending = _children(histories["dream"])
    while pending:
        kind, workflow_id, run_id = pending.pop(0)
        child = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        label = kind if kind not in histories else f"{kind} {run_id[:8]}"
        histories[label] = child
        pending += _children(child)
    return histories


def step_times(spans: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Seconds per step: queue and run time (a retried step's failed attempts are in
    its queue time)."""
    times = dict.fromkeys(STEPS, 0.0)
    for span in spans:
        times[span["step"]] = times.get(span["step"], 0.0) + span["queued_s"] + span["run_s"]
    return {step: round(seconds, 3) for step, seconds in times.items()}


@dataclass
class RowsRead:
    """The texts a dream loads into the worker, replayed just before it, and the
    tokenizer's time over them (tokenizing each once, serially: what a dream that
    only looked at these rows would at least pay)."""

    distill: list[str] = field(default_factory=list)
    consolidate: list[str] = field(default_factory=list)
    infer: list[str] = field(default_factory=list)
    floor_s: float = 0.0

    @property
    def total(self) -> int:
        return len(self.distill) + len(self.consolidate) + len(self.infer)

    def counts(self) -> dict[str, int]:
        return {
            "distill": len(self.distill),
            "consolidate": len(self.consolidate),
            "infer": len(self.infer),
            "total": self.total,
        }

    def measure_floor(self) -> None:
        texts = [*self.distill, *self.consolidate, *self.infer]
        began = time.perf_counter()
        count_tokens_batch(texts)
        self.floor_s = time.perf_counter() - began


async def consolidation_and_inference_rows(
    store: PostgresMemoryStore, memory_ref: str
) -> tuple[list[str], list[str]]:
    """The consolidation pass's corpus (live long-term entries plus the texts merged
    into them) and commitment inference's candidates since the memoryRef's watermark,
    read as the dream's activities read them; nothing is written."""
    ref = parse_memory_ref(memory_ref)
    watermarks = tables.commitment_watermarks
    now = store.now()
    async with store.engine.connect() as connection:
        corpus = await read_corpus(connection, ref, now)
        since = (
            await connection.execute(
                select(watermarks.c.scanned_through).where(scoped(watermarks, ref))
            )
        ).scalar()
        candidates = await inference_candidates(
            connection, ref, InferCommitmentsRequest(memory_ref=ref), since, now
        )
    consolidate = [e.content for e in corpus] + [t for e in corpus for t in e.merged_texts]
    return consolidate, [row.content for row in candidates]


async def wait_until_idle(
    client: Client, task_queue: str, *, settle_s: float = 1.0, timeout_s: float = 900.0
) -> float:
    """Wait until ``task_queue`` has had no workflow or activity task waiting for
    ``settle_s``, and return the seconds waited. A night passes between two dreams: the
    workflows one dream armed (an overdue promise fires at once) are done long before
    the next, which must not queue behind them."""
    began = time.perf_counter()
    idle_since: float | None = None
    while time.perf_counter() - began < timeout_s:
        backlog = 0
        for kind in _QUEUE_TYPES:
            response = await client.workflow_service.describe_task_queue(
                DescribeTaskQueueRequest(
                    namespace=client.namespace,
                    task_queue=TaskQueue(name=task_queue),
                    task_queue_type=kind,
                    report_stats=True,
                )
            )
            backlog += response.stats.approximate_backlog_count
        now = time.perf_counter()
        if backlog:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since >= settle_s:
            return now - began
        await asyncio.sleep(0.25)
    return time.perf_counter() - began
