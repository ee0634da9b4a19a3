"""Auditing an inference before it fires, through the store API: the reading each
commitment keeps (span, checksum, conventions), the content-free commitment.inferred
and commitment.cancelled events, and a tenant that requires confirmation (proposed ->
confirmed -> armed, or cancelled)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest
from schemas.errors import InvalidInput
from schemas.memory_entry import EntryChanges
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import Clock, note, unique_ref

SAID = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "json"
TASK = "renew the domain for the Lisbon office"


@pytest.fixture
def book(engine: AsyncEngine) -> PostgresMemoryStore:
    return PostgresMemoryStore(engine, clock=Clock(SAID))


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"event-{name}.schema.json").read_text())
    return loaded


async def _infer(store: PostgresMemoryStore, ref: str) -> None:
    await store.commitments.infer(InferCommitmentsRequest(memory_ref=parse_memory_ref(ref)))


async def _payloads(store: PostgresMemoryStore, ref: str, kind: str) -> list[dict[str, Any]]:
    return [dict(e.payload) for e in await store.events(ref, types=[kind])]


async def _confirming_tenant(store: PostgresMemoryStore) -> str:
    ref = unique_ref()
    await store.commitments.update_settings(parse_memory_ref(ref).tenant, require_confirmation=True)
    return ref


async def test_a_commitment_keeps_what_inference_read_and_announces_it(
    book: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    text = f"Remind me in 5 days to {TASK}"
    entry = await book.put(ref, note(text))
    await _infer(book, ref)

    (record,) = await book.commitments.list(ref)
    assert record.state == "armed"
    assert record.reading is not None
    start, end = record.reading.span_start, record.reading.span_end
    assert text[start:end] == "in 5 days"
    assert record.understood == "once 2026-11-28T10:00:00Z"

    detail = await book.commitments.show(ref, record.commitment_id)
    assert detail is not None and detail.read_text == "in 5 days" and not detail.read_changed

    (inferred,) = await _payloads(book, ref, "commitment.inferred")
    jsonschema.validate(inferred, _schema("commitment-inferred"))
    assert inferred == {
        "commitmentId": record.commitment_id,
        "memoryRef": ref,
        "condition": "time",
        "memoryId": entry.id,
        "state": "armed",
        "timeZone": "UTC",
        "dueAt": "2026-11-28T10:00:00.000Z",
        "spanStart": start,
        "spanEnd": end,
        "conventions": list(record.reading.conventions),
    }
    # A second inference of the same entry records and announces nothing more.
    await book.commitments.infer(
        InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), memory_ids=(entry.id,))
    )
    assert len(await _payloads(book, ref, "commitment.inferred")) == 1


async def test_the_lifecycle_events_carry_no_text_of_the_entry(book: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await book.put(ref, note(f"Remind me every Thursday at 17:00 to {TASK}"))
    await book.put(ref, note("Follow up when the contract is signed", "lisbon-office-lease"))
    await _infer(book, ref)
    records = await book.commitments.list(ref)
    for record in records:
        await book.commitments.cancel(ref, record.commitment_id)
    events = [e for e in await book.events(ref) if e.type.startswith("commitment.")]
    assert sorted(e.type for e in events) == [
        "commitment.cancelled",
        "commitment.cancelled",
        "commitment.inferred",
        "commitment.inferred",
    ]
    wire = json.dumps([e.payload for e in events])
    for word in ("Lisbon", "lisbon", "renew", "contract", "signed", "Thursday"):
        assert word not in wire
    by_condition = {
        e.payload["condition"]: e.payload for e in events if e.type.endswith("inferred")
    }
    assert str(by_condition["time"]["rrule"]).startswith("FREQ=WEEKLY;BYDAY=TH")
    # A predicate's name, never its arguments (a tag is the entry's words).
    assert by_condition["predicate"]["predicate"] == "memory.tag_exists"
    for e in events:
        jsonschema.validate(e.payload, _schema(e.type.replace(".", "-")))


async def test_the_read_side_notices_an_entry_edited_since_inference(
    book: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    entry = await book.put(ref, note(f"Remind me tomorrow at 9:30 to {TASK}"))
    await _infer(book, ref)
    (record,) = await book.commitments.list(ref)
    detail = await book.commitments.show(ref, record.commitment_id)
    assert detail is not None and detail.read_text == "tomorrow at 9:30"

    await book.update(
        ref,
        entry.id,
        EntryChanges(content=f"Remind me tomorrow at 7:15 to {TASK}"),
        expected_version=entry.version,
    )
    detail = await book.commitments.show(ref, record.commitment_id)
    assert detail is not None
    assert detail.read_text is None and detail.read_changed


async def test_a_tenant_that_requires_confirmation_gets_proposals_that_never_arm_alone(
    book: PostgresMemoryStore,
) -> None:
    ref = await _confirming_tenant(book)
    await book.put(ref, note(f"Remind me in 5 days to {TASK}"))
    await _infer(book, ref)
    (record,) = await book.commitments.list(ref)
    assert record.state == "proposed"
    (inferred,) = await _payloads(book, ref, "commitment.inferred")
    assert inferred["state"] == "proposed"
    # Arming starts only armed commitments.
    assert await book.commitments.unarmed(parse_memory_ref(ref), 100) == []

    confirmed = await book.commitments.confirm(ref, record.commitment_id)
    assert confirmed is not None and confirmed.state == "armed"
    (unarmed,) = await book.commitments.unarmed(parse_memory_ref(ref), 100)
    assert unarmed.commitment_id == record.commitment_id
    # Confirming again changes nothing; cancelling then ends it, announced once.
    again = await book.commitments.confirm(ref, record.commitment_id)
    assert again is not None and again.state == "armed"
    await book.commitments.cancel(ref, record.commitment_id)
    await book.commitments.cancel(ref, record.commitment_id)
    (cancelled,) = await _payloads(book, ref, "commitment.cancelled")
    assert cancelled["previousState"] == "armed"


async def test_a_proposal_is_cancelled_before_it_arms(book: PostgresMemoryStore) -> None:
    ref = await _confirming_tenant(book)
    await book.put(ref, note(f"Remind me in 5 days to {TASK}"))
    await _infer(book, ref)
    (record,) = await book.commitments.list(ref)
    ended = await book.commitments.cancel(ref, record.commitment_id)
    assert ended is not None and ended.state == "cancelled"
    (cancelled,) = await _payloads(book, ref, "commitment.cancelled")
    assert cancelled["previousState"] == "proposed"
    # A cancelled proposal cannot be confirmed back.
    after = await book.commitments.confirm(ref, record.commitment_id)
    assert after is not None and after.state == "cancelled"
    assert await book.commitments.unarmed(parse_memory_ref(ref), 100) == []


async def test_a_proposal_holds_its_promise_and_ends_with_its_source(
    book: PostgresMemoryStore,
) -> None:
    ref = await _confirming_tenant(book)
    for _ in range(2):
        await book.put(ref, note(f"Remind me in 5 days to {TASK}"))
    await _infer(book, ref)
    # The same promise in two entries: one proposal (uq_commitments_live_promise).
    (record,) = await book.commitments.list(ref)
    assert record.state == "proposed"

    await book.delete(ref, record.memory_id)
    (ended,) = await book.commitments.list(ref)
    assert (ended.state, ended.ended_reason) == ("cancelled", "source-deleted")


async def test_settings_name_the_field_they_refuse(book: PostgresMemoryStore) -> None:
    with pytest.raises(InvalidInput) as raised:
        await book.commitments.update_settings("acme", date_order="DM")  # type: ignore[arg-type]
    assert raised.value.field == "dateOrder"
    with pytest.raises(InvalidInput) as raised:
        await book.commitments.update_settings("acme", next_weekday="soon")  # type: ignore[arg-type]
    assert raised.value.field == "nextWeekday"
    found = await book.commitments.update_settings("acme-settings", date_order="DMY")
    assert (found.date_order, found.time_zone, found.require_confirmation) == ("DMY", "UTC", False)
    assert found.next_weekday == "refuse-when-ambiguous"
    kept = await book.commitments.update_settings("acme-settings", require_confirmation=True)
    assert (kept.date_order, kept.require_confirmation) == ("DMY", True)


@pytest.mark.parametrize(
    ("date_order", "due"),
    [("MDY", "once 2027-04-05T09:00:00Z"), ("DMY", "once 2027-05-04T09:00:00Z")],
)
async def test_the_tenants_date_order_decides_a_numeric_date(
    book: PostgresMemoryStore, date_order: str, due: str
) -> None:
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await book.commitments.update_settings(tenant, date_order=date_order)  # type: ignore[arg-type]
    await book.put(ref, note(f"Remind me on 04/05/2027 at 9:00 to {TASK}"))
    await _infer(book, ref)
    (record,) = await book.commitments.list(ref)
    assert record.understood == due
    assert record.reading is not None and f"date-order-{date_order}" in record.reading.conventions


async def test_the_tenants_next_weekday_rule_decides_next_friday(
    book: PostgresMemoryStore,
) -> None:
    """Said on Monday 2026-11-23: "next Friday" is the 27th (coming) or the 4th
    (following week); refused by default, since the two readings differ."""
    readings = {}
    for rule in ("refuse-when-ambiguous", "coming", "following-week"):
        ref = unique_ref()
        tenant = parse_memory_ref(ref).tenant
        await book.commitments.update_settings(tenant, next_weekday=rule)
        await book.put(ref, note(f"Remind me next Friday at 10:00 to {TASK}"))
        await _infer(book, ref)
        readings[rule] = [r.understood for r in await book.commitments.list(ref)]
    assert readings == {
        "refuse-when-ambiguous": [],
        "coming": ["once 2026-11-27T10:00:00Z"],
        "following-week": ["once 2026-12-04T10:00:00Z"],
    }
