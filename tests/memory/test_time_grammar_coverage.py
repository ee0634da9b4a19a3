"""Full coverage (issue 21): a time phrase becomes an instant only when every word of it
is read. The kinds of phrase that used to come out at a wrong instant, leftover words,
and the boundary between the time phrase and the task words. Expectations are worked
out by hand from docs/time-grammar.md, said on Wednesday 2026-11-25 10:30 in Berlin
(CET, UTC+1). Pure Python: no database, no Temporal."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from schemas.commitment_spec import OnceSpec, RecurringSpec

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2026, 11, 25, 10, 30, tzinfo=BERLIN)


def due(text: str) -> str | Unparsable | None:
    """The local due time of a one-off entry, or what inference said instead."""
    outcome = infer_commitment(text, (), said_at=WEDNESDAY, zone=BERLIN)
    if isinstance(outcome, Inferred):
        assert isinstance(outcome.spec, OnceSpec), text
        return outcome.spec.at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M")
    return outcome


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Fractions of an hour: elapsed minutes (was: a date next January).
        ("remind me in 1/2 hour", "2026-11-25 11:00"),
        ("remind me in an hour and a half", "2026-11-25 12:00"),
        ("remind me in 1.5 hours", "2026-11-25 12:00"),
        ("remind me in 1 1/2 hours to stretch", "2026-11-25 12:00"),
        # Spelled hours with am/pm (was: 15:00 for "three am").
        ("remind me at three am to call Dana", "2026-11-26 03:00"),
        ("remind me at three thirty pm", "2026-11-25 15:30"),
        ("remind me tomorrow at eleven fifteen am", "2026-11-26 11:15"),
        # Minutes before or after an hour, keeping its am/pm (was: the minutes dropped).
        ("remind me a quarter past 3pm", "2026-11-25 15:15"),
        ("remind me twenty after 3pm", "2026-11-25 15:20"),
        ("remind me half past 3 pm", "2026-11-25 15:30"),
        ("remind me 15 to noon", "2026-11-25 11:45"),
        ("remind me ten to five", "2026-11-25 16:50"),  # a bare 5 is 17:00
        ("remind me 10 to 1pm", "2026-11-25 12:50"),
        # "<weekday> after next": a week after the coming one (was: the coming one).
        ("remind me Friday after next", "2026-12-04 09:00"),
        ("remind me the week after next", "2026-12-07 09:00"),
        # Ordinal and last weekdays of a month (was: next week).
        ("remind me on the first Tuesday of October", "2027-10-05 09:00"),
        ("remind me last Monday of March", "2027-03-29 09:00"),
        ("remind me the second Friday of next month", "2026-12-11 09:00"),
        ("remind me on the 30th of next month at 5pm", "2026-12-30 17:00"),
        # Day-month orders and two-digit years (was: the year dropped, or 2074).
        ("remind me on 14th April 27", "2027-04-14 09:00"),
        ("remind me on 3 February 2027 at 10:00", "2027-02-03 10:00"),
        ("remind me 12/25/27", "2027-12-25 09:00"),
        # Parts of the day after a bare hour (was: 18:00 for "8 this evening").
        ("remind me 8 this evening", "2026-11-25 20:00"),
        ("remind me 6 tonight", "2026-11-25 18:00"),
        ("remind me 3 in the morning", "2026-11-26 03:00"),
        # Compound offsets.
        ("remind me in 1 week and 2 days", "2026-12-04 10:30"),
        ("remind me in 2 hours and 30 minutes", "2026-11-25 13:00"),
        ("remind me 3 days later", "2026-11-28 10:30"),
    ],
)
def test_the_kinds_that_went_wrong(text: str, expected: str) -> None:
    assert due(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "remind me at 5pm sharp",  # a word after the time
        "remind me the following Friday",  # a word before it, no task introducer
        "remind me 3 tomorrow",  # a loose number next to the phrase
        "remind me 12-14 June 2027",  # a range: the first number left over
        "remind me next week-ish",
        "remind me at 5pm XYZ",  # an unknown capitalised word after a time
        "Dec 1st 14:30 quarterly review prep",  # tagged below; no introducer before "quarterly"
        "remind me every Monday at 9 sharp",  # recurrences too
        "remind me in 1/2 hour-ish",
    ],
)
def test_a_leftover_word_is_unparsable(text: str) -> None:
    outcome = infer_commitment(text, ("commitment",), said_at=WEDNESDAY, zone=BERLIN)
    assert outcome == Unparsable("leftover-words")


@pytest.mark.parametrize(
    ("text", "expected", "span_text"),
    [
        # The time phrase ends at a task introducer, a clause end or a task verb.
        ("remind me in 5 days to renew the domain", "2026-11-30 10:30", "in 5 days"),
        ("remind me Friday at 9 about the offsite", "2026-11-27 09:00", "Friday at 9"),
        ("follow up in 3 weeks on the renewal quote", "2026-12-16 10:30", "in 3 weeks"),
        ("remind me tomorrow - call Dana", "2026-11-26 09:00", "tomorrow"),
        ("remind me tomorrow: call Dana", "2026-11-26 09:00", "tomorrow"),
        ("remind me tomorrow call Dana", "2026-11-26 09:00", "tomorrow"),
        # Or it starts after the task, which opens with an introducer or a verb.
        ("Remind me to call Dana at 3pm", "2026-11-25 15:00", "at 3pm"),
        ("check in with Dana on Friday", "2026-11-27 09:00", "on Friday"),
        ("send the deck on Friday", "2026-11-27 09:00", "on Friday"),
        # Two regions read together: the day before the task, the hour after it.
        (
            "remind me tomorrow to call Dana at 3pm",
            "2026-11-26 15:00",
            "tomorrow to call Dana at 3pm",
        ),
        # The lead part, before the trigger.
        ("Next Monday: follow up with Dana", "2026-11-30 09:00", "Next Monday"),
    ],
)
def test_task_words_around_the_time_phrase(text: str, expected: str, span_text: str) -> None:
    outcome = infer_commitment(text, ("commitment",), said_at=WEDNESDAY, zone=BERLIN)
    assert isinstance(outcome, Inferred), outcome
    assert isinstance(outcome.spec, OnceSpec)
    assert outcome.spec.at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M") == expected
    start, end = outcome.span
    assert text[start:end] == span_text


def test_a_recurrence_ends_at_a_task_verb_and_keeps_every_word_read() -> None:
    text = "remind me every friday send the weekly report"
    outcome = infer_commitment(text, (), said_at=WEDNESDAY, zone=BERLIN)
    assert isinstance(outcome, Inferred)
    assert isinstance(outcome.spec, RecurringSpec)
    assert outcome.spec.rrule == "FREQ=WEEKLY;BYDAY=FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    assert text[outcome.span[0] : outcome.span[1]] == "every friday"
    # A month after "every" is a yearly rule, never one date ("every july 4th").
    yearly = infer_commitment("remind me every july 4th", (), said_at=WEDNESDAY, zone=BERLIN)
    assert isinstance(yearly, Inferred) and isinstance(yearly.spec, RecurringSpec)
    assert yearly.spec.rrule == "FREQ=YEARLY;BYMONTH=7;BYMONTHDAY=4;BYHOUR=9;BYMINUTE=0;BYSECOND=0"


def test_a_condition_clause_that_opens_with_a_time_must_be_read_whole() -> None:
    assert due("remind me after 3 days to check") == "2026-11-28 10:30"
    assert due("remind me after 3 days-ish") == Unparsable("leftover-words")
    # "after next" is a day, not a condition waiting for a tag called "next".
    assert due("remind me Friday after next") == "2026-12-04 09:00"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("remind me in 1.33 minutes", "unresolvable-time"),  # 79.8 s: not whole seconds
        ("remind me the 31st of this month", "invalid-date"),  # November has 30 days
        ("remind me on the fifth Monday of February", "invalid-date"),
        ("remind me 12 in the morning", "unresolvable-time"),  # midnight or noon?
        ("remind me at 8am tonight", "unresolvable-time"),  # contradictory
    ],
)
def test_refusals_carry_their_reason(text: str, reason: str) -> None:
    assert due(text) == Unparsable(reason)
