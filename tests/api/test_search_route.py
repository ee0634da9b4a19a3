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


async def test_search_filters_by_who_said_it_and_when(running_api, store) -> None:
    tenant = "t" + uuid.uuid4().hex[:10]
    ref = f"mem://{tenant}/agent-7"
    said = [
        ("Caroline: I adopted a puppy", "Caroline", "2023-05-08T13:56:00Z"),
        ("Melanie: We adopted a puppy too", "Melanie", "2023-05-08T13:57:00Z"),
        ("Melanie: The puppy chewed my shoes", "Melanie", "2023-07-01T09:00:00+02:00"),
    ]
    stored = await store.put_many(
        ref,
        [note(text, metadata={"saidBy": by, "saidAt": at}) for text, by, at in said],
    )
    ids = {entry.content: entry.id for entry in stored}

    async with await running_api.client_for(tenant) as http:

        async def found(**filters: object) -> set[str]:
            answer = await http.post(
                "/api/v1/memory/search",
                json={"query": "puppy", "agent_id": "agent-7", "mode": "text", **filters},
            )
            assert answer.status_code == 200, answer.text
            return {hit["entry"]["id"] for hit in answer.json()["results"]}

        melanie = {ids[said[1][0]], ids[said[2][0]]}
        assert await found(said_by="Melanie") == melanie
        assert await found(said_after="2023-06-01T00:00:00Z") == {ids[said[2][0]]}
        assert await found(said_before="2023-06-01T00:00:00Z") == {
            ids[said[0][0]],
            ids[said[1][0]],
        }
        assert await found(said_by="Melanie", said_before="2023-06-01T00:00:00Z") == {
            ids[said[1][0]]
        }
        refused = await http.post(
            "/api/v1/memory/search",
            json={"query": "puppy", "agent_id": "agent-7", "said_after": "2023-06-01T00:00:00"},
        )
        assert refused.status_code == 422 and "said_after" in refused.text, refused.text
        # An OpenIntent create says it too (an additive extension).
        create = {"agent_id": "agent-7", "namespace": "chat", "value": {"text": "puppy!"}}
        written = await http.post(
            "/api/v1/memory",
            json={**create, "key": "k1", "said_by": "Caroline", "said_at": "2023-05-09T10:00:00Z"},
        )
        assert written.status_code == 201, written.text
        assert await found(said_by="Caroline", said_after="2023-05-09T00:00:00Z") == {
            written.json()["id"]
        }
        refused = await http.post(
            "/api/v1/memory", json={**create, "key": "k2", "said_at": "yesterday"}
        )
        assert refused.status_code == 422 and "said_at" in refused.text, refused.text
        assert await store.count(ref) == 4
