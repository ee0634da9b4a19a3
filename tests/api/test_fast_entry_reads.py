"""GET /api/v1/memory/{id} answered in front of the router (api/fast_reads.py) is the
FastAPI route's answer, byte for byte: the same app with and without the step, over the
same store, give the same status, headers and body, for entries of every shape and for
every request the step leaves to the route (no key, an unknown key, no agent, a
malformed agent, an entry not found or of another tenant, a trailing slash, events)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.app import create_app
from api.fast_reads import FastEntryReads
from api.openintent_models import canonical_value
from api.services import ApiServices
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.settings import Settings
from schemas.memory_entry import NewMemoryEntry, Priority, Tier
from tests.support.factories import WRITTEN_TEXTS

TENANT, OTHER = "fast-reads", "fast-reads-other"


async def _no_temporal() -> Client:
    raise ConnectionError("no Temporal server in this test")


def _apps(engine: AsyncEngine, store: PostgresMemoryStore) -> tuple[FastAPI, FastAPI]:
    services = ApiServices.build(
        Settings(), engine, StaticSecretVault({}), _no_temporal, store=store
    )
    fast, routed = create_app(services), create_app(services)
    step = routed.router.middleware_stack
    assert isinstance(step, FastEntryReads)
    # The same app without the step.
    routed.router.middleware_stack = step.router  # type: ignore[assignment]
    return fast, routed


@pytest.fixture
async def clients(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    fast, routed = _apps(engine, store)
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=fast), base_url="http://t") as a,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=routed), base_url="http://t") as b,
    ):
        yield a, b


def _entry(content: str, **fields: object) -> NewMemoryEntry:
    WRITTEN_TEXTS.add(content)
    return NewMemoryEntry(content=content, **fields)


async def _same(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], path: str, headers: dict[str, str]
) -> httpx.Response:
    fast, routed = clients
    # Twice: the first request of a key authenticates it (the route), the second finds
    # it in the key cache (the step answers when it can).
    for _ in range(2):
        answer = await fast.get(path, headers=headers)
        expected = await routed.get(path, headers=headers)
        assert answer.status_code == expected.status_code, path
        assert answer.content == expected.content, path
        drop = {"date", "server"}
        assert [h for h in answer.headers.raw if h[0].decode().lower() not in drop] == [
            h for h in expected.headers.raw if h[0].decode().lower() not in drop
        ], path
    return answer


async def test_the_step_answers_what_the_route_answers(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    keys = ApiKeyStore(engine)
    key = (await keys.create(TENANT, name="fast")).key
    other_key = (await keys.create(OTHER, name="other")).key
    ref, other_ref = f"mem://{TENANT}/agent-1", f"mem://{OTHER}/agent-1"
    soon = datetime.now(UTC) + timedelta(days=2)
    stored = await store.put_many(
        ref,
        [
            _entry(canonical_value({"kind": "fact", "text": "café opens at 8", "n": 1.5})),
            _entry("plain text written by a host", tags=("notes",), tier=Tier.SEMANTIC),
            _entry(
                canonical_value({"list": [1, None, True]}),
                tier=Tier.EPISODIC,
                namespace="prefs",
                key="seat",
                pinned=True,
                priority=Priority.HIGH,
                tags=("travel", "café"),
                expires_at=soon,
                metadata={
                    "openintent": {
                        "scope": {"task_id": "t-1"},
                        "ttl": "duration:P2D",
                        "sensitivity": "internal",
                        "curated_by": "agent-9",
                    }
                },
            ),
        ],
    )
    (theirs,) = await store.put_many(other_ref, [_entry("another tenant's entry")])

    agent = {"X-API-Key": key, "X-Agent-ID": "agent-1"}
    for entry in stored:
        answer = await _same(clients, f"/api/v1/memory/{entry.id}", agent)
        assert answer.status_code == 200 and answer.json()["id"] == entry.id
        by_query = f"/api/v1/memory/{entry.id}?agent_id=agent-1"
        assert (await _same(clients, by_query, {"X-API-Key": key})).status_code == 200
        bearer = {"Authorization": f"Bearer {key}", "X-Agent-ID": "agent-1"}
        assert (await _same(clients, f"/api/v1/memory/{entry.id}", bearer)).status_code == 200

    first = stored[0].id
    left_to_the_route = [
        (f"/api/v1/memory/{first}", {"X-Agent-ID": "agent-1"}, 401),
        (f"/api/v1/memory/{first}", {"X-API-Key": "amk_nope_nope", "X-Agent-ID": "a"}, 401),
        (f"/api/v1/memory/{first}", {"X-API-Key": key}, 422),
        (f"/api/v1/memory/{first}", {**agent, "X-Agent-ID": "../x"}, 422),
        (f"/api/v1/memory/{first}?agent_id=", agent, 422),
        (f"/api/v1/memory/{first}?agent_id=agent-2", agent, 404),
        ("/api/v1/memory/m-missing", agent, 404),
        (f"/api/v1/memory/{theirs.id}", agent, 404),
        (f"/api/v1/memory/{theirs.id}", {"X-API-Key": other_key, "X-Agent-ID": "agent-1"}, 200),
        (f"/api/v1/memory/{first}/", agent, 404),
        ("/api/v1/memory/events", agent, 200),
    ]
    for path, headers, status in left_to_the_route:
        assert (await _same(clients, path, headers)).status_code == status, path


async def test_a_get_through_the_step_touches_a_capped_tier(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    key = (await ApiKeyStore(engine).create(TENANT, name="touch")).key
    ref = f"mem://{TENANT}/agent-2"
    (entry,) = await store.put_many(ref, [_entry("Parks on level 2.", tier=Tier.EPISODIC)])
    fast, _ = clients
    headers = {"X-API-Key": key, "X-Agent-ID": "agent-2"}

    async def last_access() -> datetime:
        found = await store.get_entry(ref, entry.id, touch=False)
        assert found is not None
        return found.last_accessed_at

    # The first request authenticates the key (the route), the second is the step's.
    assert (await fast.get(f"/api/v1/memory/{entry.id}", headers=headers)).is_success
    by_the_route = await last_access()
    await asyncio.sleep(0.005)
    assert (await fast.get(f"/api/v1/memory/{entry.id}", headers=headers)).is_success
    assert await last_access() > by_the_route
