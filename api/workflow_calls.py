"""Running a workflow on behalf of a request: the real workflow on the worker's task
queue, with the memoryRef's search attributes, and its failure turned into the error
envelope by the code the activity reported (content-free by construction)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio.client import WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from api.errors import ApiError, status_of
from api.services import ApiServices
from runtime.search_attributes import attributes_of
from schemas.errors import ErrorCode
from schemas.memory_ref import MemoryRef

# A seam answers synchronously; a run that takes longer is reported, not waited on.
SEAM_RUN_TIMEOUT = timedelta(minutes=2)
_CODES = {code.value: code for code in ErrorCode}


def _application_error(error: BaseException | None) -> ApplicationError | None:
    while error is not None:
        if isinstance(error, ApplicationError) and error.type in _CODES:
            return error
        error = error.__cause__ or getattr(error, "cause", None)
    return None


def refusal_of(error: WorkflowFailureError) -> ApiError:
    cause = _application_error(error)
    if cause is None:
        return ApiError(502, "workflow_failed", "the workflow failed")
    code = _CODES[str(cause.type)]
    details: dict[str, Any] = {}
    if cause.details and isinstance(cause.details[0], dict):
        details = {"details": cause.details[0]}
    return ApiError(status_of(code), code.value, cause.message, **details)


async def run_workflow(
    api: ApiServices,
    run: Any,
    argument: Any,
    *,
    workflow_id: str,
    ref: MemoryRef,
    summary: str,
    result_type: type | None = None,
) -> Any:
    try:
        client = await api.temporal()
        handle = await client.start_workflow(
            run,
            argument,
            id=workflow_id,
            task_queue=api.settings.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            execution_timeout=SEAM_RUN_TIMEOUT,
            static_summary=summary,
        )
    except WorkflowAlreadyStartedError:
        raise ApiError(
            409, "workflow_running", f"a run of {workflow_id} is already under way; retry later"
        ) from None
    except RPCError as error:
        raise ApiError(
            503, "temporal_unavailable", f"Temporal refused the start ({error.status.name})"
        ) from None
    try:
        return await handle.result()
    except WorkflowFailureError as error:
        raise refusal_of(error) from None
