"""RFC-0015 §5 lifecycle events read per intent (issue 22, item 9), where the official
OpenIntent SDK (PyPI openintent 0.17) reads an intent's events:
``OpenIntentClient.get_events`` -> ``GET /api/v1/intents/{intent_id}/events``.

Events link to an intent through a keyed digest of (tenant, intent id), never the id's
text (memory/keyed_ids/intent_links.py); the route answers a bare list, oldest first, and an
intent of another tenant or with no events as an empty list, like the SDK's reference
server (docs/http-api.md, OpenIntent events)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import pytest
from openintent import OpenIntentClient
from openintent.exceptions import OpenIntentError
from openintent.models import EventType, IntentEvent

pytestmark = pytest.mark.slow

T = TypeVar("T")
INTENT = "intent_01HABC release: Q3 invoices"  # free text, spaces and all


def _tenant() -> str:
    return "t" + uuid.uuid4().hex[:10]


async def sdk(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """The synchronous official client, off the event loop serving the app."""
    return await asyncio.to_thread(call, *args, **kwargs)


def _scoped(intent: str) -> dict[str, Any]:
    return {"scope": {"intent_id": intent}}


def _summary(events: list[IntentEvent]) -> list[tuple[str, str, int]]:
    return [(e.event_type.value, e.payload["entry_id"], e.payload["version"]) for e in events]


async def test_an_intents_lifecycle_reads_through_the_official_sdk(running_api) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"
    tenant = _tenant()
    key = await running_api.key_for(tenant)
    client = OpenIntentClient(base_url=running_api.url, api_key=key, agent_id="planner-1")
    try:
        first = await sdk(
            client.create_memory,
            "planner-1",
            "invoices",
            "batch",
            {"note": canary},
            memory_type="working",
            tags=["batch"],
            **_scoped(INTENT),
        )
        # Another agent working on the same intent: its events are the intent's too.
        helper = await sdk(
            client.create_memory,
            "worker-2",
            "invoices",
            "helper",
            {"note": canary},
            memory_type="episodic",
            **_scoped(INTENT),
        )
        # Not the intent's: no scope, and another intent's scope.
        unscoped = await sdk(client.create_memory, "planner-1", "invoices", "free", {"n": 1})
        other = await sdk(
            client.create_memory, "planner-1", "invoices", "other", {"n": 2}, **_scoped("J-1")
        )
        await sdk(client.update_memory, first.id, version=1, value={"note": canary, "n": 2})
        await sdk(client.delete_memory, first.id)

        events = await sdk(client.get_events, INTENT)
        assert _summary(events) == [
            ("memory.created", first.id, 1),
            ("memory.created", helper.id, 1),
            ("memory.updated", first.id, 2),
            ("memory.deleted", first.id, 2),
        ]
        assert {e.intent_id for e in events} == {INTENT}
        assert [e.actor for e in events] == ["planner-1", "worker-2", "planner-1", "planner-1"]
        # Stable ids: the agent and the event's place in the agent's log.
        assert [e.id for e in events] == [f"{e.actor}:{e.sequence}" for e in events]
        assert len({e.id for e in events}) == 4
        assert all(e.created_at.tzinfo is not None for e in events)
        assert [e.created_at for e in events] == sorted(e.created_at for e in events)
        created, _, updated, deleted = (e.payload for e in events)
        assert created == {
            "entry_id": first.id,
            "namespace": "invoices",
            "key": "batch",
            "memory_type": "working",
            "version": 1,
            "previous_version": None,
            # Deleting the last entry tagged "batch" forgot the tag in the log too (the
            # redaction keeps the event's intent link).
            "tags": ["[FORGOTTEN]"],
            "reason": None,
        }
        assert (updated["version"], updated["previous_version"]) == (2, 1)
        assert deleted["reason"] == "delete"
        seen = {e.payload["entry_id"] for e in events}
        assert unscoped.id not in seen and other.id not in seen
        assert _summary(await sdk(client.get_events, "J-1")) == [("memory.created", other.id, 1)]

        # Filters: event_type (any OpenIntent type; we emit the memory.* ones), since
        # (strictly after), limit (oldest first).
        only_updates = await sdk(client.get_events, INTENT, event_type=EventType.MEMORY_UPDATED)
        assert _summary(only_updates) == [("memory.updated", first.id, 2)]
        assert await sdk(client.get_events, INTENT, event_type=EventType.COMMENT) == []
        since = events[0].created_at
        later = await sdk(client.get_events, INTENT, since=since)
        assert _summary(later) == _summary([e for e in events if e.created_at > since])
        assert 0 < len(later) < len(events)
        assert [e.id for e in await sdk(client.get_events, INTENT, limit=2)] == [
            e.id for e in events[:2]
        ]

        # Unknown intents, and the same intent id under another tenant's key, read empty.
        assert await sdk(client.get_events, "no-such-intent") == []
        stranger_key = await running_api.key_for(_tenant())
        stranger = OpenIntentClient(running_api.url, stranger_key, agent_id="planner-1")
        try:
            assert await sdk(stranger.get_events, INTENT) == []
        finally:
            stranger.close()
    finally:
        client.close()

    # The wire: a bare list (what the SDK's reference server answers), content-free.
    async with await running_api.client_for(_tenant()) as http:
        raw = await http.get(f"/api/v1/intents/{INTENT}/events")
        assert raw.status_code == 200 and raw.json() == []
    async with await running_api.client_for(tenant) as http:
        raw = await http.get(f"/api/v1/intents/{INTENT}/events", params={"limit": 1000})
        body = raw.json()
        assert isinstance(body, list) and len(body) == 4
        assert set(body[0]) == {
            *("id", "intent_id", "event_type", "actor", "payload", "created_at", "sequence")
        }
        assert body[0]["created_at"].endswith("+00:00")
        for bad in ({"limit": 1001}, {"event_type": canary}, {"since": canary}):
            refused = await http.get(f"/api/v1/intents/{INTENT}/events", params=bad)
            assert refused.status_code == 422
            assert canary not in refused.text
        assert canary not in raw.text


async def test_bad_event_type_limit_and_since_are_refused_naming_the_field(
    running_api,
) -> None:
    tenant = _tenant()
    key = await running_api.key_for(tenant)
    client = OpenIntentClient(base_url=running_api.url, api_key=key, agent_id="a1")
    try:
        with pytest.raises(OpenIntentError) as over:
            await sdk(client.get_events, INTENT, limit=1001)
        assert over.value.status_code == 422
        assert over.value.response is not None
        assert over.value.response["field"] == "limit"
        assert over.value.response["limit"] == 1000
    finally:
        client.close()
    async with await running_api.client_for(tenant) as http:
        path = f"/api/v1/intents/{INTENT}/events"
        cases = {
            "event_type": ["memory.exploded", "", "MEMORY.CREATED"],
            "limit": ["0", "-1", "1001", "ten"],
            "since": ["yesterday", "2026-01-01T00:00:00"],  # a naive time is ambiguous
        }
        for field, values in cases.items():
            for value in values:
                response = await http.get(path, params={field: value})
                assert response.status_code == 422, (field, value, response.text)
                answer = response.json()
                assert answer["error"] == "invalid_input" and answer["field"] == field
                assert answer["message"].startswith(f"{field}:")
                if field == "limit" and value != "ten":
                    assert answer["limit"] == 1000
        unauthenticated = await http.get(path, headers={"X-API-Key": "nope"})
        assert unauthenticated.status_code == 401


async def test_expiry_and_eviction_events_carry_the_intent(running_api) -> None:
    from memory.store import PostgresMemoryStore, StoreLimits
    from schemas.memory_entry import Tier
    from tests.support.factories import Clock

    tenant = _tenant()
    key = await running_api.key_for(tenant)
    services = running_api.services
    original = services.store
    clock = Clock(original.now())
    # An episodic tier of two (it evicts, RFC-0015 §9.4) and a clock the test moves.
    services.store = PostgresMemoryStore(
        original.engine,
        limits=StoreLimits(capacity={Tier.WORKING: 1000, Tier.EPISODIC: 2}),
        clock=clock,
    )
    client = OpenIntentClient(base_url=running_api.url, api_key=key, agent_id="a1")
    expiring = {"ttl": "duration:PT1M", **_scoped(INTENT)}
    try:
        episodic = []
        for n in range(3):  # the third write evicts the least recently used, the first
            clock.now += timedelta(seconds=1)
            episodic.append(
                await sdk(
                    client.create_memory,
                    "a1",
                    "episodes",
                    f"e{n}",
                    {"n": n},
                    memory_type="episodic",
                    **_scoped(INTENT),
                )
            )
        short = await sdk(client.create_memory, "a1", "ttl", "short", {"n": 1}, **expiring)
        # TTL through erasure (what collect_garbage runs first) ...
        clock.now += timedelta(minutes=2)
        ref = f"mem://{tenant}/a1"
        assert (await services.store.expire(ref)).entries == 1
        # ... and through the plain sweep.
        swept = await sdk(client.create_memory, "a1", "ttl", "swept", {"n": 2}, **expiring)
        clock.now += timedelta(minutes=2)
        assert await services.store.gc_expired(ref) == 1

        evicted = await sdk(client.get_events, INTENT, event_type=EventType.MEMORY_EVICTED)
        assert [(e.payload["entry_id"], e.payload["reason"]) for e in evicted] == [
            (episodic[0].id, "capacity")
        ]
        expired = await sdk(client.get_events, INTENT, event_type=EventType.MEMORY_EXPIRED)
        assert [(e.payload["entry_id"], e.payload["reason"]) for e in expired] == [
            (short.id, "ttl"),
            (swept.id, "ttl"),
        ]
        assert all(isinstance(e.created_at, datetime) for e in evicted + expired)
        everything = await sdk(client.get_events, INTENT)
        assert [e.event_type.value for e in everything] == [
            *["memory.created"] * 3,
            "memory.evicted",
            "memory.created",
            "memory.expired",
            "memory.created",
            "memory.expired",
        ]
    finally:
        client.close()
        services.store = original


def test_the_route_knows_every_event_type_of_the_sdk() -> None:
    """event_type accepts exactly the SDK's EventType values (a newer SDK that adds one
    fails here until the list in api/openintent_events.py has it too)."""
    from api.openintent_events import OPENINTENT_EVENT_TYPES

    assert set(OPENINTENT_EVENT_TYPES) == {t.value for t in EventType}
