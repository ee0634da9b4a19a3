"""The API key in the OpenAPI document (issue 41): Swagger UI at /docs shows its
Authorize button only for the security schemes the document declares, and sends the key
only on the operations that list them. Both ways of sending a key are declared
(``X-API-Key`` and ``Authorization: Bearer``), every operation that answers 401 without a
key lists them, no public one does, and declaring them changed no answer: a request
without a key, or with an unknown one, gets the same 401 as before."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx

# Either scheme is enough (an OpenAPI security list holds alternatives).
REQUIREMENT: list[dict[str, list[str]]] = [{"APIKeyHeader": []}, {"HTTPBearer": []}]
MISSING = "an API key is required (X-API-Key or Authorization: Bearer)"
UNKNOWN = "the API key is unknown or revoked"


async def _document(http: httpx.AsyncClient) -> dict[str, Any]:
    answer = await http.get("/openapi.json")
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


async def test_the_document_declares_both_ways_of_sending_the_key(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        schemes = (await _document(http))["components"]["securitySchemes"]
        page = await http.get("/docs")
    assert set(schemes) == {"APIKeyHeader", "HTTPBearer"}
    assert {k: schemes["APIKeyHeader"][k] for k in ("type", "in", "name")} == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
    }
    assert {k: schemes["HTTPBearer"][k] for k in ("type", "scheme")} == {
        "type": "http",
        "scheme": "bearer",
    }
    assert all(scheme.get("description") for scheme in schemes.values())
    # The page Swagger UI builds its Authorize button from.
    assert page.status_code == 200 and "/openapi.json" in page.text
    # What "Try it out" sends with a key given to either scheme is accepted.
    key = await running_api.key_for("t" + uuid.uuid4().hex[:10])
    sent = {
        "APIKeyHeader": {schemes["APIKeyHeader"]["name"]: key},
        "HTTPBearer": {"Authorization": f"Bearer {key}"},
    }
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        for name, headers in sent.items():
            assert (await http.get("/v1/agents", headers=headers)).status_code == 200, name


async def test_every_operation_that_needs_a_key_lists_it_and_no_public_one_does(
    running_api,
) -> None:
    """Whether an operation needs a key is read from the app itself: its answer to a
    request without one (the seams are on in the tests, so they authenticate too)."""
    protected, public = [], []
    async with httpx.AsyncClient(base_url=running_api.url, timeout=60) as http:
        document = await _document(http)
        for path, operations in document["paths"].items():
            url = re.sub(r"\{[^}]+\}", "x", path)
            for method, operation in operations.items():
                answer = await http.request(method.upper(), url, json={})
                if answer.status_code == 401:
                    assert answer.json()["message"] == MISSING, (method, path)
                    assert operation.get("security") == REQUIREMENT, (method, path)
                    protected.append((method, path))
                else:
                    assert "security" not in operation, (method, path, answer.status_code)
                    public.append((method, path))
        # The routes outside the document stay public as well.
        for path in ("/healthz", "/readyz", "/metrics", "/docs", "/redoc", "/openapi.json"):
            assert (await http.get(path)).status_code != 401, path
    assert public == [("get", "/.well-known/openwop")]
    assert len(protected) > 60, protected
    for needs_key in (
        ("get", "/api/v1/memory"),  # authenticated inside a dependency (_request_agent)
        ("post", "/api/v1/memory/search"),
        ("get", "/v1/agents"),
        ("get", "/agents"),
        ("post", "/v1/proposals/{proposal_id}/apply"),
        ("post", "/v1/host/sample/memory/distill"),
    ):
        assert needs_key in protected, needs_key


async def test_a_request_without_a_live_key_gets_the_same_401_as_before(running_api) -> None:
    """The exact answers from before the schemes were declared: the envelope, the message
    saying which headers carry a key, no WWW-Authenticate challenge."""
    v1_missing = {"error": "unauthorized", "message": MISSING}
    v1_unknown = {"error": "unauthorized", "message": UNKNOWN}
    cases: list[tuple[str, str, dict[str, str], dict[str, str]]] = [
        ("GET", "/v1/agents", {}, v1_missing),
        ("GET", "/v1/agents", {"Authorization": "Basic eDp5"}, v1_missing),
        ("GET", "/v1/agents", {"X-API-Key": "amk_nope_nope"}, v1_unknown),
        ("GET", "/v1/agents", {"Authorization": "Bearer amk_nope_nope"}, v1_unknown),
        ("GET", "/agents", {}, {"error": "unauthenticated", "message": MISSING}),
        ("GET", "/api/v1/memory?agent_id=a1", {}, v1_missing),
        ("GET", "/api/v1/memory/m1?agent_id=a1", {"X-API-Key": "amk_nope_nope"}, v1_unknown),
        ("POST", "/api/v1/memory/search", {}, v1_missing),
        ("POST", "/v1/proposals/p1/apply", {}, v1_missing),
        ("POST", "/codec/decode", {}, v1_missing),
        ("POST", "/mcp", {}, v1_missing),
    ]
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        for method, path, headers, body in cases:
            answer = await http.request(method, path, headers=headers, json={})
            assert (answer.status_code, answer.json()) == (401, body), (method, path, headers)
            assert answer.headers["content-type"] == "application/json"
            assert "www-authenticate" not in answer.headers, (method, path)
