"""Nothing a conformance fixture's run reads back reaches its workflow's history: the
variables stay in the store's run record, the history holds ids and counts."""

from __future__ import annotations

import uuid

from temporalio.testing import WorkflowEnvironment

from runtime.history_audit import searchable_text
from schemas.fixture_runs import fixture_run_workflow_id
from tests.support.openwop_http import settled_run


async def test_no_fixture_text_reaches_the_runs_history(
    running_api, temporal_env: WorkflowEnvironment
) -> None:
    async with await running_api.client_for("runs" + uuid.uuid4().hex[:8]) as http:
        runs = [
            await settled_run(http, fixture)
            for fixture in (
                "conformance-agent-memory-roundtrip",
                "conformance-agent-memory-redaction",
            )
        ]
    for run in runs:
        history = await temporal_env.client.get_workflow_handle(
            fixture_run_workflow_id(run["runId"])
        ).fetch_history()
        text = searchable_text(history.to_json())
        content = run["variables"]["memoryReadback"]["content"]
        assert content not in text and "Round-trip note" not in text and "byok-" not in text
