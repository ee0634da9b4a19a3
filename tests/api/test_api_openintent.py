"""OpenIntent RFC-0015 memory REST over HTTP, driven with the official OpenIntent SDK
(PyPI openintent 0.17) and with plain httpx for what the SDK does not reach."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from openintent import AsyncOpenIntentClient, ConflictError, OpenIntentClient
from openintent.exceptions import LeaseConflictError, NotFoundError

pytestmark = pytest.mark.slow


def _tenant() -> str:
    return "t" + uuid.uuid4().hex[:10]


async def test_sdk_round_trip(running_api) -> None:
    tenant = _tenant()
    key = await running_api.key_for(tenant)
    sdk = AsyncOpenIntentClient(base_url=running_api.url, api_key=key, agent_id="billing-01")
    try:
        created = await sdk.create_memory(
            agent_id="billing-01",
            namespace="invoice_processing",
            key="batch_progress",
            value={"total": 47, "completed": 23, "last_id": "inv_789"},
            memory_type="working",
            tags=["batch", "invoices", "in-progress"],
        )
        assert created.version == 1 and created.agent_id == "billing-01"
        assert isinstance(created.created_at, datetime) and created.created_at.tzinfo
        assert created.value == {"completed": 23, "last_id": "inv_789", "total": 47}

        fetched = await sdk.get_memory(created.id)
        assert fetched.key == "batch_progress" and fetched.value == created.value

        await sdk.create_memory(
            agent_id="billing-01",
            namespace="learned_patterns",
            key="stripe_thursdays",
            value={"confidence": 0.85},
            memory_type="episodic",
            tags=["stripe", "reliability"],
            pinned=True,
            priority="high",
        )
        everything = await sdk.list_memory("billing-01")
        assert {e.key for e in everything} == {"batch_progress", "stripe_thursdays"}
        tagged = await sdk.list_memory("billing-01", tags=["batch", "in-progress"])
        assert [e.id for e in tagged] == [created.id]
        episodic = await sdk.list_memory("billing-01", memory_type="episodic")
        assert [e.key for e in episodic] == ["stripe_thursdays"] and episodic[0].pinned

        updated = await sdk.update_memory(
            created.id, version=1, value={"total": 47, "completed": 24}
        )
        assert updated.version == 2 and updated.value["completed"] == 24
        with pytest.raises(ConflictError) as conflict:
            await sdk.update_memory(created.id, version=1, value={"total": 0})
        assert not isinstance(conflict.value, LeaseConflictError)
        assert conflict.value.current_version == 2

        await sdk.delete_memory(created.id)
        with pytest.raises(NotFoundError):
            await sdk.get_memory(created.id)
    finally:
        await sdk.close()


async def test_sync_sdk_client_works_too(running_api) -> None:
    import asyncio

    key = await running_api.key_for(_tenant())

    def use_sync_client() -> list[str]:
        client = OpenIntentClient(base_url=running_api.url, api_key=key, agent_id="a1")
        client.create_memory("a1", "ns", "k", {"x": 1}, memory_type="semantic")
        return [e.key for e in client.list_memory("a1")]

    assert await asyncio.to_thread(use_sync_client) == ["k"]


async def test_rfc_envelope_list_filters_and_paging(running_api) -> None:
    tenant = _tenant()
    async with await running_api.client_for(tenant) as http:
        for i in range(7):
            response = await http.post(
                "/api/v1/memory",
                json={
                    "agent_id": "a1",
                    "namespace": "billing.invoices" if i % 2 else "billing.refunds",
                    "key": f"k{i}",
                    "value": {"i": i},
                    "memory_type": "episodic",
                    "tags": ["batch", "even" if i % 2 == 0 else "odd"],
                },
            )
            assert response.status_code == 201, response.text
        page = (
            await http.get(
                "/api/v1/memory", params={"agent_id": "a1", "tags": "batch,odd", "limit": 2}
            )
        ).json()
        assert page["total"] == 3 and page["limit"] == 2 and page["offset"] == 0
        assert len(page["entries"]) == 2
        rest = (
            await http.get(
                "/api/v1/memory",
                params={"agent_id": "a1", "tags": "batch,odd", "limit": 2, "offset": 2},
            )
        ).json()
        keys = {e["key"] for e in page["entries"] + rest["entries"]}
        assert keys == {"k1", "k3", "k5"}
        prefixed = (
            await http.get("/api/v1/memory", params={"agent_id": "a1", "namespace": "billing.*"})
        ).json()
        assert prefixed["total"] == 7
        exact = (
            await http.get(
                "/api/v1/memory", params={"agent_id": "a1", "namespace": "billing.refunds"}
            )
        ).json()
        assert exact["total"] == 4
        # Timestamps are +00:00 (the SDK parses them with datetime.fromisoformat).
        assert exact["entries"][0]["created_at"].endswith("+00:00")
        newest = page["entries"][0]["updated_at"]
        before_newest = (
            await http.get(
                "/api/v1/memory",
                params={"agent_id": "a1", "tags": "batch,odd", "updated_before": newest},
            )
        ).json()
        assert before_newest["total"] == 2
        naive = await http.get(
            "/api/v1/memory", params={"agent_id": "a1", "updated_after": "2026-01-01T00:00:00"}
        )
        assert naive.status_code == 422 and naive.json()["field"] == "updated_after"


async def test_patch_needs_if_match_and_a_stale_one_gets_409_with_current_version(
    running_api,
) -> None:
    async with await running_api.client_for(_tenant()) as http:
        headers = {"X-Agent-ID": "a1"}
        entry = (
            await http.post(
                "/api/v1/memory",
                json={"namespace": "n", "key": "k", "value": {"note": "release the lease"}},
                headers=headers,
            )
        ).json()
        missing = await http.patch(
            f"/api/v1/memory/{entry['id']}", json={"value": {"v": 2}}, headers=headers
        )
        assert missing.status_code == 428 and missing.json()["field"] == "If-Match"
        ok = await http.patch(
            f"/api/v1/memory/{entry['id']}",
            json={"value": {"v": 2}},
            headers={**headers, "If-Match": "1"},
        )
        assert ok.status_code == 200 and ok.json()["version"] == 2
        stale = await http.patch(
            f"/api/v1/memory/{entry['id']}",
            json={"value": {"v": 3}},
            headers={**headers, "If-Match": "1"},
        )
        assert stale.status_code == 409
        body = stale.json()
        assert body["current_version"] == 2 and body["error"] == "version_conflict"
        # The body never echoes stored content, so a value that says "lease" cannot turn
        # the SDK's ConflictError into a LeaseConflictError.
        assert "lease" not in stale.text.lower()


async def test_pin_priority_ttl_and_working_capacity(running_api) -> None:
    from memory.store import PostgresMemoryStore, StoreLimits
    from schemas.memory_entry import Tier

    tenant = _tenant()
    async with await running_api.client_for(tenant) as http:
        headers = {"X-Agent-ID": "a1"}
        ttl = (
            await http.post(
                "/api/v1/memory",
                json={"namespace": "n", "key": "ttl", "value": {}, "ttl": "duration:PT24H"},
                headers=headers,
            )
        ).json()
        assert ttl["ttl"] == "duration:PT24H"
        created = datetime.fromisoformat(ttl["created_at"])
        expires = datetime.fromisoformat(ttl["expires_at"])
        assert (expires - created).total_seconds() == pytest.approx(86400, abs=2)
        pinned = await http.patch(
            f"/api/v1/memory/{ttl['id']}",
            json={"pinned": True, "priority": "high"},
            headers={**headers, "If-Match": "1"},
        )
        assert pinned.json()["pinned"] is True and pinned.json()["priority"] == "high"
        bad_ttl = await http.post(
            "/api/v1/memory",
            json={"namespace": "n", "key": "bad", "value": {}, "ttl": "forever"},
            headers=headers,
        )
        assert bad_ttl.status_code == 422 and bad_ttl.json()["field"] == "ttl"

    # A working tier at capacity answers 429 (RFC-0015 §9.4): a store with a small cap.
    services = running_api.services
    original = services.store
    services.store = PostgresMemoryStore(
        original.engine, limits=StoreLimits(capacity={Tier.WORKING: 2})
    )
    try:
        async with await running_api.client_for(tenant) as http:
            statuses = [
                (
                    await http.post(
                        "/api/v1/memory",
                        json={"namespace": "cap", "key": f"k{i}", "value": {"i": i}},
                        headers={"X-Agent-ID": "capped"},
                    )
                ).status_code
                for i in range(3)
            ]
            assert statuses == [201, 201, 429]
    finally:
        services.store = original


async def test_lifecycle_events_page_by_cursor_without_values(running_api) -> None:
    async with await running_api.client_for(_tenant()) as http:
        headers = {"X-Agent-ID": "a1"}
        entry = (
            await http.post(
                "/api/v1/memory",
                json={"namespace": "n", "key": "k", "value": {"secret-ish": "CANARY-EV"}},
                headers=headers,
            )
        ).json()
        await http.patch(
            f"/api/v1/memory/{entry['id']}",
            json={"value": {"v": 2}},
            headers={**headers, "If-Match": "1"},
        )
        await http.delete(f"/api/v1/memory/{entry['id']}", headers=headers)
        first = (
            await http.get("/api/v1/memory/events", params={"limit": 2}, headers=headers)
        ).json()
        assert [e["type"] for e in first["events"]] == ["memory.created", "memory.updated"]
        assert first["next_cursor"] == first["events"][-1]["seq"]
        rest = (
            await http.get(
                "/api/v1/memory/events",
                params={"cursor": first["next_cursor"], "limit": 2},
                headers=headers,
            )
        ).json()
        assert [e["type"] for e in rest["events"]] == ["memory.deleted"]
        assert rest["next_cursor"] is None
        assert rest["events"][0]["data"]["entry_id"] == entry["id"]
        assert "CANARY-EV" not in str(first) + str(rest)
