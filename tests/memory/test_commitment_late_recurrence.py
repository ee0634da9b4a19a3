"""A recurring commitment that fires late owes every instant it slept through (issue 20,
item 4): each instant strictly after the one being fired and at or before the firing time
gets its own ledger row, fired when still inside its grace window, missed otherwise, in
the firing's transaction; next_at is the first instant after the firing. A retry of the
same firing adds nothing; a catch-up longer than the cap continues on the next firing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.commitments import firing
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import FireCommitmentRequest, FireOutcome, InferCommitmentsRequest
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import Clock, note, unique_ref

SAID = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
# The most owed instants one firing accounts for (memory/commitments/firing.py).
MAX_CATCH_UP = 1000


@pytest.fixture
def clock() -> Clock:
    return Clock(SAID)


@pytest.fixture
def book(engine: AsyncEngine, clock: Clock) -> PostgresMemoryStore:
    return PostgresMemoryStore(engine, clock=clock)


async def _recurring(store: PostgresMemoryStore, text: str) -> tuple[str, Any]:
    ref = unique_ref()
    await store.put(ref, note(text))
    await store.commitments.infer(InferCommitmentsRequest(memory_ref=parse_memory_ref(ref)))
    (row,) = await store.commitments.list(ref)
    assert row.next_at is not None
    return ref, row


async def _fire(
    store: PostgresMemoryStore,
    ref: str,
    cid: str,
    due: datetime,
    at: datetime,
    grace: timedelta = HOUR,
) -> FireOutcome:
    return await store.commitments.fire(
        FireCommitmentRequest(
            commitment_id=cid,
            memory_ref=parse_memory_ref(ref),
            due_at=due,
            fired_at=at,
            grace_seconds=int(grace.total_seconds()),
        )
    )


async def _ledger(store: PostgresMemoryStore, ref: str, cid: str) -> list[tuple[datetime, str]]:
    detail = await store.commitments.show(ref, cid)
    assert detail is not None
    rows = [(o.due_at, o.outcome) for o in detail.occurrences]
    assert all(due is not None for due, _ in rows)
    return sorted(rows)  # type: ignore[arg-type]


async def _fired_runs(store: PostgresMemoryStore, ref: str) -> list[object]:
    return [
        e.payload["enqueuedRunId"] for e in await store.events(ref) if e.type == "commitment.fired"
    ]


async def test_a_firing_days_late_inside_its_grace_fires_every_instant_it_owes(
    book: PostgresMemoryStore,
) -> None:
    ref, row = await _recurring(book, "Remind me every day at 9:00 to check the queue")
    due = row.next_at
    assert due == datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    # Two days and an hour late, with a grace of three days: all three instants are owed
    # and all three are still inside their grace window.
    woke = due + 2 * DAY + HOUR
    outcome = await _fire(book, ref, row.commitment_id, due, woke, grace=3 * DAY)
    assert outcome.status == "fired"
    assert outcome.next_at == due + 3 * DAY
    assert await _ledger(book, ref, row.commitment_id) == [
        (due, "fired"),
        (due + DAY, "fired"),
        (due + 2 * DAY, "fired"),
    ]
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.fire_count, after.missed_count) == ("armed", 3, 0)
    assert after.next_at == due + 3 * DAY
    runs = await _fired_runs(book, ref)
    assert len(runs) == 3 == len(set(runs))
    assert outcome.catch_up_run_ids == tuple(runs[1:])

    # The same firing again (a retry after the commit): nothing new, the same runs.
    retried = await _fire(book, ref, row.commitment_id, due, woke, grace=3 * DAY)
    assert retried.status == "already-claimed"
    assert retried.enqueued_run_id == outcome.enqueued_run_id
    assert retried.catch_up_run_ids == outcome.catch_up_run_ids
    assert retried.next_at == due + 3 * DAY
    assert len(await _ledger(book, ref, row.commitment_id)) == 3
    assert await _fired_runs(book, ref) == runs
    (again,) = await book.commitments.list(ref)
    assert (again.fire_count, again.missed_count) == (3, 0)


async def test_owed_instants_past_their_grace_are_missed_the_rest_fire(
    book: PostgresMemoryStore,
) -> None:
    ref, row = await _recurring(book, "Remind me every day at 9:00 to check the queue")
    due = row.next_at
    assert due is not None
    # Three days and two hours late with a grace of a day and a half: the instant being
    # fired and the next are past their grace, the two after it are not.
    woke = due + 3 * DAY + 2 * HOUR
    outcome = await _fire(book, ref, row.commitment_id, due, woke, grace=DAY + 12 * HOUR)
    assert outcome.status == "missed" and outcome.enqueued_run_id is None
    assert outcome.next_at == due + 4 * DAY
    assert await _ledger(book, ref, row.commitment_id) == [
        (due, "missed"),
        (due + DAY, "missed"),
        (due + 2 * DAY, "fired"),
        (due + 3 * DAY, "fired"),
    ]
    (after,) = await book.commitments.list(ref)
    assert (after.fire_count, after.missed_count, after.next_at) == (2, 2, due + 4 * DAY)
    assert len(await _fired_runs(book, ref)) == 2

    await _fire(book, ref, row.commitment_id, due, woke, grace=DAY + 12 * HOUR)
    assert len(await _ledger(book, ref, row.commitment_id)) == 4
    assert len(await _fired_runs(book, ref)) == 2


async def test_an_hourly_commitment_woken_hours_late_fires_the_last_and_misses_the_rest(
    book: PostgresMemoryStore,
) -> None:
    ref, row = await _recurring(book, "Remind me every hour to check the queue")
    due = row.next_at
    assert due == SAID  # the first hour at or after it was said
    woke = due + 3 * HOUR + timedelta(minutes=30)
    outcome = await _fire(book, ref, row.commitment_id, due, woke)
    assert outcome.status == "missed"
    assert outcome.next_at == due + 4 * HOUR
    assert await _ledger(book, ref, row.commitment_id) == [
        (due, "missed"),
        (due + HOUR, "missed"),
        (due + 2 * HOUR, "missed"),
        (due + 3 * HOUR, "fired"),
    ]
    (after,) = await book.commitments.list(ref)
    assert (after.fire_count, after.missed_count) == (1, 3)


async def test_an_outage_of_days_records_each_instant_missed(book: PostgresMemoryStore) -> None:
    ref, row = await _recurring(book, "Remind me every day at 9:00 to check the queue")
    due = row.next_at
    assert due is not None
    woke = due + 10 * DAY + timedelta(minutes=5)
    outcome = await _fire(book, ref, row.commitment_id, due, woke)
    assert outcome.status == "missed"
    assert outcome.next_at == due + 11 * DAY
    ledger = await _ledger(book, ref, row.commitment_id)
    # The instant at woke - 5 minutes is inside the default hour of grace.
    assert ledger == [(due + n * DAY, "missed") for n in range(10)] + [(due + 10 * DAY, "fired")]
    (after,) = await book.commitments.list(ref)
    assert (after.fire_count, after.missed_count) == (1, 10)


async def test_a_firing_held_up_by_the_store_owes_the_instants_up_to_its_claim(
    book: PostgresMemoryStore, clock: Clock
) -> None:
    ref, row = await _recurring(book, "Remind me every hour to check the queue")
    due = row.next_at
    assert due is not None
    # The timer fired on time; the store answered two and a half hours later.
    clock.now = due + 2 * HOUR + timedelta(minutes=30)
    outcome = await _fire(book, ref, row.commitment_id, due, due)
    assert outcome.next_at == due + 3 * HOUR
    assert await _ledger(book, ref, row.commitment_id) == [
        (due, "missed"),
        (due + HOUR, "missed"),
        (due + 2 * HOUR, "fired"),
    ]


async def test_a_catch_up_beyond_the_cap_continues_on_the_next_firing(
    book: PostgresMemoryStore,
) -> None:
    assert getattr(firing, "MAX_CATCH_UP", None) == MAX_CATCH_UP
    ref, row = await _recurring(book, "Remind me every hour to check the queue")
    due = row.next_at
    assert due is not None
    owed = MAX_CATCH_UP + 99  # instants strictly after due, at or before woke
    woke = due + owed * HOUR + timedelta(minutes=10)
    first = await _fire(book, ref, row.commitment_id, due, woke)
    # The cap stops the walk: next_at is the first instant not yet accounted, in the past.
    assert first.next_at == due + (MAX_CATCH_UP + 1) * HOUR
    assert len(await _ledger(book, ref, row.commitment_id)) == MAX_CATCH_UP + 1
    # The workflow continues as new with that instant and fires it at once.
    second = await _fire(book, ref, row.commitment_id, first.next_at, woke)
    assert second.next_at == due + (owed + 1) * HOUR
    ledger = await _ledger(book, ref, row.commitment_id)
    assert [d for d, _ in ledger] == [due + n * HOUR for n in range(owed + 1)]
    assert [o for _, o in ledger] == ["missed"] * owed + ["fired"]
    (after,) = await book.commitments.list(ref)
    assert (after.fire_count, after.missed_count) == (1, owed)
    assert after.next_at == due + (owed + 1) * HOUR


async def test_a_recurrence_that_ends_inside_the_catch_up_expires(
    book: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    ref, row = await _recurring(book, "Remind me every day at 9:00 to water the plants")
    due = row.next_at
    assert due is not None
    # The grammar reads no counts; a rule with one set directly. Its dtstart is the
    # midnight of the day it was said, so the first of four instants (9:00 that day) was
    # before it was said: three are left.
    detail = await book.commitments.show(ref, row.commitment_id)
    assert detail is not None and detail.spec is not None
    spec = {**detail.spec, "rrule": f"{detail.spec['rrule']};COUNT=4"}
    commitments = tables.commitments
    async with engine.begin() as connection:
        await connection.execute(
            update(commitments)
            .where(commitments.c.commitment_id == row.commitment_id)
            .values(spec=spec)
        )
    outcome = await _fire(book, ref, row.commitment_id, due, due + 5 * DAY, grace=10 * DAY)
    assert outcome.next_at is None and outcome.state == "expired"
    ledger = await _ledger(book, ref, row.commitment_id)
    assert ledger == [(due + n * DAY, "fired") for n in range(3)]
    (after,) = await book.commitments.list(ref)
    assert (after.state, after.fire_count) == ("expired", 3)
