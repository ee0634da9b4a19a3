"""POST /api/v1/memory/search over HTTP: an agent's memory ranked by meaning, the RFC's
filters, the tenant boundary, and bad input answered 422 naming the field."""

from __future__ import annotations

import uuid

from tests.support.factories import note


async def test_search_over_http(running_api, store) -> None:
    tenant = "t" + uuid.uuid4().hex[:10]
    ref = f"mem://{tenant}/agent-7"
    likes = await store.put(ref, note("Dana likes green tea in the afternoon", "prefs"))
    await store.put(ref, note("The build server restarts every Sunday"))
    async with await running_api.client_for(tenant) as http:
        answer = await http.post(
            "/api/v1/memory/search",
            json={"query": "what drink does Dana prefer", "agent_id": "agent-7", "limit": 1},
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["mode"] == "hybrid" and body["model"].startswith("wordllama/")
        assert [hit["entry"]["id"] for hit in body["results"]] == [likes.id]
        filtered = await http.post(
            "/api/v1/memory/search",
            json={"query": "server", "tags": ["prefs"], "mode": "text"},
            headers={"X-Agent-ID": "agent-7"},
        )
        assert filtered.status_code == 200 and filtered.json()["results"] == []
        for bad, field in (
            ({"query": "", "agent_id": "agent-7"}, "query"),
            ({"query": "x", "agent_id": "agent-7", "limit": 101}, "limit"),
            ({"query": "x", "agent_id": "agent-7", "mode": "fuzzy"}, "mode"),
        ):
            refused = await http.post("/api/v1/memory/search", json=bad)
            assert refused.status_code == 422 and field in refused.text, refused.text
    async with await running_api.client_for("other" + uuid.uuid4().hex[:6]) as other:
        foreign = await other.post(
            "/api/v1/memory/search", json={"query": "Dana tea", "agent_id": "agent-7"}
        )
        assert foreign.status_code == 200 and foreign.json()["results"] == []
