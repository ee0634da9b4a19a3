"""Where a commitment's lateness goes, hop by hop, read from its workflow history.

For a fired one-off CommitmentWorkflow the history holds, with server timestamps:
the first workflow task (which sets the timer, or fires at once when started with a
start delay), TimerStarted/TimerFired, the workflow task that schedules FIRE_COMMITMENT,
and the activity's scheduled/started times. With the ledger's claim time (the firing
transaction's wall clock) that splits ``claimed_at - due_at`` into:

- ``timer_target``: when the timer was due to fire minus the due instant. A durable
  timer is a duration measured from the task's start (workflow.now()), but the server
  starts it when the task completes, so the task's own duration lands here.
- ``timer_fire``: TimerFired minus the timer's target (the server's timer queue).
- ``start_delay``: for a run started with a start delay that ends at or after the
  instant, the first task's scheduling minus the due instant (instead of the timer hops).
- ``lead_left``: for a run held back by a start delay, the due instant minus when the
  delay ended: what is left of the lead (activities/commitment_activities.py
  START_LEAD) once the start's own round trip under the arming burst is paid. Not a
  part of the lateness; near zero or below, the lead is too short.
- ``workflow_task``: the activity's scheduling minus the timer's firing (or the first
  task's scheduling): dispatch to the worker, the workflow code, completion.
- ``activity_dispatch``: ActivityTaskStarted minus ActivityTaskScheduled.
- ``activity_run``: the ledger claim minus the activity's start (the transaction).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from schemas.commitments import commitment_workflow_id

HOPS = (
    "timer_target",
    "timer_fire",
    "start_delay",
    "lead_left",
    "workflow_task",
    "activity_dispatch",
    "activity_run",
)


@dataclass(frozen=True)
class Claim:
    commitment_id: str
    due_at: datetime
    claimed_at: datetime


def _hops(events: Sequence[HistoryEvent], claim: Claim) -> dict[str, float]:
    utc = claim.due_at.tzinfo

    def at(event: HistoryEvent) -> datetime:
        return event.event_time.ToDatetime().replace(tzinfo=utc)

    def first(kind: int) -> HistoryEvent | None:
        return next((e for e in events if e.event_type == kind), None)

    hops: dict[str, float] = {}
    opened = events[0].workflow_execution_started_event_attributes
    backoff = opened.first_workflow_task_backoff.ToTimedelta()
    if backoff:
        hops["lead_left"] = (claim.due_at - (at(events[0]) + backoff)).total_seconds()
    timer = first(EventType.EVENT_TYPE_TIMER_STARTED)
    fired = first(EventType.EVENT_TYPE_TIMER_FIRED)
    scheduled = first(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    started = first(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    if scheduled is None or started is None:
        return hops
    if timer is not None and fired is not None:
        span = timer.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        target = at(timer) + span
        hops["timer_target"] = (target - claim.due_at).total_seconds()
        hops["timer_fire"] = (at(fired) - target).total_seconds()
        hops["workflow_task"] = (at(scheduled) - at(fired)).total_seconds()
    else:
        first_task = first(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED)
        assert first_task is not None
        hops["start_delay"] = (at(first_task) - claim.due_at).total_seconds()
        hops["workflow_task"] = (at(scheduled) - at(first_task)).total_seconds()
    hops["activity_dispatch"] = (at(started) - at(scheduled)).total_seconds()
    hops["activity_run"] = (claim.claimed_at - at(started)).total_seconds()
    return hops


async def lateness_hops(
    client: Client, claims: Iterable[Claim], *, concurrency: int = 8
) -> dict[str, dict[str, float]]:
    """min/p50/p99/max of each hop over ``claims`` (seconds), plus how many were read."""
    gate = asyncio.Semaphore(concurrency)

    async def one(claim: Claim) -> dict[str, float]:
        async with gate:
            handle = client.get_workflow_handle(commitment_workflow_id(claim.commitment_id))
            history = await handle.fetch_history()
            return _hops(list(history.events), claim)

    rows = await asyncio.gather(*(one(claim) for claim in claims))
    summary: dict[str, dict[str, float]] = {}
    for hop in HOPS:
        values = sorted(row[hop] for row in rows if hop in row)
        if not values:
            continue
        summary[hop] = {
            "n": len(values),
            "min": round(values[0], 3),
            "p50": round(values[len(values) // 2], 3),
            "p99": round(values[min(len(values) - 1, round(0.99 * (len(values) - 1)))], 3),
            "max": round(values[-1], 3),
        }
    return summary
