"""Running workflows from tests: a dream to completion, the result of an agent run a
commitment enqueued, and the ApplicationError at the root of a workflow failure."""

from __future__ import annotations

import asyncio
import uuid

from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from schemas.workflow_io import AgentRunDigest, DreamInput, DreamResult
from workflows.agent_run import AgentRunWorkflow
from workflows.dream import DreamWorkflow

RUN_TIMEOUT_SECONDS = 60.0


async def run_dream(
    env: WorkflowEnvironment, task_queue: str, memory_ref: str, token_budget: int | None = None
) -> DreamResult:
    return await env.client.execute_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=memory_ref, token_budget=token_budget),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def enqueued_run_result(client: Client, run_id: str) -> AgentRunDigest:
    """The result of the agent run a commitment firing enqueued, once it exists.

    The fire activity commits the fired event (with the run's id) and the commitment
    workflow starts the run only after that activity returns, so a test that reads the
    event as soon as it is committed may ask for a run that does not exist yet (NOT_FOUND
    under CI load). Wait for it instead of failing."""

    async def once_started() -> AgentRunDigest:
        handle = client.get_workflow_handle_for(AgentRunWorkflow.run, run_id)
        while True:
            try:
                return await handle.result()
            except RPCError as error:
                if error.status != RPCStatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(0.2)

    return await asyncio.wait_for(once_started(), RUN_TIMEOUT_SECONDS)


def application_error(error: BaseException) -> ApplicationError:
    """The ApplicationError a workflow failure carries (through child and activity
    errors)."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.__cause__
    assert isinstance(cause, ApplicationError), error
    return cause
