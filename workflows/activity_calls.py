"""Scheduling an activity from a workflow by its contract (activities/contracts.py):
the name, the request type and the result type in one place, options from policies."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import ActivityContract
    from workflows.policies import ActivityOptions

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


async def call(
    contract: ActivityContract[RequestT, ResultT],
    request: RequestT,
    options: ActivityOptions,
    *,
    summary: str,
) -> ResultT:
    return await workflow.execute_activity(
        contract.name,
        request,
        result_type=contract.result_type,
        start_to_close_timeout=options.start_to_close,
        schedule_to_close_timeout=options.schedule_to_close,
        heartbeat_timeout=options.heartbeat,
        retry_policy=options.retry,
        summary=summary,
    )
