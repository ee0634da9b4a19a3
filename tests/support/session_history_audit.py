"""The end-of-session history audit: fetch every workflow history this test session
produced on its dev server and fail if any entry text or secret canary a test wrote
(tests/support/factories.py WRITTEN_TEXTS, SECRET_CANARIES) appears in it, decoded payloads
included.

It runs when the session's Temporal dev server is torn down (a session fixture in
conftest.py), so it sees every history, whichever order the tests ran in and however
many pytest-xdist workers (each with its own dev server and registry) shared them."""

from __future__ import annotations

from temporalio.client import Client

from runtime.history_audit import ForbiddenTexts
from tests.support.factories import SECRET_CANARIES, WRITTEN_TEXTS

# Short strings ("v1", "x") occur in any history by chance; entry text worth leaking is
# longer than this.
MIN_TEXT_LENGTH = 16


async def audit_session_histories(client: Client) -> int:
    """The number of histories scanned; AssertionError naming the first that leaks."""
    forbidden = ForbiddenTexts(
        {t for t in WRITTEN_TEXTS if len(t) >= MIN_TEXT_LENGTH} | SECRET_CANARIES
    )
    scanned = 0
    async for execution in client.list_workflows():
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        history = await handle.fetch_history()
        found = forbidden.leaked_by(history.to_json())
        assert found == [], f"{execution.workflow_type} {execution.id} leaks {len(found)} texts"
        scanned += 1
    return scanned
