"""Hostile input over HTTP (issue 12, the HTTP surface): Hypothesis draws requests to
every route, with bodies of any JSON shape (surrogates, NUL, control characters,
NaN, integers past 64 bits, wrong types, unknown fields), raw bytes that are not UTF-8,
hostile path segments, query strings and headers.

Every answer is below 500 and in the error envelope; a 422 names the field; no answer
echoes what was sent; and a request that was refused changes nothing stored (a
fingerprint of every table before and after). The app runs in-process behind the same
middleware (httpx's ASGI transport), with a Temporal connection that is down, so no
drawn request can start a workflow."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any

import httpx
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from api.app import create_app
from api.services import ApiServices
from memory.tenants.api_keys import ApiKeyStore
from runtime.settings import Settings
from tests.support.fuzzing import fuzz_settings
from tests.support.hostile_input import MARKER, hostile_text, json_values
from tests.support.scan import fingerprint

pytestmark = pytest.mark.slow

TENANT = "fuzz-tenant"
CREATE_FIELDS = [
    *("agent_id", "namespace", "key", "value", "memory_type", "scope", "tags", "ttl"),
    *("pinned", "priority", "sensitivity", "curated_by", "expires_at"),
]
SEAM_FIELDS = [
    *("memoryRef", "tokenBudget", "sources", "indexEmitted", "includeSecretCanary"),
    *("intention", "condition", "includeIntentionCanary"),
]
PATCH_FIELDS = ["value", "tags", "pinned", "priority", "ttl", "expires_at", "scope"]
QUERY_NAMES = [
    *("agent_id", "namespace", "key", "memory_type", "tags", "tags_any", "pinned", "limit"),
    *("offset", "cursor", "updated_after", "memoryRef", "afterSeq", "type"),
]
budgets: st.SearchStrategy[Any] = st.sampled_from([0, -1, 1.5, "8000", 2**64, None, True, [], {}])
refs = (
    hostile_text
    | st.sampled_from(
        [
            "mem://other-tenant/a1",
            "mem://FUZZ-TENANT/a1",
            "mem://fuzz-tenant./a1",
            "mem://fuzz-tenant/../a1",
            "mem:/fuzz-tenant/a1",
            "mem://fuzz-tenant",
            "",
            "mem://" + "x" * 600,
        ]
    )
    | st.integers()
)


def _body(fields: list[str], extra: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {}, optional={name: extra.get(name, json_values) for name in fields}
    ).flatmap(
        lambda body: (
            st.dictionaries(hostile_text, json_values, max_size=2).map(
                lambda unknown: {**body, **unknown}
            )
            | st.just(body)
        )
    )


shapes = st.fixed_dictionaries(
    {}, optional={"longTerm": json_values, "scratchpad": json_values, "x": json_values}
)
bodies = {
    "create": _body(CREATE_FIELDS, {"memory_type": st.sampled_from(["working", "x", 3])}),
    "patch": _body(
        ["value", "tags", "pinned", "priority", "ttl", "expires_at", "scope", "sensitivity"], {}
    ),
    "shape": _body(["memoryShape"], {"memoryShape": json_values | shapes}),
    "seam": _body(SEAM_FIELDS, {"memoryRef": refs, "tokenBudget": budgets}),
    "seed": _body(
        ["memoryRef", "entries"],
        {
            "memoryRef": refs,
            "entries": st.lists(
                st.fixed_dictionaries(
                    {"id": hostile_text, "content": hostile_text},
                    optional={"tags": json_values},
                ),
                max_size=3,
            )
            | json_values,
        },
    ),
    "run": _body(
        ["workflowId", "inputs"],
        {"workflowId": st.sampled_from(["conformance-noop", "nope", "", 7]) | hostile_text},
    ),
}
segment = hostile_text | st.sampled_from(["a1", "m0", "%2e%2e", "..", "a" * 300])
query_values = hostile_text | st.sampled_from(
    ["-1", "0", "1001", "1e9", "true", "x,y,", "*", "memory.created", "2026-01-01T00:00:00Z"]
)
latin1 = st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=40)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, bytes], bytes | None]:
    route = draw(
        st.sampled_from(
            [
                ("POST", "/api/v1/memory", "create"),
                ("PATCH", "/api/v1/memory/{seg}", "patch"),
                ("GET", "/api/v1/memory", None),
                ("GET", "/api/v1/agents/{seg}/memory", None),
                ("GET", "/api/v1/memory/events", None),
                ("GET", "/api/v1/intents/{seg}/events", None),
                ("GET", "/api/v1/memory/{seg}", None),
                ("DELETE", "/api/v1/memory/{seg}", None),
                ("PUT", "/v1/agents/{seg}", "shape"),
                ("GET", "/v1/agents", None),
                ("GET", "/v1/host/memory/events", None),
                ("POST", "/v1/host/sample/memory/distill", "seam"),
                ("POST", "/v1/host/sample/memory/consolidate", "seam"),
                ("POST", "/v1/host/sample/commitment/fire", "seam"),
                ("GET", "/v1/host/memory", None),
                ("POST", "/v1/test/memory/seed", "seed"),
                ("POST", "/v1/test/memory/compact", "seam"),
                ("POST", "/v1/runs", "run"),
                ("GET", "/v1/runs/{seg}", None),
                ("GET", "/v1/runs/{seg}/events", None),
                # The v2 wire (the same handlers, unprefixed) and negotiated discovery.
                ("POST", "/runs", "run"),
                ("GET", "/runs", None),
                ("GET", "/runs/{seg}", None),
                ("GET", "/runs/{seg}/events", None),
                ("GET", "/runs/{seg}/events/poll", None),
                ("POST", "/runs/{seg}/cancel", None),
                ("GET", "/agents/{seg}", None),
                ("POST", "/conformance/seams/sample/memory/distill", "seam"),
                ("GET", "/.well-known/openwop", None),
            ]
        )
    )
    method, template, body_kind = route
    drawn = draw(segment)
    path = template.replace("{seg}", urllib.parse.quote(drawn, safe="", errors="surrogatepass"))
    params = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "agent_id",
                    "namespace",
                    "key",
                    "memory_type",
                    "tags",
                    "tags_any",
                    "pinned",
                    "limit",
                    "offset",
                    "cursor",
                    "updated_after",
                    "memoryRef",
                    "afterSeq",
                    "type",
                    "tokenBudget",
                    "rank",
                    "query",
                    "tag",
                    "event_type",
                    "since",
                    "afterSequence",
                    "timeout",
                    "workflowId",
                    "status",
                    "streamMode",
                ]
            ),
            query_values,
            max_size=4,
        )
    )
    if params:
        path += "?" + urllib.parse.urlencode(params, errors="surrogatepass")
    headers: dict[str, bytes] = {}
    names = ["X-Agent-ID", "If-Match", "Content-Type", "OpenWOP-Version", "Accept", "Last-Event-ID"]
    for name in draw(st.sets(st.sampled_from(names))):
        value = draw(
            latin1 | st.sampled_from(["1", "0", "a1", 'W/"2"', "-3", "2.0", "text/event-stream"])
        )
        headers[name] = value.encode("latin-1")  # any byte HTTP/1.1 can carry
    raw: bytes | None = None
    if body_kind is not None:
        if draw(st.integers(0, 9)) == 0:
            raw = draw(st.binary(max_size=64))  # not JSON, often not UTF-8
        else:
            raw = json.dumps(draw(bodies[body_kind]), allow_nan=True).encode()
    return method, path, headers, raw


BASELINE: dict[object, str] = {}


@pytest.fixture
async def fuzz_client(engine, store, vault):
    async def temporal_down():
        raise ConnectionError("Temporal is down for this test")

    settings = Settings(OPENWOP_TEST_SEAM_ENABLED=True)  # the seams are fuzzed too
    services = ApiServices.build(settings, engine, vault, temporal_down, store=store)
    key = (await ApiKeyStore(engine).create(TENANT)).key
    BASELINE[engine] = await fingerprint(engine)
    app = create_app(services)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fuzz"
    ) as client:
        yield client, key


@fuzz_settings()
@given(request=requests())
async def test_hostile_http_requests_are_refused_cleanly(fuzz_client, engine, request) -> None:
    client, key = fuzz_client
    method, path, headers, raw = request
    headers = {**headers, "X-API-Key": key.encode()}
    response = await client.request(method, path, headers=headers, content=raw)
    event(f"{method} {path.split('?')[0][:24]}: {response.status_code}")
    assert response.status_code < 500, (method, path, response.status_code, response.text)
    answer = response.json()
    assert MARKER not in response.text, (method, path, response.text)
    if response.status_code >= 400:
        assert isinstance(answer, dict) and answer["error"] and answer["message"]
        if response.status_code == 422:
            assert answer["field"], answer
        # Refused: nothing stored changed since the last request that was accepted.
        assert await fingerprint(engine) == BASELINE[engine], (method, path, response.text)
    elif method != "GET":
        BASELINE[engine] = await fingerprint(engine)  # an accepted write moves it


# ---------------------------------------------------------------------- /mcp

MCP_TOOLS = ["remember", "recall", "forget", "session_start", "commitments", "proposals"]
MCP_ARGUMENTS = [
    *("text", "tags", "supersedes", "agent_id", "query", "token_budget", "exclude_superseded"),
    *("ids", "tag", "task", "action", "commitment_id", "proposal_id"),
]
mcp_arguments = st.dictionaries(
    st.sampled_from(MCP_ARGUMENTS) | hostile_text, json_values | hostile_text, max_size=4
)
# Mostly well-formed calls, so the tools' own argument handling is what is fuzzed; the
# rest hostile at every level (the transport's refusals).
well_formed_call = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(1, 10**6),
        "method": st.just("tools/call"),
        "params": st.fixed_dictionaries(
            {"name": st.sampled_from(MCP_TOOLS), "arguments": mcp_arguments}
        ),
    }
)
hostile_call = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0") | json_values,
        "method": st.sampled_from(
            ["tools/call", "tools/list", "resources/read", "resources/templates/list", "ping"]
        )
        | hostile_text,
    },
    optional={
        "id": st.integers() | hostile_text | json_values,
        "params": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(MCP_TOOLS) | hostile_text,
                "arguments": mcp_arguments | json_values,
                "uri": hostile_text | st.sampled_from(["memory://agent-1/MEMORY-INDEX.json"]),
            },
        )
        | json_values,
    },
)


@st.composite
def mcp_requests(draw: st.DrawFn) -> tuple[dict[str, bytes], bytes, bool]:
    """(headers, body, is a tool call)."""
    valid = draw(st.integers(0, 9)) < 8
    accept = "application/json, text/event-stream"
    headers = {
        "Accept": (accept if valid else draw(latin1 | st.just(accept))).encode("latin-1"),
        "Content-Type": b"application/json" if valid else draw(latin1).encode("latin-1"),
        "X-Agent-ID": draw(st.sampled_from(["agent-1", "a1"]) | latin1).encode("latin-1"),
        "MCP-Protocol-Version": draw(st.sampled_from(["2025-11-25", "2025-06-18"]) | latin1).encode(
            "latin-1"
        ),
    }
    if not valid and draw(st.booleans()):
        return headers, draw(st.binary(max_size=64)), False
    body: dict[str, Any] = draw(well_formed_call if valid else hostile_call)
    return headers, json.dumps(body, allow_nan=True).encode(), body.get("method") == "tools/call"


@pytest.fixture
async def mcp_fuzz_client(fuzz_client):
    """The fuzzed app with its lifespan running (the MCP transport's task group), in a
    task of its own: a lifespan must end in the task it started in."""
    client, key = fuzz_client
    app = client._transport.app
    started, stop = asyncio.Event(), asyncio.Event()

    async def serve() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(serve())
    await started.wait()
    yield client, key
    stop.set()
    await task


@fuzz_settings()
@given(request=mcp_requests())
async def test_hostile_mcp_requests_are_refused_cleanly(mcp_fuzz_client, engine, request) -> None:
    """/mcp answers hostile JSON-RPC below 500; a tool's refusal is an error result that
    names no value sent, and changes nothing stored."""
    client, key = mcp_fuzz_client
    headers, body, tool_call = request
    response = await client.post("/mcp", headers={**headers, "X-API-Key": key}, content=body)
    event(f"/mcp {'tools/call' if tool_call else 'other'}: {response.status_code}")
    assert response.status_code < 500, (response.status_code, response.text)
    if not (tool_call and response.status_code == 200):
        return
    answer = response.json()
    result = answer.get("result") if isinstance(answer, dict) else None
    if isinstance(result, dict) and result.get("isError"):
        assert MARKER not in response.text, response.text
        assert await fingerprint(engine) == BASELINE[engine], response.text
    else:
        BASELINE[engine] = await fingerprint(engine)  # a tool that ran may have written
