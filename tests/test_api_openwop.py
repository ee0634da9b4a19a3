"""openwop over HTTP against the running app: discovery from live state, the agent
inventory's degraded projection, and the sample seams' conformance scenarios (RFC 0062,
RFC 0068, RFC 0080), ported from the spec text."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.slow


async def test_discovery_is_public_and_reports_the_live_model(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as anonymous:
        response = await anonymous.get("/.well-known/openwop")
    assert response.status_code == 200
    doc = response.json()
    memory, agents = doc["memory"], doc["agents"]
    assert memory["supported"] is True and memory["writable"] is True
    assert memory["maxEntrySizeBytes"] == 65536
    assert memory["search"] == {"supported": True, "modes": ["filter"]}
    assert memory["retention"] == {"ttl": True, "forget": True}
    distillation = memory["distillation"]
    assert distillation["supported"] is True and distillation["maxTokenBudget"] >= 1
    assert distillation["tokenizerName"] == "cl100k_base"
    assert agents["memoryBackends"] == ["long-term"]
    assert agents["memoryConsolidation"]["supported"] is True
    assert agents["commitments"] == {"supported": True, "fireConditions": ["time", "predicate"]}
    assert all(doc["memoryDimensions"].values())
    assert doc["x-host-agent-memory-status"]["worker"]["available"] is True
