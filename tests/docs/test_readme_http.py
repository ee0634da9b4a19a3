"""The curl lines of docs/http-api.md, run verbatim with bash and curl against the running app (a
key for tenant acme, as the quick start makes), each answering in the spec's shape."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess

import pytest

from tests.support.docs_blocks import block_commands, doc
from tests.support.factories import WRITTEN_TEXTS

pytestmark = pytest.mark.slow


def _curl(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=90)


async def test_readme_curl_lines(running_api) -> None:
    assert shutil.which("curl"), "curl is needed to run the docs' lines"
    key = await running_api.key_for("acme")
    env = {**os.environ, "AGENT_MEMORY_API": running_api.url, "AGENT_MEMORY_KEY": key}
    lines = block_commands(doc("http-api"), "http-api")
    # The text these lines write must not reach a workflow history
    # (tests/support/session_history_audit.py).
    for line in lines:
        WRITTEN_TEXTS.update(re.findall(r'"(?:sources|intention)": \[?"([^"]{16,})"', line))
        WRITTEN_TEXTS.update(re.findall(r', "([^"]{16,})"\]', line))
    assert len(lines) == 8 and all(line.startswith("curl ") for line in lines)
    answers = []
    for line in lines:
        done = await asyncio.to_thread(_curl, line, env)
        assert done.returncode == 0, (line, done.returncode, done.stdout, done.stderr)
        answers.append(json.loads(done.stdout))
    discovery, created, listed, page, distilled, consolidated, fired, agents = answers
    assert discovery["memory"]["supported"] is True
    assert created["value"] == {"currency": "EUR"} and created["version"] == 1
    assert [e["id"] for e in listed] == [created["id"]]
    assert page["total"] == 1 and page["entries"][0]["key"] == "currency"
    assert distilled["event"]["type"] == "memory.compacted" and distilled["archiveChecksum"]
    assert consolidated["event"]["type"] == "agent.memory.consolidated"
    assert consolidated["outputCount"] <= consolidated["inputCount"]
    assert fired["event"]["type"] == "commitment.fired" and fired["fireCount"] == 1
    assert [a["agentId"] for a in agents["agents"]] == ["support-agent"]
