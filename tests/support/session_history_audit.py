"""The end-of-session history audit: fetch every workflow history this test session
produced on its dev server and fail if any entry text or secret canary a test wrote
(tests/support/factories.py WRITTEN_TEXTS, SECRET_CANARIES) appears in it, decoded payloads
included.

It runs when the session's Temporal dev server is torn down (a session fixture in
conftest.py), so it sees every history, whichever order the tests ran in and however
many pytest-xdist workers (each with its own dev server and registry) shared them."""

from __future__ import annotations

import asyncio

from temporalio.client import Client, WorkflowExecution

from runtime.history_audit import ForbiddenTexts
from tests.support.factories import SECRET_CANARIES, WRITTEN_TEXTS

# Short strings ("v1", "x") occur in any history by chance; entry text worth leaking is
# longer than this.
MIN_TEXT_LENGTH = 16


# Histories fetched at once: the fetches are round trips to the local dev server, so a
# few in flight overlap them with the matching (a session leaves thousands of runs).
FETCHES_IN_FLIGHT = 8


async def audit_session_histories(client: Client) -> int:
    """The number of histories scanned; AssertionError naming the first that leaks."""
    forbidden = ForbiddenTexts(
        {t for t in WRITTEN_TEXTS if len(t) >= MIN_TEXT_LENGTH} | SECRET_CANARIES
    )
    gate = asyncio.Semaphore(FETCHES_IN_FLIGHT)

    async def leaks(execution: WorkflowExecution) -> list[str]:
        async with gate:
            handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
            history = await handle.fetch_history()
        return forbidden.leaked_by(history.to_json())

    executions = [execution async for execution in client.list_workflows()]
    found = await asyncio.gather(*(leaks(execution) for execution in executions))
    for execution, leaked in zip(executions, found, strict=True):
        assert leaked == [], f"{execution.workflow_type} {execution.id} leaks {len(leaked)} texts"
    return len(executions)
