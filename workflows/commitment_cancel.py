"""What a commitment's workflow does when it is cancelled: cancel the commitment in the
store before ending as cancelled, so `temporal workflow cancel --workflow-id
commitment/<id>` is as final as `memoryctl commitments cancel` (which cancels the store
first, then the workflow; both orders end in the same state)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CANCEL_COMMITMENT
    from schemas.commitments import CancelCommitmentRequest
    from schemas.memory_ref import MemoryRef
    from workflows import policies
    from workflows.activity_calls import call

# A cancel that lands while the workflow awaits an activity (the watch's evaluation, the
# firing) or a child reaches it as ActivityError/ChildWorkflowError caused by
# CancelledError, not asyncio.CancelledError. Runs before this marker ended CANCELED
# without cancelling their commitment on that path; they replay unchanged.
CANCELLED_DURING_ACTIVITY = "commitment-cancelled-during-activity"

T = TypeVar("T")


def _is_workflow_cancellation(error: BaseException) -> bool:
    """Whether ``error`` is the workflow's cancellation, wherever the cancel found it."""
    if isinstance(error, asyncio.CancelledError):
        return True
    return is_cancelled_exception(error) and workflow.patched(CANCELLED_DURING_ACTIVITY)


async def cancelling_the_commitment_if_cancelled(
    commitment_id: str, memory_ref: MemoryRef, work: Awaitable[T]
) -> T:
    """``work`` (a commitment workflow's body); if the workflow is cancelled meanwhile,
    the commitment is cancelled in the store before the cancellation goes on up."""
    try:
        return await work
    except (asyncio.CancelledError, ActivityError, ChildWorkflowError) as error:
        if not _is_workflow_cancellation(error):
            raise
        await _record_cancellation(commitment_id, memory_ref)
        raise


async def _record_cancellation(commitment_id: str, memory_ref: MemoryRef) -> None:
    outcome = await call(
        CANCEL_COMMITMENT,
        CancelCommitmentRequest(commitment_id=commitment_id, memory_ref=memory_ref),
        policies.FIRE,
        summary="the workflow was cancelled: cancel the commitment",
    )
    workflow.logger.info("commitment %s cancelled (state %s)", commitment_id, outcome.state)
