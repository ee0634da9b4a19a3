"""CTI-1: no read against one tenant's memoryRef returns another tenant's entries."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.store import PostgresMemoryStore
from schemas.errors import InvalidMemoryRef
from schemas.memory_entry import ForgetRequest, MemoryListOptions, MemoryQuery, NewMemoryEntry
from tests.memory.test_refs import MALFORMED
from tests.support.factories import note

REF_A = "mem://tenant-a/agent-1"
REF_B = "mem://tenant-b/agent-1"


async def test_same_entry_id_under_two_tenants_stays_separate(
    store: PostgresMemoryStore,
) -> None:
    await store.put(REF_A, NewMemoryEntry(id="shared-id", content="alpha secret plan"))
    await store.put(REF_B, NewMemoryEntry(id="shared-id", content="bravo quarterly numbers"))
    a = await store.get(REF_A, "shared-id")
    b = await store.get(REF_B, "shared-id")
    assert a is not None and a.content == "alpha secret plan"
    assert b is not None and b.content == "bravo quarterly numbers"
    assert [e.content for e in await store.list(REF_A)] == ["alpha secret plan"]


async def test_ids_taken_from_another_tenant_return_nothing(store: PostgresMemoryStore) -> None:
    foreign = await store.put(REF_B, note("bravo only", "finance"))
    assert await store.get(REF_A, foreign.id) is None
    assert await store.get_entry(REF_A, foreign.id) is None
    assert await store.list(REF_A, MemoryListOptions(tag="finance")) == []
    assert await store.query(REF_A, MemoryQuery(tags_any=("finance",))) == []
    assert await store.count(REF_A) == 0
    # Destructive paths cannot reach across either.
    assert await store.delete(REF_A, foreign.id) is False
    assert await store.forget(REF_A, ForgetRequest(ids=(foreign.id,))) == 0
    assert await store.get(REF_B, foreign.id) is not None


async def test_guessed_ids_return_none(store: PostgresMemoryStore) -> None:
    await store.put(REF_B, note("bravo"))
    for guess in ("1", "m0", "%", "*", "' OR '1'='1", "shared-id", "m" + "0" * 32):
        assert await store.get(REF_A, guess) is None


async def test_two_adapter_instances_over_one_database(engine: AsyncEngine) -> None:
    adapter_a = PostgresMemoryStore(engine)
    adapter_b = PostgresMemoryStore(engine)
    entry = await adapter_b.put(REF_B, note("b-only content"))
    # Tenant-A's adapter given a tenant-B-shaped ref of another agent, and its own ref.
    assert await adapter_a.list("mem://tenant-b/agent-2") == []
    assert await adapter_a.get(REF_A, entry.id) is None
    assert await adapter_a.list(REF_A) == []
    assert (await adapter_a.get(REF_B, entry.id)) is not None  # same ref, same tenant


async def test_agents_and_scopes_of_one_tenant_are_separate_refs(
    store: PostgresMemoryStore,
) -> None:
    await store.put("mem://acme/agent-1/support", note("scoped"))
    assert await store.list("mem://acme/agent-1") == []
    assert len(await store.list("mem://acme/agent-1/support")) == 1


@pytest.mark.parametrize("raw", [*MALFORMED, None, 7])
async def test_malformed_refs_read_as_empty_and_writes_fail_clearly(
    store: PostgresMemoryStore, raw: object
) -> None:
    await store.put(REF_A, note("present"))
    assert await store.list(raw) == []  # type: ignore[arg-type]
    assert await store.get(raw, "anything") is None  # type: ignore[arg-type]
    assert await store.query(raw, MemoryQuery()) == []  # type: ignore[arg-type]
    assert await store.events(raw) == []  # type: ignore[arg-type]
    with pytest.raises(InvalidMemoryRef) as info:
        await store.put(raw, note("new"))  # type: ignore[arg-type]
    assert "memoryRef" in str(info.value)


async def test_traversal_cannot_reach_a_sibling_tenant(store: PostgresMemoryStore) -> None:
    await store.put(REF_B, note("bravo"))
    for probe in ("mem://tenant-a/../tenant-b/agent-1", "mem://tenant-a/agent-1/../../tenant-b"):
        assert await store.list(probe) == []


async def test_tenant_wide_subject_forget_stays_inside_the_tenant(
    store: PostgresMemoryStore,
) -> None:
    await store.put("mem://tenant-a/agent-1", note("a1 about bob", subject="user-bob"))
    await store.put("mem://tenant-a/agent-2", note("a2 about bob", subject="user-bob"))
    await store.put(REF_B, note("b about bob", subject="user-bob"))
    removed = await store.forget(
        "mem://tenant-a/agent-1", ForgetRequest(subject="user-bob", tenant_wide=True)
    )
    assert removed == 2
    assert await store.list("mem://tenant-a/agent-2") == []
    assert len(await store.list(REF_B)) == 1
