"""The official openwop Python client (openwop-client 2.7, PyPI, in the test extras)
driving this host through its own calls, as a user would: discovery, the OpenAPI
document, runs (create, read, poll, stream, list, cancel), the agent inventory, typed
errors, and the memory seams through the client's own transport (the client has no
seam methods; ``_request_json`` is the one every method uses, with its negotiation and
error parsing). The client is synchronous (urllib), so each call runs in a thread.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

import pytest
from openwop_client import OpenwopClient, WopError
from openwop_client.types import CreateRunRequest

from tests.conformance.conftest import Target

T = TypeVar("T")
SECRET = "sk-canary-official-client-zz91"


def _client(target: Target, key: str) -> OpenwopClient:
    return OpenwopClient(base_url=target.url, api_key=key, timeout=30)


async def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


def _poll_to_the_end(client: OpenwopClient, run_id: str) -> list[Any]:
    events: list[Any] = []
    after: int | None = None
    for _ in range(40):
        page = client.runs_poll_events(run_id, after_sequence=after, timeout_seconds=5)
        events.extend(page.events)
        after = page.lastSequence if page.lastSequence >= 0 else None
        if page.isTerminal:
            return events
    raise AssertionError(f"run {run_id} did not end")


async def test_discovery_and_the_openapi_document_through_the_client(target: Target) -> None:
    client = _client(target, target.key_a)
    caps = await _call(client.discovery_capabilities)
    assert "2.0" in caps.protocolVersions and caps.preferredVersion in caps.protocolVersions
    memory, agents, run_list = caps.family("memory"), caps.family("agents"), caps.family("runList")
    assert memory is not None and agents is not None and run_list is not None
    assert memory.facets["attribution"] == {"emitsWriteEvents": True}
    assert agents.facets["memoryBackends"] == ["long-term"]
    assert {memory.since, agents.since, run_list.since} <= set(caps.protocolVersions)
    openapi = await _call(client.discovery_openapi)
    assert {"/runs", "/runs/{run_id}", "/v1/runs"} <= set(openapi["paths"])


async def test_a_run_through_create_poll_stream_and_read(target: Target) -> None:
    client = _client(target, target.key_a)
    created = await _call(
        client.runs_create,
        CreateRunRequest(workflowId="conformance-agent-memory-roundtrip", inputs={}),
    )
    assert "/" in created.runId and created.status == "running"
    polled = await _call(_poll_to_the_end, client, created.runId)
    streamed = await _call(lambda: list(client.runs_events(created.runId, timeout_seconds=20)))
    assert [e.sequence for e in polled] == list(range(len(polled)))
    assert [e.eventId for e in streamed] == [e.eventId for e in polled]
    types = [e.type for e in polled]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert "memory.written" in types
    snapshot = await _call(client.runs_get, created.runId)
    assert snapshot.status == "completed" and snapshot.eventLogSchemaVersion == 3
    assert snapshot.owner.subject.lane == "api-key"
    assert snapshot.owner.tenant == created.runId.partition("/")[0]
    assert snapshot.variables is not None and snapshot.variables["memoryReadback"]["id"]


async def test_runs_list_and_cancel_through_the_client(target: Target) -> None:
    client = _client(target, target.key_a)
    created = await _call(client.runs_create, CreateRunRequest(workflowId="conformance-noop"))
    # Cancelled at once: the run is either still running (cancelled, and its stream
    # ends with run.cancelled) or already over (409 run_terminal), never both.
    try:
        cancelled = await _call(client.runs_cancel, created.runId)
    except WopError as refused:
        assert refused.status == 409 and refused.envelope is not None
        assert refused.envelope.error == "run_terminal"
        final = "run.completed"
    else:
        assert cancelled.status == "cancelled"
        final = "run.cancelled"
    events = await _call(_poll_to_the_end, client, created.runId)
    assert events[-1].type == final
    with pytest.raises(WopError) as again:
        await _call(client.runs_cancel, created.runId)
    assert again.value.status == 409
    second = await _call(client.runs_create, CreateRunRequest(workflowId="conformance-noop"))
    await _call(_poll_to_the_end, client, second.runId)
    page = await _call(client.runs_list, limit=1)
    assert page is not None and page.runs[0].runId == second.runId  # newest first
    assert page is not None and len(page.runs) == 1 and page.next_cursor
    later = await _call(client.runs_list, limit=1, cursor=page.next_cursor)
    assert later is not None and later.runs[0].runId != page.runs[0].runId
    done = await _call(client.runs_list, workflow_id="conformance-noop", status="completed")
    assert done is not None and second.runId in [r.runId for r in done.runs]
    assert all(r.status == "completed" for r in done.runs)


async def test_typed_errors_and_the_other_tenant(target: Target) -> None:
    a, b = _client(target, target.key_a), _client(target, target.key_b)
    created = await _call(a.runs_create, CreateRunRequest(workflowId="conformance-noop"))
    with pytest.raises(WopError) as foreign:
        await _call(b.runs_get, created.runId)
    assert foreign.value.status == 403 and foreign.value.envelope is not None
    assert foreign.value.envelope.error == "id_tenant_mismatch"
    with pytest.raises(WopError) as unknown:
        await _call(a.runs_create, CreateRunRequest(workflowId="no-such-workflow"))
    assert unknown.value.status == 404 and unknown.value.envelope is not None
    assert await _call(a.agents_get, "no-such-agent") is None
    assert await _call(a.agents_list) is not None


async def test_the_memory_seams_through_the_clients_transport(target: Target) -> None:
    client = _client(target, target.key_a)
    seams = "/conformance/seams/sample"

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = client._request_json("POST", seams + path, body=body)
        return answer

    distilled = await _call(
        post,
        "/memory/distill",
        {"memoryRef": "client-distill", "tokenBudget": 8000, "includeSecretCanary": True},
    )
    assert distilled["event"]["distillation"]["tokensUsed"] <= 8000
    consolidated = await _call(post, "/memory/consolidate", {"memoryRef": "client-consolidate"})
    assert consolidated["event"]["outputCount"] <= consolidated["event"]["inputCount"]
    fired = await _call(
        post,
        "/commitment/fire",
        {"memoryRef": "client-fire", "condition": "time", "includeIntentionCanary": True},
    )
    assert fired["fireCount"] <= 1
    assert fired["intentionCanary"] not in json.dumps(fired["event"])
    with pytest.raises(WopError) as refused:
        await _call(post, "/memory/distill", {"memoryRef": "client-distill", "tokenBudget": 1})
    assert refused.value.status == 422 and refused.value.envelope is not None
    assert refused.value.envelope.error == "token_budget_exceeded"
    assert SECRET not in refused.value.raw_text
