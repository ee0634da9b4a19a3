"""Bad values never reach the driver.

A value PostgreSQL cannot hold (NUL, unpaired surrogates, NaN, a non-JSON object, an
over-long id) is refused by the wire models' rules with a stable error type, and the
store re-checks every model it receives (a caller may have used model_construct): a
write raises InvalidInput naming the field and the rule, never the value or the content,
and changes nothing; a read with an id or key no valid entry can have finds nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas import input_rules as me
from schemas.errors import EntryNotFound, InvalidInput
from schemas.input_rules import MAX_METADATA_BYTES, MAX_METADATA_DEPTH, InvalidField
from schemas.memory_entry import (
    Attribution,
    EntryChanges,
    ForgetRequest,
    MemoryListOptions,
    MemoryQuery,
    NewMemoryEntry,
)
from tests.support.factories import note, unique_ref

CONTENT = "the customer prefers invoices by post"
NUL = "nul\x00here"
SURROGATE = "lone\ud800surrogate"
LOW_SURROGATE = "\udfff"


async def _stored(engine: AsyncEngine, ref: str) -> tuple[int, int]:
    """(entry rows, event rows) of one memoryRef, read straight from the tables."""
    async with engine.connect() as connection:
        entries = await connection.execute(
            select(func.count()).where(tables.entries.c.memory_ref == ref)
        )
        events = await connection.execute(
            select(func.count()).where(tables.events.c.memory_ref == ref)
        )
        return int(entries.scalar_one()), int(events.scalar_one())


def _assert_no_echo(error: InvalidInput, *values: object) -> None:
    message = str(error)
    assert message.startswith(f"{error.field}: ")
    assert message.isascii() and message.isprintable(), "only our own words in the message"
    for value in values:
        assert repr(value) not in message
        if isinstance(value, str) and value:
            assert value not in message


def _deep(levels: int) -> dict[str, Any]:
    """A metadata object nested ``levels`` deep (the object itself is level 1)."""
    value: Any = 1
    for _ in range(levels - 1):
        value = [value]
    return {"a": value}


def _self_referencing() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    return loop


# (fields for NewMemoryEntry, expected InvalidInput.field, expected error type, the value)
BAD_ENTRIES: list[tuple[dict[str, Any], str, str, object]] = [
    ({"content": NUL}, "content", me.TEXT_NUL, NUL),
    ({"content": SURROGATE}, "content", me.TEXT_SURROGATE, SURROGATE),
    ({"content": LOW_SURROGATE}, "content", me.TEXT_SURROGATE, LOW_SURROGATE),
    ({"tags": ("ok", NUL)}, "tags", me.TEXT_NUL, NUL),
    ({"tags": (SURROGATE,)}, "tags", me.TEXT_SURROGATE, SURROGATE),
    ({"id": NUL}, "id", me.TEXT_NUL, NUL),
    ({"id": SURROGATE}, "id", me.TEXT_SURROGATE, SURROGATE),
    ({"id": "x" * 129}, "id", "string_too_long", "x" * 129),
    ({"namespace": NUL, "key": "k"}, "namespace", me.TEXT_NUL, NUL),
    ({"namespace": "ns", "key": SURROGATE}, "key", me.TEXT_SURROGATE, SURROGATE),
    ({"subject": NUL}, "subject", me.TEXT_NUL, NUL),
    ({"subject": SURROGATE}, "subject", me.TEXT_SURROGATE, SURROGATE),
    ({"metadata": {"note": NUL}}, "metadata.note", me.TEXT_NUL, NUL),
    ({"metadata": {"a": [{"b": SURROGATE}]}}, "metadata.a[0].b", me.TEXT_SURROGATE, SURROGATE),
    ({"metadata": {NUL: 1}}, "metadata.<key 0>", me.TEXT_NUL, NUL),
    ({"metadata": {"x": 1, SURROGATE: 1}}, "metadata.<key 1>", me.TEXT_SURROGATE, SURROGATE),
    ({"metadata": {"n": {7: "seven"}}}, "metadata.n.<key 0>", me.METADATA_KEY_TYPE, 7),
    ({"metadata": {"n": math.nan}}, "metadata.n", me.METADATA_NUMBER_NOT_FINITE, math.nan),
    ({"metadata": {"n": [math.inf]}}, "metadata.n[0]", me.METADATA_NUMBER_NOT_FINITE, math.inf),
    ({"metadata": {"n": -math.inf}}, "metadata.n", me.METADATA_NUMBER_NOT_FINITE, -math.inf),
    ({"metadata": {"n": 2**63}}, "metadata.n", me.METADATA_INTEGER_RANGE, 2**63),
    ({"metadata": {"n": -(2**63) - 1}}, "metadata.n", me.METADATA_INTEGER_RANGE, -(2**63) - 1),
    ({"metadata": {"n": 10**5000}}, "metadata.n", me.METADATA_INTEGER_RANGE, None),
    ({"metadata": {"o": object()}}, "metadata.o", me.METADATA_NOT_JSON, None),
    ({"metadata": {"o": {1, 2}}}, "metadata.o", me.METADATA_NOT_JSON, None),
    ({"metadata": {"o": b"bytes"}}, "metadata.o", me.METADATA_NOT_JSON, b"bytes"),
    ({"metadata": {"o": Decimal("1.5")}}, "metadata.o", me.METADATA_NOT_JSON, Decimal("1.5")),
    ({"metadata": {"x": "y" * MAX_METADATA_BYTES}}, "metadata", me.METADATA_TOO_LARGE, None),
    ({"metadata": _deep(MAX_METADATA_DEPTH + 1)}, "metadata", me.METADATA_TOO_DEEP, None),
    ({"metadata": _self_referencing()}, "metadata", me.METADATA_TOO_DEEP, None),
]


def _bad_entry_ids() -> Iterator[str]:
    for fields, field, _, _ in BAD_ENTRIES:
        yield f"{field}-{'-'.join(sorted(fields))}"


@pytest.mark.parametrize(
    ("fields", "field", "error_type", "value"), BAD_ENTRIES, ids=_bad_entry_ids()
)
def test_the_model_refuses_with_a_stable_error_type(
    fields: dict[str, Any], field: str, error_type: str, value: object
) -> None:
    with pytest.raises(ValidationError) as info:
        NewMemoryEntry(**{"content": CONTENT, **fields})
    assert [e["type"] for e in info.value.errors()] == [error_type]
    assert CONTENT not in str(info.value)
    if isinstance(value, str):
        assert value not in str(info.value)


@pytest.mark.parametrize(
    ("fields", "field", "error_type", "value"), BAD_ENTRIES, ids=_bad_entry_ids()
)
async def test_put_refuses_with_invalid_input_and_stores_nothing(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    fields: dict[str, Any],
    field: str,
    error_type: str,
    value: object,
) -> None:
    ref = unique_ref()
    good = note("a good entry in the same batch")
    bad = NewMemoryEntry.model_construct(**{"content": CONTENT, **fields})
    for attempt in ([bad], [good, bad]):
        with pytest.raises(InvalidInput) as info:
            await store.put_many(ref, attempt)
        assert isinstance(info.value, InvalidField)
        assert (info.value.field, info.value.error_type) == (field, error_type)
        _assert_no_echo(info.value, CONTENT, value)
    assert await _stored(engine, ref) == (0, 0)


def test_metadata_limits_are_inclusive() -> None:
    envelope = len('{"x":""}')
    NewMemoryEntry(content="x", metadata={"x": "y" * (MAX_METADATA_BYTES - envelope)})
    NewMemoryEntry(content="x", metadata=_deep(MAX_METADATA_DEPTH))
    NewMemoryEntry(content="x", metadata={"lo": -(2**63), "hi": 2**63 - 1, "f": 1e308})
    with pytest.raises(ValidationError, match=f"over the limit of {MAX_METADATA_BYTES} bytes"):
        NewMemoryEntry(content="x", metadata={"x": "y" * (MAX_METADATA_BYTES - envelope + 1)})
    with pytest.raises(ValidationError, match=f"at most {MAX_METADATA_DEPTH} levels"):
        NewMemoryEntry(content="x", metadata=_deep(MAX_METADATA_DEPTH + 1))


def test_free_text_metadata_keys_are_named_by_position() -> None:
    with pytest.raises(ValidationError) as info:
        NewMemoryEntry(content="x", metadata={"plainKey": {"Customer said: hello": math.nan}})
    assert "metadata.plainKey.<key 0>: numbers must be finite" in str(info.value)
    assert "Customer" not in str(info.value)


async def test_metadata_round_trips(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    metadata = {"a": [1, 2.5, None, True, "é"], "b": {"c": -(2**63)}, "d": -0.0}
    entry = await store.put(ref, note("with metadata", metadata=metadata))
    found = await store.get_entry(ref, entry.id)
    assert found is not None and found.metadata == metadata


BAD_CHANGES: list[tuple[dict[str, Any], str, object]] = [
    ({"content": NUL}, "content", NUL),
    ({"content": SURROGATE}, "content", SURROGATE),
    ({"tags": (NUL,)}, "tags", NUL),
    ({"tags": (SURROGATE,)}, "tags", SURROGATE),
    ({"metadata": {"n": math.nan}}, "metadata.n", math.nan),
    ({"metadata": {SURROGATE: "v"}}, "metadata.<key 0>", SURROGATE),
    ({"metadata": {"v": NUL}}, "metadata.v", NUL),
    ({"metadata": {"o": object()}}, "metadata.o", None),
]


@pytest.mark.parametrize(("fields", "field", "value"), BAD_CHANGES)
async def test_update_refuses_and_changes_nothing(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    fields: dict[str, Any],
    field: str,
    value: object,
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note(CONTENT, "kept"))
    before = await _stored(engine, ref)
    with pytest.raises(InvalidInput) as info:
        await store.update(
            ref, entry.id, EntryChanges.model_construct(**fields), expected_version=1
        )
    assert info.value.field == field
    _assert_no_echo(info.value, CONTENT, value)
    assert await _stored(engine, ref) == before
    current = await store.get_entry(ref, entry.id, touch=False)
    assert current is not None
    assert (current.version, current.content, current.tags) == (1, CONTENT, ("kept",))


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ({"memory_id": NUL}, "id"),
        ({"memory_id": SURROGATE}, "id"),
        ({"memory_id": 42}, "id"),
        ({"memory_id": "x" * 129}, "id"),
        ({"expected_version": 0}, "expectedVersion"),
        ({"expected_version": 2**40}, "expectedVersion"),
        ({"expected_version": "1"}, "expectedVersion"),
        ({"attribution": Attribution.model_construct(agent_id=NUL)}, "agentId"),
    ],
)
async def test_update_refuses_bad_arguments(
    engine: AsyncEngine, store: PostgresMemoryStore, call: dict[str, Any], field: str
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note(CONTENT))
    before = await _stored(engine, ref)
    arguments: dict[str, Any] = {"memory_id": entry.id, "expected_version": 1, **call}
    memory_id = arguments.pop("memory_id")
    with pytest.raises(InvalidInput) as info:
        await store.update(ref, memory_id, EntryChanges(content="edited"), **arguments)
    assert info.value.field == field
    _assert_no_echo(info.value, CONTENT, call.get("memory_id"))
    assert await _stored(engine, ref) == before


async def test_attribution_is_checked_before_anything_is_stored(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    with pytest.raises(InvalidInput) as info:
        await store.put(ref, note(CONTENT), attribution=Attribution.model_construct(node_id=NUL))
    assert info.value.field == "nodeId"
    assert await _stored(engine, ref) == (0, 0)


IMPOSSIBLE = [NUL, SURROGATE, "\x00", "", "x" * 129, 42, b"bytes", ("tuple",)]


@pytest.mark.parametrize("value", IMPOSSIBLE, ids=repr)
async def test_reads_with_an_impossible_id_or_key_find_nothing(
    engine: AsyncEngine, store: PostgresMemoryStore, value: Any
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note(CONTENT, "tag", namespace="ns", key="k", subject="s"))
    assert await store.get(ref, value) is None
    assert await store.get(ref, None) is None  # type: ignore[arg-type]
    assert await store.get_entry(ref, value) is None
    assert await store.get_by_key(ref, value, "k") is None
    assert await store.get_by_key(ref, "ns", value) is None
    assert await store.list(ref, MemoryListOptions.model_construct(tag=value)) == []
    for query in (
        MemoryQuery.model_construct(tags_all=(value,)),
        MemoryQuery.model_construct(tags_any=(value,)),
        MemoryQuery.model_construct(namespace=value),
        MemoryQuery.model_construct(subject=value),
        MemoryQuery.model_construct(tier=value),
    ):
        assert await store.query(ref, query) == []
        assert await store.count(ref, query) == 0
    # tagsAny is an OR: a tag no entry can carry is no reason to miss the others.
    either = MemoryQuery.model_construct(tags_any=("tag", value))
    assert [e.id for e in await store.query(ref, either)] == [entry.id]
    assert await store.delete(ref, value) is False
    assert await store.snapshot_info(ref, value) is None
    assert await store.read_snapshot(ref, value) == []
    assert await store.events(ref, types=[value]) == []
    assert await store.lineage(ref, value) == []  # found by tests/reliability/test_fuzz_store.py
    # Nothing was deleted, and the good entry is still found.
    assert await store.get(ref, entry.id) is not None
    assert await _stored(engine, ref) == (1, 2)


async def test_reads_refuse_a_bad_limit(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    with pytest.raises(InvalidInput) as info:
        await store.list(ref, MemoryListOptions.model_construct(limit=0))
    assert info.value.field == "limit"
    with pytest.raises(InvalidInput) as info:
        ten: Any = "ten"
        await store.query(ref, MemoryQuery.model_construct(limit=ten))
    assert info.value.field == "limit"
    with pytest.raises(InvalidInput) as info:
        await store.events(ref, after_seq=2**70)
    assert info.value.field == "afterSeq"


async def test_other_writes_refuse_bad_values(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put(ref, note(CONTENT, "tag"))
    before = await _stored(engine, ref)
    cases: list[tuple[Any, str]] = [
        (store.forget(ref, ForgetRequest.model_construct(ids=(NUL,))), "ids"),
        (store.forget(ref, ForgetRequest.model_construct(tag=SURROGATE)), "tag"),
        (store.forget(ref, ForgetRequest.model_construct(subject=NUL)), "subject"),
        (store.snapshot(ref, NUL), "snapshotId"),
        (store.snapshot(ref, "snap", entry_ids=[SURROGATE]), "entryIds"),
        (store.snapshot(ref, "snap", tiers=["no-such-tier"]), "tiers"),  # type: ignore[list-item]
    ]
    for call, field in cases:
        with pytest.raises(InvalidInput) as info:
            await call
        assert info.value.field == field
        _assert_no_echo(info.value, NUL, SURROGATE, CONTENT)
    assert await _stored(engine, ref) == before


# ---------------------------------------------------------------------- properties

# Any code point, surrogates included (Hypothesis leaves them out unless asked), and in
# about half the strings one of the troublemakers spliced in somewhere.
_any_chars = st.text(st.characters(exclude_categories=()), max_size=8)
any_text = st.tuples(
    _any_chars, st.sampled_from(["", "", "", "\x00", "\ud800", "\udfff", "\x1f"]), _any_chars
).map("".join)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**62, max_value=2**70)
    | st.floats()  # NaN and the infinities included
    | any_text
)
json_ish = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=12,
)
metadata_ish = st.dictionaries(any_text | st.integers(), json_ish, max_size=4)
entry_ids = (
    st.none() | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True) | any_text
)
MARKER = "§content§"  # in every content drawn, so an echo of content is easy to spot

PROPERTY_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _assert_clean(error: InvalidInput, *inputs: object) -> None:
    message = str(error)
    assert MARKER not in message
    assert message.isascii() and message.isprintable()
    # The field path holds wire names, identifier-like metadata keys and positions only;
    # the rule holds no input at all. (Short strings such as "a" occur in any sentence,
    # and a value may happen to spell part of a field name, "metada" in "metadata".)
    assert re.fullmatch(r"[A-Za-z_][\w.\-]*(\[\d+\]|\.<key \d+>|\.[\w-]+)*", error.field)
    assert not [s for s in _strings(inputs) if len(s) >= 6 and s in error.rule]


@PROPERTY_SETTINGS
@given(
    content=any_text,
    tags=st.lists(any_text, max_size=3),
    metadata=metadata_ish,
    entry_id=entry_ids,
    names=st.tuples(st.none() | any_text, st.none() | any_text, st.none() | any_text),
)
async def test_put_succeeds_or_raises_invalid_input_without_echo(
    store: PostgresMemoryStore,
    content: str,
    tags: list[str],
    metadata: dict[Any, Any],
    entry_id: str | None,
    names: tuple[str | None, str | None, str | None],
) -> None:
    ref = unique_ref()
    namespace, key, subject = names
    fields: dict[str, Any] = {
        "content": MARKER + content,
        "tags": tuple(tags),
        "metadata": metadata,
        "id": entry_id,
        "namespace": namespace,
        "key": key,
        "subject": subject,
    }
    try:
        stored = await store.put(ref, NewMemoryEntry.model_construct(**fields))
    except InvalidInput as error:
        event(f"refused: {error.field.split('.')[0]}")
        _assert_clean(error, *fields.values())
        assert await store.count(ref) == 0
        return
    event("stored")
    found = await store.get_entry(ref, stored.id)
    # (Metadata is compared elsewhere: jsonb may hand 1e300 back as an integer.)
    assert found is not None and found.content == MARKER + content


@PROPERTY_SETTINGS
@given(content=any_text, metadata=metadata_ish)
async def test_content_and_metadata_alone_succeed_or_raise_invalid_input_without_echo(
    store: PostgresMemoryStore, content: str, metadata: dict[Any, Any]
) -> None:
    # The test above mostly stops at the first bad tag or id; here the other fields are
    # valid, so the content and metadata rules (and the driver) see every draw.
    ref = unique_ref()
    try:
        stored = await store.put(
            ref, NewMemoryEntry.model_construct(content=MARKER + content, metadata=metadata)
        )
    except InvalidInput as error:
        event(f"refused: {error.field.split('.')[0]}")
        _assert_clean(error, content, metadata)
        assert await store.count(ref) == 0
        return
    event("stored")
    found = await store.get_entry(ref, stored.id)
    assert found is not None and found.content == MARKER + content
    assert set(found.metadata) == set(metadata)


@PROPERTY_SETTINGS
@given(
    content=st.none() | any_text,
    tags=st.none() | st.lists(any_text, max_size=3).map(tuple),
    metadata=st.none() | metadata_ish,
    memory_id=st.just("known") | entry_ids,
)
async def test_update_and_get_succeed_or_raise_invalid_input_without_echo(
    store: PostgresMemoryStore,
    content: str | None,
    tags: tuple[str, ...] | None,
    metadata: dict[Any, Any] | None,
    memory_id: Any,
) -> None:
    ref = unique_ref()
    await store.put(ref, NewMemoryEntry(id="known", content=MARKER + "original"))
    # get never raises for any id: the entry or None.
    got = await store.get(ref, memory_id)
    assert got is None or got.id == memory_id
    changes: dict[str, Any] = {
        "content": None if content is None else MARKER + content,
        "tags": tags,
        "metadata": metadata,
    }
    try:
        await store.update(
            ref, memory_id, EntryChanges.model_construct(**changes), expected_version=1
        )
    except InvalidInput as error:
        event(f"refused: {error.field.split('.')[0]}")
        _assert_clean(error, *changes.values(), memory_id)
        unchanged = await store.get_entry(ref, "known", touch=False)
        assert unchanged is not None and unchanged.version == 1
        return
    except EntryNotFound:  # the one other outcome: a well-formed id of no entry
        event("not found")
        assert memory_id != "known"
        return
    event("updated")
    updated = await store.get_entry(ref, "known", touch=False)
    assert updated is not None and updated.version == 2


def test_error_messages_name_the_limits() -> None:
    # docs/operations.md (When things go wrong) documents these; keep the words and
    # numbers stable.
    with pytest.raises(ValidationError) as info:
        NewMemoryEntry(content="x", metadata={"n": 2**64})
    assert "integers must fit in 64 bits" in str(info.value)
    assert re.search(r"metadata\.n: numbers must be finite", str(_error({"n": math.nan})))


def _error(metadata: dict[str, Any]) -> ValidationError:
    try:
        NewMemoryEntry(content="x", metadata=metadata)
    except ValidationError as error:
        return error
    raise AssertionError("expected a ValidationError")
