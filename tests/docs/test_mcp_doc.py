"""docs/mcp.md's configuration blocks, verbatim: each JSON parses, and the server it names
starts and lists its tools to the official MCP client. A stdio block's command runs as
written (the memoryctl this environment installed) with its arguments; only the
database URL is this test's, and an HTTP block's address and key are the running API's."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
TOOLS = {"remember", "recall", "forget", "session_start", "commitments", "proposals"}


def block(name: str) -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(
        rf"<!-- mcp-config:{name}:begin -->\n```json\n(.*?)```\n<!-- mcp-config:{name}:end -->",
        text,
        re.DOTALL,
    )
    assert found, f"no {name} block in docs/mcp.md"
    parsed: dict[str, Any] = json.loads(found.group(1))
    return parsed


def installed(command: str) -> str:
    """The command as this environment installed it (beside the interpreter)."""
    path = Path(sys.executable).parent / command
    assert path.exists(), path
    return str(path)


async def _tools(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("name", ["claude-code", "claude-desktop"])
async def test_a_stdio_block_starts_the_server(name: str, database_url: str) -> None:
    server = block(name)["mcpServers"]["agent-memory"]
    assert server["command"] == "memoryctl" and server["args"][0] == "mcp"
    params = StdioServerParameters(
        command=installed(server["command"]),
        args=server["args"],
        env={**server["env"], "DATABASE_URL": database_url},
    )
    async with Client(params) as client:
        assert await _tools(client) == TOOLS


@pytest.mark.parametrize("name", ["claude-code-http", "generic"])
async def test_an_http_block_reaches_the_api(name: str, running_api) -> None:
    config = block(name)
    server = config["mcpServers"]["agent-memory"] if "mcpServers" in config else config
    assert server["url"].startswith("http://127.0.0.1:8000/")
    url = server["url"].replace("http://127.0.0.1:8000", running_api.url)
    key = await running_api.key_for("acme")
    headers = {
        header: re.sub(r"\$\{AGENT_MEMORY_KEY\}|<an API key of the tenant>", key, value)
        for header, value in server["headers"].items()
    }
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        assert await _tools(client) == TOOLS
