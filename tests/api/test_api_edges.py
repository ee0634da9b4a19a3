"""The edge of the HTTP surface: credentials, bad input and the request size cap. Every
refusal is a 4xx naming the field (and the limit where there is one), never a 500, and
never quotes what was sent or what is stored."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

pytestmark = pytest.mark.slow

CANARY = "CANARY-7f3a-edge"
ROUTES = [
    ("GET", "/v1/agents"),
    ("PUT", "/v1/agents/a1"),
    ("GET", "/v1/host/memory/events?memoryRef=mem://x/a"),
    ("POST", "/v1/host/sample/memory/distill"),
    ("POST", "/v1/host/sample/memory/consolidate"),
    ("POST", "/v1/host/sample/commitment/fire"),
    ("POST", "/api/v1/memory"),
    ("GET", "/api/v1/memory?agent_id=a1"),
    ("GET", "/api/v1/agents/a1/memory"),
    ("GET", "/api/v1/memory/events?agent_id=a1"),
    ("GET", "/api/v1/memory/m1?agent_id=a1"),
    ("PATCH", "/api/v1/memory/m1?agent_id=a1"),
    ("DELETE", "/api/v1/memory/m1?agent_id=a1"),
]


async def test_every_route_but_discovery_needs_a_live_key(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        assert (await http.get("/.well-known/openwop")).status_code == 200
        for method, path in ROUTES:
            for headers in ({}, {"X-API-Key": "amk_nope_nope"}, {"Authorization": "Bearer x"}):
                response = await http.request(method, path, headers=headers, json={})
                assert response.status_code == 401, (method, path, headers)
                assert response.json()["error"] == "unauthorized"
        created = await running_api.keys.create("t" + uuid.uuid4().hex[:8])
        bearer = {"Authorization": f"Bearer {created.key}"}
        assert (await http.get("/v1/agents", headers=bearer)).status_code == 200
        assert await running_api.keys.revoke(created.record.key_id)
        await asyncio.sleep(2.2)  # the resolved-key cache (api/auth.py CACHE_S)
        assert (await http.get("/v1/agents", headers=bearer)).status_code == 401


def _bad_requests(tenant: str) -> list[tuple[str, str, dict, dict | None, int, str]]:
    ref = f"mem://{tenant}/a1"
    agent = {"X-Agent-ID": "a1"}
    good = {"namespace": "n", "key": "k", "value": {"note": CANARY}}
    return [
        ("POST", "/api/v1/memory", agent, {**good, "namespace": "bad ns"}, 422, "namespace"),
        ("POST", "/api/v1/memory", agent, {**good, "value": CANARY}, 422, "value"),
        (
            "POST",
            "/api/v1/memory",
            agent,
            {k: v for k, v in good.items() if k != "key"},
            422,
            "key",
        ),
        ("POST", "/api/v1/memory", agent, {**good, "memory_type": "forever"}, 422, "memory_type"),
        ("POST", "/api/v1/memory", agent, {**good, "tags": ["ok", ""]}, 422, "tags.1"),
        ("POST", "/api/v1/memory", agent, {**good, "tags": ["t"] * 65}, 422, "tags"),
        ("POST", "/api/v1/memory", agent, {**good, "priority": CANARY}, 422, "priority"),
        ("POST", "/api/v1/memory", agent, {**good, "pinned": "yes"}, 422, "pinned"),
        ("POST", "/api/v1/memory", agent, {**good, "surprise": CANARY}, 422, "surprise"),
        ("POST", "/api/v1/memory", agent, {**good, "expires_at": "2020-01-01"}, 422, "expires_at"),
        ("POST", "/api/v1/memory", agent, {**good, "value": {"n": 2**60}}, 422, "value"),
        ("POST", "/api/v1/memory", agent, {**good, "value": {"x": "y" * 70_000}}, 413, "value"),
        ("POST", "/api/v1/memory", {}, good, 422, "agent_id"),
        ("POST", "/api/v1/memory", {"X-Agent-ID": "../etc"}, good, 422, "agent_id"),
        ("GET", "/api/v1/memory?agent_id=a1&limit=5000", {}, None, 422, "limit"),
        ("GET", "/api/v1/memory?agent_id=a1&offset=-1", {}, None, 422, "offset"),
        ("GET", "/api/v1/memory/events?agent_id=a1&cursor=x", {}, None, 422, "cursor"),
        (
            "PATCH",
            "/api/v1/memory/m1",
            {**agent, "If-Match": "one"},
            {"value": {}},
            422,
            "If-Match",
        ),
        ("PATCH", "/api/v1/memory/m1", agent, {"value": {}}, 428, "If-Match"),
        (
            "PUT",
            "/v1/agents/a1",
            {},
            {"memoryShape": {"longTerm": "yes"}},
            422,
            "memoryShape.longTerm",
        ),
        (
            "PUT",
            "/v1/agents/a1",
            {},
            {"memoryShape": {"infinite": True}},
            422,
            "memoryShape.infinite",
        ),
        ("PUT", "/v1/agents/bad%20agent", {}, {"memoryShape": {}}, 422, "agentId"),
        # An opaque ref may take any shape but a traversal, NUL or control characters.
        ("POST", "/v1/host/sample/memory/distill", {}, {"memoryRef": "../a1"}, 422, "memoryRef"),
        ("POST", "/v1/host/sample/memory/distill", {}, {"memoryRef": "a\x00b"}, 422, "memoryRef"),
        ("POST", "/v1/host/sample/memory/distill", {}, {"memoryRef": ""}, 422, "memoryRef"),
        (
            "POST",
            "/v1/host/sample/commitment/fire",
            {},
            {"memoryRef": ref, "condition": "sometimes"},
            422,
            "condition",
        ),
        (
            "POST",
            "/v1/host/sample/memory/distill",
            {},
            {"memoryRef": ref, "tokenBudget": 0},
            422,
            "tokenBudget",
        ),
        (
            "POST",
            "/v1/host/sample/memory/distill",
            {},
            {"memoryRef": ref, "tokenBudget": -5},
            422,
            "tokenBudget",
        ),
        (
            "POST",
            "/v1/host/sample/memory/distill",
            {},
            {"memoryRef": ref, "tokenBudget": 1.5},
            422,
            "tokenBudget",
        ),
        (
            "POST",
            "/v1/host/sample/memory/distill",
            {},
            {"memoryRef": ref, "tokenBudget": "9"},
            422,
            "tokenBudget",
        ),
        (
            "POST",
            "/v1/host/sample/memory/distill",
            {},
            {"memoryRef": ref, "sources": []},
            422,
            "sources",
        ),
        ("POST", "/v1/host/sample/memory/consolidate", {}, {"memoryRef": 7}, 422, "memoryRef"),
        (
            "POST",
            "/v1/host/sample/commitment/fire",
            {},
            {"memoryRef": ref, "intention": ""},
            422,
            "intention",
        ),
        ("GET", f"/v1/host/memory/events?memoryRef={ref}&limit=0", {}, None, 422, "limit"),
    ]


async def test_bad_input_is_a_4xx_naming_the_field_and_changes_nothing(running_api, engine) -> None:
    from tests.support.scan import row_counts

    tenant = "t" + uuid.uuid4().hex[:10]
    before = await row_counts(engine)
    async with await running_api.client_for(tenant) as http:
        for method, path, headers, body, status, field in _bad_requests(tenant):
            response = await http.request(method, path, headers=headers, json=body)
            assert response.status_code == status, (path, body, response.text)
            answer = response.json()
            assert answer["field"] == field, (path, answer)
            assert answer["message"] and answer["error"]
            assert CANARY not in response.text
        broken = await http.post(
            "/api/v1/memory", content=b'{"namespace": "n", "key":', headers={"X-Agent-ID": "a1"}
        )
        assert broken.status_code == 422
    after = await row_counts(engine)
    assert {t: n for t, n in after.items() if t != "api_keys"} == {
        t: n for t, n in before.items() if t != "api_keys"
    }


async def test_request_bodies_are_capped(running_api) -> None:
    async with await running_api.client_for("t" + uuid.uuid4().hex[:10]) as http:
        huge = b'{"value": "' + b"x" * (1024 * 1024 + 10) + b'"}'
        declared = await http.post("/api/v1/memory", content=huge)
        assert declared.status_code == 413
        assert declared.json() == {
            "error": "request_too_large",
            "message": "request body: over the limit of 1048576 bytes",
            "field": "body",
            "limit": 1048576,
        }

        async def chunks():
            for _ in range(20):
                yield b"x" * 65536

        streamed = await http.post("/api/v1/memory", content=chunks())
        assert streamed.status_code == 413


async def test_openapi_is_published(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        spec = (await http.get("/openapi.json")).json()
        docs = await http.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    for path in (
        "/.well-known/openwop",
        "/v1/agents",
        "/v1/host/sample/memory/distill",
        "/v1/host/sample/memory/consolidate",
        "/v1/host/sample/commitment/fire",
        "/api/v1/memory",
        "/api/v1/memory/{entry_id}",
        "/api/v1/agents/{agent_id}/memory",
    ):
        assert path in spec["paths"], path


async def test_a_trailing_slash_is_a_404_envelope_not_a_redirect(running_api) -> None:
    """Found by tests/reliability/test_fuzz_http.py: a path ending in an encoded '/' was a
    307 with an empty body; every answer is JSON in the envelope."""
    async with await running_api.client_for("t" + uuid.uuid4().hex[:10]) as http:
        for path in ("/api/v1/memory/m1%2F", "/api/v1/memory/", "/v1/agents/"):
            response = await http.get(path, headers={"X-Agent-ID": "a1"})
            assert response.status_code == 404, (path, response.status_code)
            assert response.json()["error"] == "not_found"


async def test_a_body_that_is_not_json_is_refused_naming_the_body(running_api) -> None:
    """A JSON syntax error is the body's fault: 422 naming ``body`` and where it broke,
    not a field called "8" (the character offset FastAPI puts in its location)."""
    async with await running_api.client_for("t" + uuid.uuid4().hex[:10]) as http:
        for route in ("/api/v1/memory", "/api/v1/memory/search"):
            refused = await http.post(
                route, content=b'{"agent_id": "a1",,}', headers={"Content-Type": "application/json"}
            )
            assert refused.status_code == 422, refused.text
            answer = refused.json()
            assert answer["field"] == "body", answer
            assert answer["message"] == "body: is not valid JSON at character 18", answer
