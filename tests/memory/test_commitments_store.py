"""Commitments through the store API: inference, the fire-once ledger, catch-up,
predicates, lifecycle (forget, TTL, supersession, cancel) and CTI-1 binding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import (
    EvaluatePredicateRequest,
    FireCommitmentRequest,
    InferCommitmentsRequest,
)
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_entry import ForgetRequest, Tier
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import Clock, note, unique_ref
from tests.support.scan import tables_holding

SAID = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday


@pytest.fixture
def clock() -> Clock:
    return Clock(SAID)


@pytest.fixture
def book(engine: AsyncEngine, clock: Clock) -> PostgresMemoryStore:
    return PostgresMemoryStore(engine, clock=clock)


async def _infer(store: PostgresMemoryStore, ref: str, **extra: object):
    return await store.commitments.infer(
        InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), **extra)
    )


async def _one_commitment(store: PostgresMemoryStore, text: str) -> tuple[str, Any, Any]:
    """A fresh memoryRef with one entry saying ``text``, inferred: (ref, entry, its
    commitment)."""
    ref = unique_ref()
    entry = await store.put(ref, note(text))
    await _infer(store, ref)
    (row,) = await store.commitments.list(ref)
    return ref, entry, row


async def _fired_events(store: PostgresMemoryStore, ref: str) -> list[dict[str, object]]:
    return [e.payload for e in await store.events(ref) if e.type == "commitment.fired"]


async def _fire(store: PostgresMemoryStore, ref: str, cid: str, due: datetime, at: datetime):
    return await store.commitments.fire(
        FireCommitmentRequest(
            commitment_id=cid, memory_ref=parse_memory_ref(ref), due_at=due, fired_at=at
        )
    )


async def test_inference_records_each_commitment_once(book: PostgresMemoryStore) -> None:
    ref = unique_ref()
    once = await book.put(ref, note("Remind me in 5 days to renew the domain"))
    weekly = await book.put(ref, note("Remind me every Thursday at 17:00 to send the report"))
    watch = await book.put(ref, note("Follow up when the contract is signed"))
    vague = await book.put(ref, note("Remind me about the thing"))
    await book.put(ref, note("The office plant needs water"))

    first = await _infer(book, ref)
    assert (first.created, first.time_commitments, first.predicate_commitments) == (3, 2, 1)
    assert first.unparsable_ids == (vague.id,) and first.unparsable_count == 1
    # Each with why, a category code and never the entry's words.
    assert [(e.memory_id, e.reason) for e in first.unparsable_entries] == [
        (vague.id, "no-time-or-condition")
    ]

    rows = {c.memory_id: c for c in await book.commitments.list(ref)}
    assert set(rows) == {once.id, weekly.id, watch.id}
    assert rows[once.id].next_at == SAID + timedelta(days=5)
    assert rows[weekly.id].next_at == datetime(2026, 11, 26, 17, 0, tzinfo=UTC)
    assert rows[watch.id].condition == "predicate" and rows[watch.id].next_at is None

    again = await _infer(book, ref, memory_ids=(once.id, weekly.id, watch.id))
    assert (again.created, again.already_known) == (0, 3)
    assert len(await book.commitments.list(ref)) == 3


async def test_the_watermark_skips_entries_already_scanned(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    ref = unique_ref()
    await book.put(ref, note("Remind me tomorrow at 8:30 to call the bank"))
    assert (await _infer(book, ref)).scanned == 1
    clock.now = SAID + timedelta(hours=2)
    await book.put(ref, note("Check back in 3 weeks on the hiring plan"))
    second = await _infer(book, ref)
    # The entry at the watermark is read again (the overlap), and known already.
    assert (second.scanned, second.created, second.already_known) == (2, 1, 1)
    clock.now = SAID + timedelta(hours=4)
    await book.put(ref, note("Follow up in 2 days with the landlord"))
    third = await _infer(book, ref)
    # The first entry is older than the watermark minus the overlap: not read again.
    assert (third.scanned, third.created, third.already_known) == (2, 1, 1)
    assert len(await book.commitments.list(ref)) == 3


async def test_the_tenant_time_zone_sets_what_a_time_of_day_means(
    book: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await book.commitments.set_time_zone(tenant, "America/New_York")
    await book.put(ref, note("Remind me tomorrow at 8:30 to call the bank"))
    await _infer(book, ref)
    (row,) = await book.commitments.list(ref)
    # 08:30 in New York on 2026-11-24 (EST, UTC-5).
    assert row.next_at == datetime(2026, 11, 24, 13, 30, tzinfo=UTC)
    assert row.time_zone == "America/New_York"


async def test_a_bad_time_zone_names_the_field(book: PostgresMemoryStore) -> None:
    with pytest.raises(Exception) as raised:
        await book.commitments.set_time_zone("acme", "Mars/Olympus")
    assert "timeZone" in str(raised.value)


async def test_a_commitment_cannot_bind_to_another_tenants_entry(
    book: PostgresMemoryStore,
) -> None:
    victim, attacker = unique_ref(), unique_ref()
    theirs = await book.put(victim, note("Remind me in 2 days to wire the deposit"))
    result = await _infer(book, attacker, memory_ids=(theirs.id,))
    assert result.created == 0 and result.not_found_ids == (theirs.id,)
    assert await book.commitments.list(attacker) == []
    mine = await _infer(book, victim)
    (row,) = await book.commitments.list(victim)
    assert await book.commitments.show(attacker, row.commitment_id) is None
    assert await book.commitments.cancel(attacker, row.commitment_id) is None
    assert (await book.commitments.show(victim, row.commitment_id)) is not None
    assert mine.created == 1


async def test_an_occurrence_fires_once_however_often_it_is_claimed(
    book: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    ref, entry, row = await _one_commitment(book, "Remind me in 5 days to renew the domain")
    due = row.next_at
    assert due is not None
    first = await _fire(book, ref, row.commitment_id, due, due + timedelta(seconds=1))
    retried = await _fire(book, ref, row.commitment_id, due, due + timedelta(seconds=9))
    assert first.status == "fired" and retried.status == "already-claimed"
    assert retried.event_seq == first.event_seq
    assert first.enqueued_run_id == f"commitment-run/{row.commitment_id}/{first.occurrence}"
    events = await _fired_events(book, ref)
    assert events == [
        {
            "commitmentId": row.commitment_id,
            "memoryRef": ref,
            "memoryId": entry.id,
            "condition": "time",
            "enqueuedRunId": first.enqueued_run_id,
        }
    ]
    async with engine.connect() as connection:
        claims = (
            await connection.execute(select(func.count()).select_from(tables.occurrences))
        ).scalar()
    assert claims == 1
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.fire_count, after.next_at) == ("fired", 1, None)


async def test_an_occurrence_past_the_grace_window_is_missed_not_fired(
    book: PostgresMemoryStore,
) -> None:
    ref, _, row = await _one_commitment(book, "Remind me in 5 days to renew the domain")
    assert row.next_at is not None
    outcome = await _fire(
        book, ref, row.commitment_id, row.next_at, row.next_at + timedelta(hours=3)
    )
    assert outcome.status == "missed" and outcome.event_seq is None
    assert await _fired_events(book, ref) == []
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.missed_count) == ("missed", 1)


async def test_a_recurring_commitment_after_an_outage_accounts_every_instant_never_floods(
    book: PostgresMemoryStore,
) -> None:
    ref, _, row = await _one_commitment(book, "Remind me every day at 9:00 to check the queue")
    due = row.next_at
    assert due == datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    # The worker was down for ten days; it wakes for the first instant.
    woke = due + timedelta(days=10, minutes=5)
    outcome = await _fire(book, ref, row.commitment_id, due, woke)
    assert outcome.status == "missed"
    assert outcome.next_at == datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    # Every instant slept through is accounted for (issue 20): nine missed, and Dec 4 (five
    # minutes before the wake, inside its grace) fired; none is skipped silently, and the
    # ten days do not flood: only what is still within grace fires.
    assert (outcome.catch_up_fired, outcome.catch_up_missed) == (1, 9)
    fired = await _fire(book, ref, row.commitment_id, outcome.next_at, outcome.next_at)
    assert fired.status == "fired" and len(await _fired_events(book, ref)) == 2


async def test_a_predicate_fires_once_per_false_to_true_transition(
    book: PostgresMemoryStore,
) -> None:
    ref, _, row = await _one_commitment(book, "Follow up when the contract is signed")

    async def evaluate() -> bool:
        outcome = await book.commitments.evaluate(
            EvaluatePredicateRequest(
                commitment_id=row.commitment_id, memory_ref=parse_memory_ref(ref), evaluated_at=SAID
            )
        )
        return outcome.fired

    fired = [await evaluate()]  # false
    signed = await book.put(ref, note("Signed on the 3rd", "contract-signed"))
    fired += [await evaluate(), await evaluate()]  # true, still true
    await book.delete(ref, signed.id)
    fired += [await evaluate()]  # false
    await book.put(ref, note("Re-signed after the amendment", "contract-signed"))
    fired += [await evaluate()]  # true again
    assert fired == [False, True, False, False, True]
    assert len(await _fired_events(book, ref)) == 2
    (after,) = await book.commitments.list(ref)
    assert (after.transitions, after.fire_count, after.state) == (2, 2, "armed")


async def test_forgetting_the_source_cancels_and_erases_the_condition(
    book: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    ref, source, row = await _one_commitment(book, "Follow up when the merger with Zyxwvut closes")
    # The spec holds the condition's words as written; the entry's term postings and
    # their counts, its words as PostgreSQL reads them.
    assert set(await tables_holding(engine, "zyxwvut")) == {
        "commitments.spec",
        "memory_terms.term",
        "memory_term_counts.term",
    }
    await book.forget(ref, ForgetRequest(ids=(source.id,)))
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.ended_reason) == ("cancelled", "source-deleted")
    assert await tables_holding(engine, "zyxwvut") == []
    assert await tables_holding(engine, "Zyxwvut") == []
    outcome = await book.commitments.evaluate(
        EvaluatePredicateRequest(
            commitment_id=row.commitment_id, memory_ref=parse_memory_ref(ref), evaluated_at=SAID
        )
    )
    assert outcome.status == "not-armed"


async def test_an_expired_source_expires_its_commitment(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    ref = unique_ref()
    await book.put(
        ref,
        note("Remind me in 5 days to renew the domain", expires_at=SAID + timedelta(days=1)),
    )
    await _infer(book, ref)
    clock.now = SAID + timedelta(days=2)
    await book.expire(ref)
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.ended_reason) == ("expired", "source-expired")


async def test_superseding_the_source_cancels_its_commitment(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    """Two entries saying the same words an hour apart are two reminders ("in 5 days"
    resolves from when each was said); merging them keeps the survivor's and cancels
    the merged entry's, never both armed."""
    ref = unique_ref()
    text = "Remind me in 5 days to renew the domain"
    first = await book.put(ref, note(text, tier=Tier.SEMANTIC))
    clock.now = SAID + timedelta(hours=1)
    second = await book.put(ref, note(text + ".", tier=Tier.SEMANTIC))
    await _infer(book, ref)
    assert len(await book.commitments.list(ref, state="armed")) == 2
    await book.consolidate(ConsolidateMemoryRequest(memory_ref=parse_memory_ref(ref), run_key="r1"))
    states = {c.memory_id: (c.state, c.ended_reason) for c in await book.commitments.list(ref)}
    survivors = [i for i, (state, _) in states.items() if state == "armed"]
    assert len(survivors) == 1
    merged = ({first.id, second.id} - set(survivors)).pop()
    assert states[merged] == ("cancelled", "source-superseded")


async def test_a_promise_updated_by_a_later_entry_keeps_only_the_later_one_armed(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    """Update detection (issue 39): "remind me Friday" followed by "move it to Saturday
    instead" links the two; the older entry stays readable, its promise ends, so one
    reminder fires, not two."""
    ref = unique_ref()
    first = await book.put(
        ref, note("Remind me on Friday at 9:00 to call the landlord", tier=Tier.SEMANTIC)
    )
    clock.now = SAID + timedelta(hours=1)
    second = await book.put(
        ref,
        note("Remind me on Saturday at 10:00 to call the landlord instead", tier=Tier.SEMANTIC),
    )
    await _infer(book, ref)
    assert len(await book.commitments.list(ref, state="armed")) == 2
    result = await book.consolidate(
        ConsolidateMemoryRequest(memory_ref=parse_memory_ref(ref), run_key="r1")
    )
    assert result.updated_count == 1
    states = {c.memory_id: (c.state, c.ended_reason) for c in await book.commitments.list(ref)}
    assert states == {
        first.id: ("cancelled", "source-updated"),
        second.id: ("armed", None),
    }
    assert await book.get_entry(ref, first.id, touch=False) is not None  # kept, marked


async def test_one_promise_stated_twice_is_armed_once(book: PostgresMemoryStore) -> None:
    """The same words with the same condition in two live entries are one promise
    (memory/commitments/scan.py: promise_key), whichever inference reads them."""
    ref = unique_ref()
    text = "Remind me every Monday at 9:00 to review the budget"
    await book.put_many(ref, [note(text), note(text.upper() + "!")])
    await _infer(book, ref)
    await _infer(book, ref, memory_ids=None)
    assert len(await book.commitments.list(ref, state="armed")) == 1
    other = await book.put(ref, note("Remind me every Tuesday at 9:00 to review the budget"))
    await _infer(book, ref)
    armed = await book.commitments.list(ref, state="armed")
    assert len(armed) == 2 and other.id in {c.memory_id for c in armed}


async def test_a_merged_promise_stays_armed_on_the_survivor(book: PostgresMemoryStore) -> None:
    """Armed once on whichever entry inference met first; when consolidation merges that
    entry away, its commitment moves to the survivor instead of ending: the promise is
    kept, and no merged source holds an armed commitment."""
    ref = unique_ref()
    text = "Remind me every Monday at 9:00 to review the budget"
    entries = await book.put_many(ref, [note(text, tier=Tier.SEMANTIC) for _ in range(2)])
    await _infer(book, ref)
    (before,) = await book.commitments.list(ref, state="armed")
    await book.consolidate(ConsolidateMemoryRequest(memory_ref=parse_memory_ref(ref), run_key="r1"))
    (after,) = await book.commitments.list(ref, state="armed")
    live = {e.id for e in await book.list(ref)}
    assert after.commitment_id == before.commitment_id
    assert after.memory_id in live and after.memory_id in {e.id for e in entries}


async def test_a_cancelled_commitment_never_fires(book: PostgresMemoryStore) -> None:
    ref, _, row = await _one_commitment(book, "Remind me in 5 days to renew the domain")
    cancelled = await book.commitments.cancel(ref, row.commitment_id)
    assert cancelled is not None and cancelled.state == "cancelled"
    assert row.next_at is not None
    outcome = await _fire(book, ref, row.commitment_id, row.next_at, row.next_at)
    assert outcome.status == "not-armed" and await _fired_events(book, ref) == []


async def test_show_serves_the_redacted_intention_and_events_never_carry_it(
    book: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    text = "Remind me in 5 days to ask Priya about the Quintessa renewal"
    await book.put(ref, note(text))
    await _infer(book, ref)
    (row,) = await book.commitments.list(ref)
    assert row.next_at is not None
    await _fire(book, ref, row.commitment_id, row.next_at, row.next_at)
    detail = await book.commitments.show(ref, row.commitment_id)
    assert detail is not None and detail.intention == text
    assert [o.outcome for o in detail.occurrences] == ["fired"]
    for event in await book.events(ref):
        if event.type == "commitment.fired":
            assert "Quintessa" not in str(event.payload) and "Priya" not in str(event.payload)


async def test_an_entry_tagged_as_an_intention_is_inferred_in_any_case(
    book: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    tagged = await book.put(ref, note("Call the landlord tomorrow at 10", "COMMITMENT"))
    await book.put(ref, note("Call the landlord tomorrow at 10"))  # no tag, no trigger
    result = await _infer(book, ref)
    assert (result.scanned, result.created) == (1, 1)
    (row,) = await book.commitments.list(ref)
    assert row.memory_id == tagged.id
    assert row.next_at == datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


async def test_a_firing_held_up_by_an_outage_is_as_late_as_its_claim(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    ref, _, row = await _one_commitment(book, "Remind me in 5 days to renew the domain")
    assert row.next_at is not None
    # The timer fired on time, but the store was unreachable for three hours.
    clock.now = row.next_at + timedelta(hours=3)
    outcome = await _fire(book, ref, row.commitment_id, row.next_at, row.next_at)
    assert outcome.status == "missed" and await _fired_events(book, ref) == []


async def test_a_first_scan_past_the_drivers_parameter_limit_commits(
    book: PostgresMemoryStore,
) -> None:
    """Issue 24: a memoryRef's first inference over more commitment-like entries than
    one statement can bind (each commitment row binds about 20 parameters; 2,000 of them
    are past 32,767) inserted them in one statement and failed on every retry. In
    batches, every commitment is recorded once and announced once."""
    ref = unique_ref()
    # Semantic: the episodic tier's 1,000-entry cap would evict half of them.
    entries = [
        note(f"Remind me on Friday to send the report for account {n}", tier=Tier.SEMANTIC)
        for n in range(2000)
    ]
    for start in range(0, len(entries), 1000):
        await book.put_many(ref, entries[start : start + 1000])
    result = await _infer(book, ref)
    assert (result.scanned, result.created, result.already_known) == (2000, 2000, 0)
    inferred, after = [], 0
    while page := await book.events(ref, after_seq=after, types=["commitment.inferred"]):
        inferred += page
        after = page[-1].seq
    assert len({e.payload["commitmentId"] for e in inferred}) == len(inferred) == 2000
    assert (await _infer(book, ref)).created == 0  # the watermark moved: nothing again
