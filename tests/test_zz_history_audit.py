"""End-of-session audit (named to run last): fetch every workflow history the suite
produced on the dev server and fail if any entry text or secret canary a test wrote
appears in it, decoded payloads included."""

from __future__ import annotations

from temporalio.testing import WorkflowEnvironment

from runtime.history_audit import leaks
from tests.factories import SECRET_CANARIES, WRITTEN_TEXTS

# Short strings ("v1", "x") occur in any history by chance; entry text worth leaking is
# longer than this.
MIN_TEXT_LENGTH = 16


async def test_no_history_of_this_session_contains_memory_content(
    temporal_env: WorkflowEnvironment,
) -> None:
    forbidden = {t for t in WRITTEN_TEXTS if len(t) >= MIN_TEXT_LENGTH} | SECRET_CANARIES
    scanned = 0
    async for execution in temporal_env.client.list_workflows():
        handle = temporal_env.client.get_workflow_handle(execution.id, run_id=execution.run_id)
        history = await handle.fetch_history()
        found = leaks(history.to_json(), forbidden)
        assert found == [], f"{execution.workflow_type} {execution.id} leaks {len(found)} texts"
        scanned += 1
    assert scanned > 0 or not forbidden
