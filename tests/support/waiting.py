"""Waiting for something another process or a worker will do."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tests.support.clock_workflows import WaitWorkflow


async def eventually(
    check: Callable[[], Awaitable[bool]], *, seconds: float = 10, every: float = 0.1
) -> None:
    """Poll ``check`` until it holds; fail the test after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"still not true after {seconds:g} s: {check}")
        await asyncio.sleep(every)


async def closed_status(handle: Any, seconds: float = 10) -> WorkflowExecutionStatus | None:
    """The status a workflow closes with (waiting for it to close)."""

    async def closed() -> bool:
        return (await handle.describe()).status != WorkflowExecutionStatus.RUNNING

    await eventually(closed, seconds=seconds)
    return (await handle.describe()).status


async def let_time_pass(env: WorkflowEnvironment, task_queue: str, span: timedelta) -> None:
    """Advance the time-skipping server's clock by ``span``, firing every timer due
    meanwhile: await a WaitWorkflow on the ``skipping_queue`` fixture's clock queue."""
    await env.client.execute_workflow(
        WaitWorkflow.run,
        span.total_seconds(),
        id=f"wait-{uuid.uuid4().hex[:8]}",
        task_queue=f"{task_queue}-clock",
    )
