"""Which requests recur (memory/proposals/routines.py), pure: the same request in other
words, a person or a number that makes it another request, the weekly and daily
cadences, a sighting off the schedule left out rather than cancelling the weeks that keep
it, and the time a schedule would run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from memory.proposals.routines import Sighting, find_routines, request_core
from memory.store import PostgresMemoryStore
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import unique_ref
from tests.support.proposals import seed_routine

MONDAY = datetime(2026, 10, 5, 9, 4, tzinfo=UTC)


def _weekly(texts: list[str], *, start: datetime = MONDAY, tag: str = "request") -> list[Sighting]:
    return [
        Sighting(f"e{i}", text, (tag,), start + timedelta(weeks=i, minutes=3 * i))
        for i, text in enumerate(texts)
    ]


def test_the_same_request_in_other_words_is_one_weekly_routine() -> None:
    texts = [
        "Send Dana the weekly escalations summary.",
        "Could you send Dana the weekly escalations summary?",
        "send  dana the weekly   escalations summary, thanks!",  # re-spaced
        "Please send Dana the weekly escalations summary",
    ]
    (routine,) = find_routines(_weekly(texts), "UTC")
    assert routine.entry_ids == ("e0", "e1", "e2", "e3")
    assert (routine.cadence, routine.weekday, routine.hour, routine.minute) == (
        "weekly",
        0,
        9,
        0,
    )
    assert routine.schedule_key == "weekly-0@09:00/UTC"


def test_another_person_or_number_is_another_request() -> None:
    texts = [
        "Send Dana the weekly escalations summary.",
        "Send Ravi the weekly escalations summary.",
        "Send Dana the 2 weekly escalations summaries.",
        "Send Mei the weekly escalations summary.",
    ]
    assert find_routines(_weekly(texts), "UTC") == []


def test_what_is_not_a_request_is_not_read() -> None:
    texts = ["The weekly escalations summary went out."] * 4
    assert find_routines(_weekly(texts, tag="note"), "UTC") == []
    reminders = ["Remind me to send Dana the weekly escalations summary."] * 4
    assert len(find_routines(_weekly(reminders, tag="note"), "UTC")) == 1  # a trigger phrase


def test_an_off_schedule_sighting_is_left_out_not_a_reason_to_drop_the_routine() -> None:
    sightings = _weekly(["Send Dana the weekly escalations summary."] * 4)
    wednesday_night = Sighting(
        "odd",
        "Send Dana the weekly escalations summary.",
        ("request",),
        MONDAY.replace(day=14, hour=2),
    )
    (routine,) = find_routines([*sightings, wednesday_night], "UTC")
    assert "odd" not in routine.entry_ids and len(routine.entry_ids) == 4


def test_too_few_weeks_or_too_far_apart_is_no_routine() -> None:
    text = "Send Dana the weekly escalations summary."
    assert find_routines(_weekly([text] * 2), "UTC") == []
    spread = [
        Sighting(f"e{i}", text, ("request",), MONDAY + timedelta(weeks=3 * i)) for i in range(4)
    ]
    assert find_routines(spread, "UTC") == []


def test_a_daily_request_and_the_time_zone_it_is_read_in() -> None:
    berlin_morning = datetime(2026, 10, 5, 6, 50, tzinfo=UTC)  # 08:50 in Berlin (CEST)
    sightings = [
        Sighting(
            f"d{i}",
            "Check the overnight alerts queue.",
            ("request",),
            berlin_morning + timedelta(days=i),
        )
        for i in range(6)
    ]
    (routine,) = find_routines(sightings, "Europe/Berlin")
    assert (routine.cadence, routine.weekday, routine.hour, routine.minute) == (
        "daily",
        None,
        8,
        45,
    )
    assert routine.time_zone == "Europe/Berlin"


def test_courtesy_is_not_part_of_the_request() -> None:
    assert request_core("Could you please send Dana the summary?") == "send Dana the summary"
    assert request_core("Send Dana the summary, thanks!") == "Send Dana the summary"
    assert request_core("please") == "please"  # nothing left: the text as it was


async def test_the_store_reads_requests_in_the_tenants_time_zone(
    store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    """Monday 23:30 in New York is Tuesday 04:30 UTC: the tenant's zone decides the day
    and the hour of the proposed schedule."""
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await store.commitments.set_time_zone(tenant, "America/New_York")
    mondays_late = [datetime(2026, 10, 6, 3, 30, tzinfo=UTC) + timedelta(weeks=i) for i in range(3)]
    await seed_routine(
        engine, ref, mondays_late, ("Send Dana the late report.",), tags=("request",)
    )
    result = await store.proposals.synthesize(parse_memory_ref(ref), "run-tz", "queue")
    (proposal,) = await store.proposals.list(tenant)
    assert result.created == (proposal.id,)
    assert proposal.artifact["schedule"] == {
        "dayOfWeek": "monday",
        "hour": 23,
        "minute": 30,
        "timeZone": "America/New_York",
    }
