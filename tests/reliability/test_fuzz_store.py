"""Hostile input through the store API (issue 12, the store surface): Hypothesis draws
2,000 calls (tests/support/fuzzing.py) of every public store operation (writes, reads,
forget, lineage, events, commitments, time zones) with hostile memoryRefs, ids, content,
tags, names, metadata, versions and limits, some aimed at a real entry of a real memoryRef.

Each call either succeeds or raises one of the store's own errors (InvalidInput naming
the field, not found, version conflict, duplicate key); nothing else escapes, no message
carries what was passed, and a refused call changes nothing stored (the same table
fingerprint as the HTTP fuzzing)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from memory.store import PostgresMemoryStore
from schemas.errors import InvalidInput, MemoryError_
from schemas.memory_entry import (
    EntryChanges,
    ForgetRequest,
    MemoryListOptions,
    MemoryQuery,
    NewMemoryEntry,
)
from tests.support.fuzzing import fuzz_settings
from tests.support.hostile_input import MARKER, hostile_text, json_values
from tests.support.scan import fingerprint

pytestmark = pytest.mark.slow

REF = "mem://fuzz-store/agent-1"
SEEDED_ID = "seeded-entry"

refs = (
    st.sampled_from(
        [
            REF,
            REF,
            "mem://FUZZ-STORE/agent-1",
            "mem://fuzz-store./agent-1",
            "mem://fuzz-store/agent-1/",
            "mem://fuzz-store/../agent-1",
            "mem://fuzz-store",
            "",
        ]
    )
    | hostile_text
    | st.integers()
    | st.none()
)
ids = st.sampled_from([SEEDED_ID, SEEDED_ID.upper(), "m0", "..", "x" * 200]) | hostile_text
names = st.none() | st.sampled_from(["ns", "a_b", "a/b"]) | hostile_text
tags: st.SearchStrategy[Any] = st.lists(
    hostile_text | st.sampled_from(["t", "commitment"]) | st.integers(), max_size=3
)
ints: st.SearchStrategy[Any] = (
    st.sampled_from([0, 1, 2, -1, 2**31, 2**63, 10**20]) | st.booleans() | st.floats()
)
metadata = st.dictionaries(hostile_text | st.integers(), json_values, max_size=3) | json_values
zones = (
    st.sampled_from(["UTC", "Europe/Berlin", "Mars/Olympus", "", "../etc/localtime"]) | hostile_text
)


OPERATIONS = [
    *("put", "put_many", "update", "delete", "get", "get_entry", "get_by_key", "list"),
    *("query", "count", "events", "lineage", "forget", "commitments_list"),
    *("commitments_show", "commitments_cancel", "time_zone"),
]


def _entry(draw: st.DrawFn) -> NewMemoryEntry:
    fields: dict[str, Any] = draw(
        st.fixed_dictionaries(
            {"content": hostile_text},
            optional={
                "tags": tags.map(tuple),
                "id": ids,
                "namespace": names,
                "key": names,
                "subject": names,
                "metadata": metadata,
                "tier": st.sampled_from(["working", "episodic", "semantic", "x", 1]),
                "pinned": st.booleans() | hostile_text,
                "priority": st.sampled_from(["low", "high", "urgent", 3]),
                "expires_at": st.sampled_from(["2020-01-01", "soon", 1]) | st.none(),
            },
        )
    )
    return NewMemoryEntry.model_construct(**fields)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, bool, Any]:
    """(operation name, whether it writes, a coroutine factory taking the store)."""
    ref = draw(refs)
    kind = draw(st.sampled_from(OPERATIONS))
    if kind == "put":
        entry = _entry(draw)
        return kind, True, lambda s: s.put(ref, entry)
    if kind == "put_many":
        entries = [_entry(draw) for _ in range(draw(st.integers(0, 3)))]
        return kind, True, lambda s: s.put_many(ref, entries)
    if kind == "update":
        changed: dict[str, Any] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "content": hostile_text,
                    "tags": tags.map(tuple),
                    "metadata": metadata,
                    "pinned": st.booleans() | hostile_text,
                },
            )
        )
        changes = EntryChanges.model_construct(**changed)
        memory_id, version = draw(ids), draw(ints)
        return kind, True, lambda s: s.update(ref, memory_id, changes, expected_version=version)
    if kind == "delete":
        memory_id = draw(ids)
        return kind, True, lambda s: s.delete(ref, memory_id)
    if kind in ("get", "get_entry", "lineage"):
        memory_id = draw(ids)
        return kind, False, lambda s: getattr(s, kind)(ref, memory_id)
    if kind == "get_by_key":
        namespace, key = draw(names), draw(names)
        return kind, False, lambda s: s.get_by_key(ref, namespace, key)
    if kind == "list":
        options = MemoryListOptions.model_construct(limit=draw(ints | st.none()), tag=draw(names))
        return kind, False, lambda s: s.list(ref, options)
    if kind in ("query", "count"):
        query = MemoryQuery.model_construct(
            tags_all=tuple(draw(tags)),
            tags_any=tuple(draw(tags)),
            tier=None,
            namespace=draw(names),
            namespace_prefix=draw(names),
            key=draw(names),
            pinned=None,
            subject=draw(names),
            updated_after=None,
            updated_before=None,
            limit=draw(ints),
            offset=draw(ints),
        )
        return kind, False, lambda s: getattr(s, kind)(ref, query)
    if kind == "events":
        after, limit = draw(ints), draw(ints)
        return kind, False, lambda s: s.events(ref, after_seq=after, limit=limit)
    if kind == "forget":
        request = ForgetRequest.model_construct(
            ids=tuple(draw(st.lists(ids, max_size=2))),
            tag=draw(names),
            subject=draw(names),
            tenant_wide=draw(st.booleans()),
        )
        return kind, True, lambda s: s.forget(ref, request)
    if kind.startswith("commitments_"):
        commitment_id = draw(ids)
        if kind == "commitments_list":
            return kind, False, lambda s: s.commitments.list(ref)
        if kind == "commitments_show":
            return kind, False, lambda s: s.commitments.show(ref, commitment_id)
        return kind, True, lambda s: s.commitments.cancel(ref, commitment_id)
    tenant, zone = draw(hostile_text | st.just("fuzz-store")), draw(zones)
    return kind, True, lambda s: s.commitments.set_time_zone(tenant, zone)


BASELINE: dict[object, str] = {}


@pytest.fixture
async def seeded_store(store: PostgresMemoryStore, engine) -> PostgresMemoryStore:
    await store.put(REF, NewMemoryEntry(id=SEEDED_ID, content="a seeded entry", tags=("t",)))
    BASELINE[engine] = await fingerprint(engine)
    return store


@fuzz_settings()
@given(call=calls())
async def test_hostile_store_calls_succeed_or_raise_the_stores_own_errors(
    seeded_store, engine, call
) -> None:
    kind, writes, run = call
    try:
        await run(seeded_store)
    except MemoryError_ as error:
        event(f"{kind}: {type(error).__name__}")
        assert MARKER not in str(error), (kind, str(error))
        if isinstance(error, InvalidInput):
            assert error.field and MARKER not in error.field
        assert await fingerprint(engine) == BASELINE[engine], (kind, str(error))
        return
    event(f"{kind}: ok")
    if writes:
        BASELINE[engine] = await fingerprint(engine)
