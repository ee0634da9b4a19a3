"""Nothing a conformance fixture's run reads back reaches its workflow's history: the
variables stay in the store's run record, the history holds ids and counts."""

from __future__ import annotations

import asyncio
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


async def test_cancel_started_with_the_run_leaves_one_consistent_outcome(running_api) -> None:
    """Side by side: a cancel sent while the fixture's activity writes and finishes.
    Whichever takes the run's row first wins; the run then has exactly one terminal
    event, the one its status says, and a run that was cancelled has no outcome
    written after it (the activity's finish changes nothing)."""
    tenant = "cancel" + uuid.uuid4().hex[:8]
    terminal_of = {
        "completed": "run.completed",
        "failed": "run.failed",
        "cancelled": "run.cancelled",
    }
    async with await running_api.client_for(tenant) as http:

        async def start_and_cancel(delay_s: float) -> tuple[int, str]:
            created = await http.post("/v1/runs", json={"workflowId": "conformance-noop"})
            run_id = created.json()["runId"]
            await asyncio.sleep(delay_s)
            cancelled = await http.post(f"/v1/runs/{run_id}/cancel")
            return cancelled.status_code, run_id

        # From at once (the cancel wins) to well after the run's usual length (the
        # activity's finish wins), with the close calls in between.
        delays = [0.0, 0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0]
        outcomes = await asyncio.gather(*(start_and_cancel(d) for d in delays))
        for _, run_id in outcomes:
            settled = await http.get(f"/v1/runs/{run_id}/events/poll", params={"timeout": 10})
            while not settled.json()["isTerminal"]:
                settled = await http.get(f"/v1/runs/{run_id}/events/poll", params={"timeout": 10})
        await asyncio.sleep(0.5)  # let every losing activity try to finish its run
        seen = set()
        for status_code, run_id in outcomes:
            assert status_code in (200, 409)
            snapshot = (await http.get(f"/v1/runs/{run_id}")).json()
            events = (await http.get(f"/v1/runs/{run_id}/events")).json()["events"]
            types = [event["type"] for event in events]
            ends = [t for t in types if t in terminal_of.values()]
            assert ends == [terminal_of[snapshot["status"]]] == [types[-1]], (run_id, types)
            assert (status_code == 200) == (snapshot["status"] == "cancelled")
            if snapshot["status"] == "cancelled":
                assert "memoryReadback" not in snapshot["variables"]
            seen.add(snapshot["status"])
    # Both orders happened: the cancel that came first and the finish that did.
    assert seen == {"completed", "cancelled"}
