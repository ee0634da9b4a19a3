"""The MCP server with the official MCP client SDK (``mcp``) against the real stack, on
both transports: streamable HTTP at /mcp on the running API (the API key decides the
tenant), and stdio (``memoryctl mcp`` as a subprocess, the operator's settings decide).
Remember then recall within a budget, an update read newest first with the old value
marked, forget reaching every copy, session_start, a promise that becomes a commitment,
proposals, two tenants' keys seeing disjoint memories, and hostile input answered as a
tool error naming the argument while the server keeps serving."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.workflow_io import DreamInput
from tests.support.factories import WRITTEN_TEXTS
from tests.support.proposals import last_mondays, seed_routine
from tests.support.scan import tables_holding
from workflows.dream import DreamWorkflow

TOOLS = {"remember", "recall", "forget", "session_start", "commitments", "proposals"}


@asynccontextmanager
async def http_client(url: str, key: str, agent: str = "agent-7") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}", "X-Agent-ID": agent}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


@asynccontextmanager
async def stdio_client(ref: str, database_url: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryctl.main", "mcp", "--memory-ref", ref],
        env={"DATABASE_URL": database_url, "PYTHONPATH": os.getcwd()},
        cwd=os.getcwd(),
    )
    async with Client(params) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return dict(result.structured_content)


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return text_of(result)


def said(text: str) -> str:
    WRITTEN_TEXTS.add(text)  # the session's history audit looks for it too
    return text


async def _an_agents_session(client: Client, engine: AsyncEngine) -> None:
    """What every transport must do, the same way."""
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    recall_schema = next(t for t in listed.tools if t.name == "recall").input_schema
    assert recall_schema["required"] == ["query"] and "token_budget" in recall_schema["properties"]

    unique = uuid.uuid4().hex[:8]
    kept = await call(client, "remember", text=said(f"Dana's locker code is {unique}-7"))
    other = await call(client, "remember", text=said("The office plants are watered on Fridays"))
    found = await call(client, "recall", query="what is Dana's locker code", token_budget=200)
    assert found["entries"][0]["id"] == kept["id"] and found["tokens"] <= 200
    tiny = await call(client, "recall", query="what is Dana's locker code", token_budget=3)
    assert tiny["entries"] == []  # no entry fits: none cut, none over the budget

    old = await call(client, "remember", text=said("Standup is at 9:30 every weekday"))
    new = await call(
        client,
        "remember",
        text=said("From Monday standup moves to 10:00"),
        supersedes=old["id"],
    )
    changed = await call(client, "recall", query="what time is standup")
    ids = [entry["id"] for entry in changed["entries"]]
    assert ids[:2] == [new["id"], old["id"]]
    assert changed["entries"][1]["superseded_by"] == new["id"]
    current = await call(client, "recall", query="what time is standup", exclude_superseded=True)
    assert old["id"] not in [entry["id"] for entry in current["entries"]]

    started = await call(client, "session_start", task="standup time", token_budget=1000)
    assert "memory_index" in started and started["entries"][0]["id"] == new["id"]

    gone = await call(client, "forget", ids=[kept["id"]])
    assert gone == {"forgotten": 1}
    after = await call(client, "recall", query="what is Dana's locker code")
    assert kept["id"] not in [entry["id"] for entry in after["entries"]]
    assert await tables_holding(engine, unique) == []  # nothing derived left

    # Hostile input: an error result naming the argument; the server keeps serving and
    # nothing is half-written.
    assert "unknown_tool" in await refused(client, "drop_tables")
    assert "token_budget" in await refused(client, "recall", query="x", token_budget="lots")
    assert "token_budget" in await refused(client, "recall", query="x", token_budget=10**9)
    assert "text" in await refused(client, "remember", text="x" * 70_000)
    assert "supersedes" in await refused(
        client, "remember", text=said("Gym at 8"), supersedes="m-forged-id"
    )
    assert "agent_id" in await refused(client, "recall", query="x", agent_id="../other")
    assert "ids" in await refused(client, "forget")
    assert "commitment_id" in await refused(client, "commitments", action="cancel")
    still = await call(client, "recall", query="office plants")
    assert still["entries"][0]["id"] == other["id"]
    assert "Gym at 8" not in [entry["text"] for entry in still["entries"]]


async def test_streamable_http_with_the_official_client(
    running_api,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
) -> None:
    tenant = "t" + uuid.uuid4().hex[:10]
    key = await running_api.key_for(tenant)
    async with http_client(running_api.url, key) as client:
        await _an_agents_session(client, engine)

        ref = f"mem://{tenant}/agent-7"
        promise = await call(
            client, "remember", text=said("Remind me tomorrow at 9 to call the bank")
        )
        # A dream (DreamWorkflow on the test's worker) infers the promise.
        await temporal_env.client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=8_000),
            id=f"dream-mcp-{uuid.uuid4().hex[:8]}",
            task_queue=worker_task_queue,
            execution_timeout=timedelta(seconds=120),
        )
        listed = await call(client, "commitments")
        assert [c["memory_id"] for c in listed["commitments"]] == [promise["id"]]
        commitment_id = listed["commitments"][0]["commitment_id"]
        cancelled = await call(client, "commitments", action="cancel", commitment_id=commitment_id)
        assert cancelled["commitment"]["state"] == "cancelled"

        await seed_routine(engine, ref, last_mondays(3), tags=("request",))
        await store.proposals.synthesize(
            parse(ref), "mcp-test", running_api.services.settings.task_queue
        )
        proposals = await call(client, "proposals")
        assert len(proposals["proposals"]) == 1
        shown = await call(
            client, "proposals", action="show", proposal_id=proposals["proposals"][0]["id"]
        )
        assert shown["proposal"]["state"] == "draft"

        index = await client.read_resource("memory://agent-7/MEMORY-INDEX.json")
        assert index.contents[0].mime_type == "application/json"

    # Another tenant's key: the same agent name is another memory, empty; an id of the
    # first tenant's is unknown, like one that never existed.
    other_key = await running_api.key_for("o" + uuid.uuid4().hex[:9])
    async with http_client(running_api.url, other_key) as other:
        assert (await call(other, "recall", query="standup"))["entries"] == []
        assert (await call(other, "forget", ids=[promise["id"]])) == {"forgotten": 0}
        assert "supersedes" in await refused(
            other, "remember", text=said("x"), supersedes=promise["id"]
        )
    async with http_client(running_api.url, key) as client:
        assert (await call(client, "recall", query="office plants"))["entries"]

    # No key, or a wrong one: refused before any tool runs.
    async with httpx2.AsyncClient(timeout=10) as raw:
        bare = await raw.post(
            f"{running_api.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
        assert bare.status_code == 401 and bare.json()["error"] == "unauthorized"


def parse(ref: str):
    from schemas.memory_ref import parse_memory_ref

    return parse_memory_ref(ref)


@pytest.mark.slow
async def test_stdio_with_the_official_client(database_url: str, engine: AsyncEngine) -> None:
    ref = f"mem://t{uuid.uuid4().hex[:10]}/agent-1"
    async with stdio_client(ref, database_url) as client:
        await _an_agents_session(client, engine)
