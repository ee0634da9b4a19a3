"""The commitment parser (memory/commitments/): trigger phrases, the time grammar and its
conventions, recurrences and their occurrences across DST, conditions, and the single
entry point. Pure Python: no database, no Temporal."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.commitment_parsing.conditions import parse_condition, slug
from memory.commitment_parsing.conventions import ParsingConventions
from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from memory.commitment_parsing.phrasing import (
    TRIGGER_PATTERN,
    TRIGGER_SQL_PATTERN,
    extract_intention,
)
from memory.commitment_parsing.recurrence_dates import (
    first_occurrence,
    next_occurrence,
    occurrences,
)
from memory.commitment_parsing.recurrence_phrases import parse_recurrence
from memory.commitment_parsing.time_resolution import parse_time_phrase
from memory.commitment_parsing.time_words import ParsedTime, localize
from schemas.commitment_spec import OnceSpec, PredicateSpec, RecurringSpec

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
# A Wednesday morning in Berlin (CET, UTC+1).
WEDNESDAY = datetime(2026, 11, 25, 10, 30, tzinfo=BERLIN)
AT9 = "BYHOUR=9;BYMINUTE=0;BYSECOND=0"


def local(phrase: str, now: datetime = WEDNESDAY, zone: ZoneInfo = BERLIN) -> str | None:
    parsed = parse_time_phrase(phrase, now=now, zone=zone)
    return None if parsed is None else parsed.local.strftime("%Y-%m-%d %H:%M")


def never_guess(text: str) -> bool:
    return not isinstance(parse_time_phrase(text, now=WEDNESDAY, zone=BERLIN), ParsedTime)


# --- phrasing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tags", "expected"),
    [
        ("remind me in 5 days to send the invoice", (), "in 5 days to send the invoice"),
        ("Please REMIND US tomorrow", (), "tomorrow"),
        ("Follow-up next Tuesday at 15:00", (), "next Tuesday at 15:00"),
        ("follow  up: next week", (), "next week"),
        ("check back every Thursday at 17:00", (), "every Thursday at 17:00"),
        ("check in with Dana on Friday", (), "with Dana on Friday"),
        ("send the deck on Friday", ("Commitment",), "send the deck on Friday"),
        ("send the deck on Friday", (" intention ",), "send the deck on Friday"),
        ("the contract was signed", ("project",), None),
        ("she reminded me of the rules", (), None),
        ("the remind menu was broken", (), None),
        ("checkback is a word", (), None),
    ],
)
def test_extract_intention(text: str, tags: tuple[str, ...], expected: str | None) -> None:
    assert extract_intention(text, tags) == expected


def test_sql_pattern_accepts_what_the_python_pattern_accepts() -> None:
    # PostgreSQL's \m and \M are word start and end; in Python both are \b.
    python_twin = re.compile(
        TRIGGER_SQL_PATTERN.replace(r"\m", r"\b").replace(r"\M", r"\b"), re.IGNORECASE
    )
    samples = [
        "remind me",
        "Remind  us later",
        "follow-up",
        "FOLLOW UP",
        "check back",
        "check\nin",
        "reminder me",
        "remind mentor",
        "followup",
        "checking in",
        "precheck in",
        "nothing here",
    ]
    for sample in samples:
        assert bool(python_twin.search(sample)) == bool(TRIGGER_PATTERN.search(sample)), sample
    assert r"\m" in TRIGGER_SQL_PATTERN and r"\b" not in TRIGGER_SQL_PATTERN


# --- time grammar -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("in 5 days", "2026-11-30 10:30"),  # keeps said_at's time of day
        ("in 2 hours", "2026-11-25 12:30"),
        ("in 30 minutes", "2026-11-25 11:00"),
        ("in 3 weeks", "2026-12-16 10:30"),
        ("in an hour", "2026-11-25 11:30"),
        ("in half an hour", "2026-11-25 11:00"),
        ("a week from now", "2026-12-02 10:30"),
        ("in 2 months", "2027-01-25 10:30"),
        ("tomorrow", "2026-11-26 09:00"),  # no time given: 09:00
        ("tomorrow at 8:30", "2026-11-26 08:30"),
        ("tomorrow morning", "2026-11-26 09:00"),
        ("tonight", "2026-11-25 20:00"),
        ("this evening", "2026-11-25 18:00"),
        ("today", "2026-11-25 10:30"),  # 09:00 has passed: due now
        ("the day after tomorrow", "2026-11-27 09:00"),
        ("next Tuesday at 15:00", "2026-12-01 15:00"),
        ("on Friday", "2026-11-27 09:00"),
        ("Friday at 9", "2026-11-27 09:00"),
        ("Friday at 9am", "2026-11-27 09:00"),
        ("friday evening", "2026-11-27 18:00"),
        ("at 5pm", "2026-11-25 17:00"),
        ("at 4", "2026-11-25 16:00"),  # 1-6 without am/pm: afternoon
        ("at 9", "2026-11-26 09:00"),  # past today: tomorrow
        ("at 8 in the evening", "2026-11-25 20:00"),
        ("at noon", "2026-11-25 12:00"),
        ("quarter to eight", "2026-11-26 07:45"),
        ("on December 3", "2026-12-03 09:00"),
        ("Dec 24th at 18:00", "2026-12-24 18:00"),
        ("3rd of January", "2027-01-03 09:00"),  # before today this year: next year's
        ("on 2026-12-03 at 10:00", "2026-12-03 10:00"),
        ("23.12.2026 14:30", "2026-12-23 14:30"),  # dotted dates are day-first
        ("2026-12-03T10:00:00+01:00", "2026-12-03 10:00"),
        ("end of the month", "2026-11-30 09:00"),
        ("end of next month", "2026-12-31 09:00"),
        ("end of the year", "2026-12-31 09:00"),
        ("next week", "2026-11-30 09:00"),  # Monday of next week
        ("next month", "2026-12-01 09:00"),  # the 1st of next month
        ("next year", "2027-01-01 09:00"),
        ("friday next week", "2026-12-04 09:00"),
        ("on the 27th", "2026-11-27 09:00"),
        ("Tuesday the 8th", "2026-12-08 09:00"),
        ("in 2 days at 10", "2026-11-27 10:00"),
        ("to send the invoice in 5 days", "2026-11-30 10:30"),  # task words around it
        ("with Dana next Tuesday at 15:00 about the renewal", "2026-12-01 15:00"),
    ],
)
def test_time_phrases(phrase: str, expected: str) -> None:
    assert local(phrase) == expected


def test_next_weekday_is_the_coming_one_when_the_tenant_says_so() -> None:
    # Said on a Wednesday, "next Friday" is two days later or nine: English splits on it,
    # so by default it is refused (issue 21; test_time_grammar_conventions.py); a tenant
    # whose convention is the coming one gets two days later, the same as "Friday".
    assert WEDNESDAY.strftime("%A") == "Wednesday"
    assert never_guess("next Friday")
    coming = ParsingConventions(next_weekday="coming")
    parsed = parse_time_phrase("next Friday", now=WEDNESDAY, zone=BERLIN, conventions=coming)
    assert parsed is not None
    assert (parsed.local.date() - WEDNESDAY.date()).days == 2
    assert local("Friday") == local("this Friday") == parsed.local.strftime("%Y-%m-%d %H:%M")


def test_weekday_equal_to_today_is_next_weeks() -> None:
    assert local("Wednesday") == "2026-12-02 09:00"
    assert local("this Wednesday at 18:00") == "2026-12-02 18:00"


def test_has_date_and_has_time_say_what_the_phrase_fixed() -> None:
    def flags(phrase: str) -> tuple[bool, bool]:
        parsed = parse_time_phrase(phrase, now=WEDNESDAY, zone=BERLIN)
        assert parsed is not None
        return parsed.has_date, parsed.has_time

    assert flags("tomorrow") == (True, False)
    assert flags("tomorrow at 8:30") == (True, True)
    assert flags("at 5pm") == (False, True)
    assert flags("in 5 days") == (True, False)
    assert flags("in 2 hours") == (True, True)


def test_utc_instant() -> None:
    parsed = parse_time_phrase("tomorrow at 8:30", now=WEDNESDAY, zone=BERLIN)
    assert parsed is not None
    assert parsed.local.tzinfo is BERLIN
    assert parsed.utc == datetime(2026, 11, 26, 7, 30, tzinfo=UTC)


def test_spring_forward_gap_moves_forward() -> None:
    # Berlin skips 02:00-03:00 on Sunday 2026-03-29: 02:30 becomes 03:30 CEST.
    friday = datetime(2026, 3, 27, 18, 0, tzinfo=BERLIN)
    parsed = parse_time_phrase("Sunday at 02:30", now=friday, zone=BERLIN)
    assert parsed is not None
    assert parsed.local.strftime("%Y-%m-%d %H:%M %Z") == "2026-03-29 03:30 CEST"
    assert parsed.utc == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    assert localize(datetime(2026, 3, 29, 2, 30), BERLIN).utcoffset() == timedelta(hours=2)


def test_fall_back_ambiguous_time_takes_the_first() -> None:
    # New York repeats 01:00-02:00 on Sunday 2026-11-01: 01:30 is the EDT one.
    saturday = datetime(2026, 10, 31, 22, 15, tzinfo=NEW_YORK)
    parsed = parse_time_phrase("tomorrow at 1:30 am", now=saturday, zone=NEW_YORK)
    assert parsed is not None
    assert parsed.utc == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)


def test_relative_days_keep_wall_time_and_hours_are_elapsed_across_dst() -> None:
    friday = datetime(2026, 3, 27, 18, 0, tzinfo=BERLIN)
    days = parse_time_phrase("in 5 days", now=friday, zone=BERLIN)
    hours = parse_time_phrase("in 36 hours", now=friday, zone=BERLIN)
    assert days is not None and hours is not None
    assert days.local.strftime("%H:%M %Z") == "18:00 CEST"  # same wall time, new offset
    assert hours.utc - friday.astimezone(UTC) == timedelta(hours=36)
    assert hours.local.strftime("%Y-%m-%d %H:%M") == "2026-03-29 07:00"


@pytest.mark.parametrize(
    "phrase",
    [
        "",
        "the sky is blue",
        "we sat down to talk",  # "sat" is a word, not Saturday
        "in a few days",  # vague
        "Mar 99th",  # invalid date
        "tomorrow or Friday",  # two different days
        "at 9 and at 17",  # two different times
        "in 5 days on Friday",
        "at 25:00",
    ],
)
def test_time_never_guessed(phrase: str) -> None:
    assert never_guess(phrase)


def test_utc_clock_times_and_refused_zone_abbreviations() -> None:
    parsed = parse_time_phrase("tomorrow at 17:00 UTC", now=WEDNESDAY, zone=BERLIN)
    assert parsed is not None
    assert parsed.utc == datetime(2026, 11, 26, 17, 0, tzinfo=UTC)
    assert never_guess("at 5pm PST")  # IST, CST...: ambiguous, never read as local
    assert local("tomorrow, check the UTC dashboards") == "2026-11-26 09:00"  # no clock
    utc_rule = parse_recurrence("every day at 17:00 UTC", now=WEDNESDAY, zone=BERLIN)
    assert utc_rule is not None and utc_rule.time_zone == "UTC"
    assert parse_recurrence("every day at 5pm PST", now=WEDNESDAY, zone=BERLIN) is None


def test_naive_now_is_rejected_without_the_phrase() -> None:
    with pytest.raises(ValueError) as error:
        parse_time_phrase("secret-ish words tomorrow", now=datetime(2026, 1, 1), zone=BERLIN)
    assert "secret" not in str(error.value)


# --- recurrence -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "rrule"),
    [
        ("every day at 8", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"),
        ("daily", "FREQ=DAILY;" + AT9),
        (
            "every weekday at 9:30",
            "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30;BYSECOND=0",
        ),
        ("every Thursday at 17:00", "FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0"),
        ("every other week on Mon and Wed", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;" + AT9),
        ("every 2 weeks on Friday", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;" + AT9),
        ("every month on the 1st", "FREQ=MONTHLY;BYMONTHDAY=1;" + AT9),
        ("every first Monday of the month", "FREQ=MONTHLY;BYDAY=1MO;" + AT9),
        ("weekly on tuesdays", "FREQ=WEEKLY;BYDAY=TU;" + AT9),
        ("every 3 days", "FREQ=DAILY;INTERVAL=3;" + AT9),
        ("every hour", "FREQ=HOURLY;BYMINUTE=0;BYSECOND=0"),
        ("every 30 minutes", "FREQ=MINUTELY;INTERVAL=30;BYSECOND=0"),
        ("at 17:00 every Thursday", "FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0"),
        ("every Monday morning", "FREQ=WEEKLY;BYDAY=MO;" + AT9),
        ("every evening at 8", "FREQ=DAILY;BYHOUR=20;BYMINUTE=0;BYSECOND=0"),
        (
            "tuesdays and thursdays at 3:15",
            "FREQ=WEEKLY;BYDAY=TU,TH;BYHOUR=15;BYMINUTE=15;BYSECOND=0",
        ),
        ("2nd and last fridays of each month", "FREQ=MONTHLY;BYDAY=2FR,-1FR;" + AT9),
        ("every fourth thursday in november", "FREQ=YEARLY;BYMONTH=11;BYDAY=4TH;" + AT9),
        ("every july 4th", "FREQ=YEARLY;BYMONTH=7;BYMONTHDAY=4;" + AT9),
        ("last day of each month", "FREQ=MONTHLY;BYMONTHDAY=-1;" + AT9),
        ("each week on saturday thru tuesday", "FREQ=WEEKLY;BYDAY=MO,TU,SA,SU;" + AT9),
        (
            "on weekdays at 9 and 17",
            "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9,17;BYMINUTE=0;BYSECOND=0",
        ),
        # A bare "weekly"/"monthly" takes its day from when it was said (a Wednesday, the 25th).
        ("weekly", "FREQ=WEEKLY;BYDAY=WE;" + AT9),
        ("monthly", "FREQ=MONTHLY;BYMONTHDAY=25;" + AT9),
        # "weekly" in front of a noun is an adjective, not a second schedule.
        ("every friday send the weekly report", "FREQ=WEEKLY;BYDAY=FR;" + AT9),
    ],
)
def test_recurrence_phrases(phrase: str, rrule: str) -> None:
    spec = parse_recurrence(phrase, now=WEDNESDAY, zone=BERLIN)
    assert spec is not None
    assert spec.rrule == rrule
    assert spec.time_zone == "Europe/Berlin"


@pytest.mark.parametrize(
    "phrase",
    [
        "every day twice",  # a count
        "every Thursday until March",  # a bound
        "daily except on weekends",  # an exception
        "every wed for the next 3 weeks",
        "every second",  # seconds
        "every Monday and every Friday",  # two recurrences
        "every week on the 4th day",  # a day we cannot place
        "every year on the 31st",  # a day of the year
        "every hour at 9",
        "the quarterly review",  # no recurrence at all
    ],
)
def test_unsupported_recurrence_is_none(phrase: str) -> None:
    assert parse_recurrence(phrase, now=WEDNESDAY, zone=BERLIN) is None


def test_dtstart_is_the_start_of_the_period_said_in() -> None:
    weekly = parse_recurrence("every other week on Mon and Wed", now=WEDNESDAY, zone=BERLIN)
    monthly = parse_recurrence("every month on the 1st", now=WEDNESDAY, zone=BERLIN)
    assert weekly is not None and monthly is not None
    assert weekly.dtstart == datetime(2026, 11, 23)  # that week's Monday, naive local
    assert monthly.dtstart == datetime(2026, 11, 1)


def test_thursday_1700_berlin_stays_1700_local_across_the_october_change() -> None:
    said_at = datetime(2026, 10, 1, 9, 0, tzinfo=BERLIN)
    spec = parse_recurrence("every Thursday at 17:00", now=said_at, zone=BERLIN)
    assert spec is not None
    after = datetime(2026, 10, 21, 12, 0, tzinfo=UTC)  # the Wednesday before 2026-10-25
    first, second, third = occurrences(spec, after, 3)
    assert first == datetime(2026, 10, 22, 15, 0, tzinfo=UTC)  # 17:00 CEST
    assert second == datetime(2026, 10, 29, 16, 0, tzinfo=UTC)  # 17:00 CET
    assert third == datetime(2026, 11, 5, 16, 0, tzinfo=UTC)
    assert {o.astimezone(BERLIN).strftime("%a %H:%M") for o in (first, second)} == {"Thu 17:00"}


def test_every_other_week_on_mon_and_wed() -> None:
    spec = parse_recurrence("every other week on Mon and Wed", now=WEDNESDAY, zone=BERLIN)
    assert spec is not None
    found = occurrences(spec, WEDNESDAY, 5)
    days = [o.astimezone(BERLIN).strftime("%a %Y-%m-%d %H:%M") for o in found]
    # This week's Wednesday 09:00 has passed; the next "on" week is two weeks on.
    assert days == [
        "Mon 2026-12-07 09:00",
        "Wed 2026-12-09 09:00",
        "Mon 2026-12-21 09:00",
        "Wed 2026-12-23 09:00",
        "Mon 2027-01-04 09:00",
    ]


def test_next_occurrence_is_strictly_after_and_first_is_inclusive() -> None:
    spec = parse_recurrence("every day at 8", now=WEDNESDAY, zone=BERLIN)
    assert spec is not None
    eight = datetime(2026, 11, 26, 7, 0, tzinfo=UTC)  # 08:00 CET
    assert next_occurrence(spec, eight) == eight + timedelta(days=1)
    assert next_occurrence(spec, eight - timedelta(seconds=1)) == eight
    assert first_occurrence(spec, eight) == eight
    assert first_occurrence(spec, WEDNESDAY) == eight  # today's 08:00 has passed


def test_recurring_time_in_a_spring_forward_gap() -> None:
    said_at = datetime(2026, 3, 1, 12, 0, tzinfo=BERLIN)
    spec = parse_recurrence("every day at 02:30", now=said_at, zone=BERLIN)
    assert spec is not None
    found = occurrences(spec, datetime(2026, 3, 28, 12, 0, tzinfo=UTC), 2)
    assert found == [
        datetime(2026, 3, 29, 1, 30, tzinfo=UTC),  # 03:30 CEST: moved past the gap
        datetime(2026, 3, 30, 0, 30, tzinfo=UTC),  # 02:30 CEST
    ]


def test_monthly_on_the_31st_skips_short_months() -> None:
    spec = parse_recurrence("every month on the 31st", now=WEDNESDAY, zone=BERLIN)
    assert spec is not None
    found = occurrences(spec, datetime(2027, 1, 1, tzinfo=UTC), 3)
    assert [o.astimezone(BERLIN).date().isoformat() for o in found] == [
        "2027-01-31",
        "2027-03-31",
        "2027-05-31",
    ]


def test_next_occurrence_is_fast_far_from_dtstart() -> None:
    spec = parse_recurrence("every 5 minutes", now=WEDNESDAY, zone=BERLIN)
    weekly = parse_recurrence("every other week on Mon and Wed", now=WEDNESDAY, zone=BERLIN)
    assert spec is not None and weekly is not None
    far = datetime(2046, 6, 1, 12, 2, tzinfo=UTC)  # 20 years on: millions of 5-minute steps
    started = time.perf_counter()
    upcoming = next_occurrence(spec, far)
    later = next_occurrence(weekly, far)
    assert time.perf_counter() - started < 0.5
    assert upcoming is not None and later is not None
    assert upcoming.astimezone(BERLIN).minute % 5 == 0 and upcoming > far
    assert upcoming - far <= timedelta(minutes=5)
    # Still on the phase of the week it was said in: an even number of weeks from it.
    monday = later.astimezone(BERLIN).date() - timedelta(days=later.astimezone(BERLIN).weekday())
    assert (monday - datetime(2026, 11, 23).date()).days % 14 == 0


def test_invalid_rrule_body_is_rejected() -> None:
    bad = RecurringSpec(rrule="DTSTART:20260101T000000", dtstart=datetime(2026, 1, 1))
    with pytest.raises(ValueError):
        next_occurrence(bad, WEDNESDAY)


def test_recurring_spec_round_trips_on_the_wire() -> None:
    spec = parse_recurrence("every Thursday at 17:00", now=WEDNESDAY, zone=BERLIN)
    assert spec is not None
    assert RecurringSpec.model_validate(spec.to_wire()) == spec


# --- conditions -------------------------------------------------------------------------


def no_time(_: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("the contract is signed", "contract-signed"),
        ("the SOC2 report is filed", "soc2-report-filed"),
        ("our budget has finally been approved", "budget-approved"),
        ("it's live in prod!", "live-in-prod"),
        ("Dana\u2019s PR gets merged", "dana-s-pr-merged"),
        ("the", ""),
        ("x " * 80, ("x-" * 32)[:63]),
    ],
)
def test_slug(clause: str, expected: str) -> None:
    assert slug(clause) == expected
    assert len(slug(clause)) <= 64


@pytest.mark.parametrize(
    ("text", "predicate", "args"),
    [
        ("when the contract is signed", "memory.tag_exists", {"tag": "contract-signed"}),
        (
            "to call Dana once the SOC2 report is filed, then send it",
            "memory.tag_exists",
            {"tag": "soc2-report-filed"},
        ),
        ("as soon as the invoice gets paid", "memory.tag_exists", {"tag": "invoice-paid"}),
        ("when tag Deal-Won exists", "memory.tag_exists", {"tag": "Deal-Won"}),
        ("when key deal.stage exists", "memory.key_exists", {"key": "deal.stage"}),
        (
            "when key deal.stage is 'closed won'",
            "memory.key_has_value",
            {"key": "deal.stage", "value": "closed won"},
        ),
        ("after the launch", "memory.tag_exists", {"tag": "launch"}),
    ],
)
def test_conditions(text: str, predicate: str, args: dict[str, str]) -> None:
    assert parse_condition(text, is_time=no_time) == PredicateSpec(predicate=predicate, args=args)


@pytest.mark.parametrize(
    "text",
    ["once a week", "to ask when the invoice is due", "when the", "every day", "once again"],
)
def test_not_conditions(text: str) -> None:
    assert parse_condition(text, is_time=no_time) is None


# --- inference --------------------------------------------------------------------------


def infer(text: str, tags: tuple[str, ...] = (), said_at: datetime = WEDNESDAY) -> object:
    return infer_commitment(text, tags, said_at=said_at, zone=BERLIN)


def test_infers_a_one_off_time() -> None:
    outcome = infer("remind me in 5 days to send the invoice")
    assert isinstance(outcome, Inferred)
    assert outcome.condition == "time"
    assert outcome.spec == OnceSpec(
        at=datetime(2026, 11, 30, 9, 30, tzinfo=UTC), time_zone="Europe/Berlin"
    )
    assert outcome.normalized_condition == "once:2026-11-30T09:30:00Z"


def test_infers_a_recurrence() -> None:
    outcome = infer("check back every Thursday at 17:00")
    assert isinstance(outcome, Inferred)
    assert outcome.condition == "time"
    assert isinstance(outcome.spec, RecurringSpec)
    assert outcome.normalized_condition == (
        "rrule:FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0@Europe/Berlin"
    )


def test_infers_a_predicate() -> None:
    outcome = infer("remind me when the contract is signed")
    assert isinstance(outcome, Inferred)
    assert outcome.condition == "predicate"
    assert outcome.spec == PredicateSpec(
        predicate="memory.tag_exists", args={"tag": "contract-signed"}
    )
    assert outcome.normalized_condition == "predicate:memory.tag_exists:tag=contract-signed"


def test_equivalent_phrasings_have_one_normalized_condition() -> None:
    def normalized(text: str, said_at: datetime = WEDNESDAY) -> str:
        outcome = infer(text, said_at=said_at)
        assert isinstance(outcome, Inferred), text
        return outcome.normalized_condition

    assert normalized("remind me every thursday at 5pm") == normalized(
        "remind me every Thursday at 17:00"
    )
    assert normalized("follow up tomorrow at 9am") == normalized("follow up tomorrow at 09:00")
    assert normalized("remind me when the contract is signed") == normalized(
        "remind me once the contract gets signed"
    )
    # The phase of "every other week" is the week it was said in, not the moment.
    thursday = WEDNESDAY + timedelta(days=1, hours=5)
    biweekly = "remind me every other week on Mon and Wed"
    assert normalized(biweekly) == normalized(biweekly, thursday)
    assert normalized(biweekly).endswith("@Europe/Berlin#2026-11-23T00:00")


def test_relative_times_resolve_from_said_at() -> None:
    first = infer("remind me in 5 days", said_at=WEDNESDAY)
    later = infer("remind me in 5 days", said_at=WEDNESDAY + timedelta(days=1))
    again = infer("remind me in 5 days", said_at=WEDNESDAY)
    assert isinstance(first, Inferred) and isinstance(later, Inferred)
    assert first == again  # deterministic: nothing depends on the clock of the parse
    assert first.normalized_condition != later.normalized_condition


def test_the_text_before_the_trigger_counts_when_after_says_nothing() -> None:
    outcome = infer("Next Monday: follow up with Dana")
    assert isinstance(outcome, Inferred)
    assert outcome.normalized_condition == "once:2026-11-30T08:00:00Z"


def test_tagged_entry_without_a_trigger() -> None:
    outcome = infer("send the board pack on 2026-12-10 at 08:00", ("COMMITMENT",))
    assert isinstance(outcome, Inferred)
    assert outcome.normalized_condition == "once:2026-12-10T07:00:00Z"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("remind me to call Dana", "no-time-or-condition"),
        ("remind me in a few days to check the order", "unresolvable-time"),
        ("follow up every Thursday twice", "unsupported-recurrence"),
        ("remind me on Friday once the contract is signed", "time-and-condition"),
        ("remind me yesterday to file the form", "time-in-past"),
        ("remind me at 9:00 and at 17:00 tomorrow", "unresolvable-time"),
    ],
)
def test_unparsable_commitments(text: str, reason: str) -> None:
    outcome = infer(text)
    assert outcome == Unparsable(reason)
    assert isinstance(outcome, Unparsable)
    assert not set(text.split()) & set(re.split(r"\W+", outcome.reason)) - {"time", "condition"}


@pytest.mark.parametrize(
    "text", ["the contract was signed yesterday", "Dana prefers email over Slack", ""]
)
def test_not_commitments(text: str) -> None:
    assert infer(text) is None


def test_said_at_must_be_aware() -> None:
    with pytest.raises(ValueError):
        infer_commitment("remind me tomorrow", (), said_at=datetime(2026, 1, 1), zone=BERLIN)


def test_today_after_its_default_time_is_due_now_through_inference() -> None:
    """docs/time-grammar.md: "today" whose default time has passed is due now. The
    resolver said so, but inference refused the instant as not after said_at."""
    said_at = WEDNESDAY + timedelta(seconds=7, microseconds=250)
    outcome = infer("remind me today to call Dana", said_at=said_at)
    assert isinstance(outcome, Inferred), outcome
    assert outcome.spec == OnceSpec(
        at=datetime(2026, 11, 25, 9, 30, 7, tzinfo=UTC), time_zone="Europe/Berlin"
    )
    assert "today-past-time-is-now" in outcome.conventions
    # A day that has passed stays refused.
    assert infer("remind me yesterday", said_at=said_at) == Unparsable("time-in-past")
