"""Running workflows from tests: a dream to completion, and the ApplicationError at the
root of a workflow failure."""

from __future__ import annotations

import uuid

from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from schemas.workflow_io import DreamInput, DreamResult
from workflows.dream import DreamWorkflow


async def run_dream(
    env: WorkflowEnvironment, task_queue: str, memory_ref: str, token_budget: int | None = None
) -> DreamResult:
    return await env.client.execute_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=memory_ref, token_budget=token_budget),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


def application_error(error: BaseException) -> ApplicationError:
    """The ApplicationError a workflow failure carries (through child and activity
    errors)."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.__cause__
    assert isinstance(cause, ApplicationError), error
    return cause
