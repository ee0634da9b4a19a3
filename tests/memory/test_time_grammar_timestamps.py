"""Written-out timestamps and the edges of a time phrase (issue 21, second round): a
weekday beside a full date (kept only when they agree), ISO 8601 local date-times with
seconds and fractions, "2020/10/9 PM 2:26", ranges that must stay refused, and clauses
that open with a pronoun or end at a modal verb. Expectations are worked out by hand,
said on Wednesday 2026-11-25 10:30 in Berlin (CET, UTC+1). Pure Python."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from schemas.commitment_spec import OnceSpec, RecurringSpec

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2026, 11, 25, 10, 30, tzinfo=BERLIN)


def read(text: str) -> Inferred | Unparsable | None:
    return infer_commitment(text, (), said_at=WEDNESDAY, zone=BERLIN)


def due(text: str) -> str | Unparsable | None:
    outcome = read(text)
    if isinstance(outcome, Inferred):
        assert isinstance(outcome.spec, OnceSpec), text
        return outcome.spec.at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M:%S")
    return outcome


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 2027-08-05 is a Thursday, 2027-08-09 a Monday.
        ("remind me Thu Aug 05 12:00:00 2027", "2027-08-05 12:00:00"),
        ("remind me Thu Aug 05 12:00:07 2027", "2027-08-05 12:00:07"),
        ("remind me Mon 9th Aug, 2027", "2027-08-09 09:00:00"),
        ("remind me on Wed, 9th December", "2026-12-09 09:00:00"),
    ],
)
def test_a_weekday_beside_a_full_date_that_agrees(text: str, expected: str) -> None:
    assert due(text) == expected


@pytest.mark.parametrize(
    "text",
    ["remind me Wed Aug 05 12:00:00 2027", "remind me Tues 9th Aug, 2027"],
)
def test_a_weekday_that_contradicts_its_date_is_refused(text: str) -> None:
    assert due(text) == Unparsable("unresolvable-time")


def test_iso_local_date_times_keep_seconds_and_fractions() -> None:
    outcome = read("remind me 2027-12-27T09:15:01.002")
    assert isinstance(outcome, Inferred) and isinstance(outcome.spec, OnceSpec)
    assert outcome.spec.at == datetime(2027, 12, 27, 9, 15, 1, 2000, tzinfo=BERLIN)
    assert due("remind me 2027-12-27 09:15:01") == "2027-12-27 09:15:01"
    assert due("remind me 2027-12-27T09:15") == "2027-12-27 09:15:00"
    assert due("remind me 2027-12-27T25:15") == Unparsable("unresolvable-time")


def test_seconds_a_recurrence_cannot_hold_are_refused() -> None:
    # The rule keeps BYSECOND=0: "9:00:30" every day would fire 30 seconds early.
    assert read("remind me every day at 9:00:30") == Unparsable("unsupported-recurrence")
    daily = read("remind me every day at 9:00:00")
    assert isinstance(daily, Inferred) and isinstance(daily.spec, RecurringSpec)


def test_meridiem_before_the_clock_only_after_a_year_first_date() -> None:
    assert due("remind me 2027/10/9 PM 2:26") == "2027-10-09 14:26:00"
    assert due("remind me 2027/10/9 AM 12:26") == "2027-10-09 00:26:00"
    assert not isinstance(read("remind me at 5 pm 2:26"), Inferred)


@pytest.mark.parametrize(
    "text",
    [
        "remind me to attend 12-14 June 2027",  # was June 14th
        "remind me to attend June 12 to 14",  # was June 12th
        "remind me to attend the fair June 12-14",  # was June 12th of 2014
        "remind me June 12 - 14, 2027",
        "remind me to attend 12 through 14 June",
    ],
)
def test_date_ranges_stay_refused(text: str) -> None:
    assert not isinstance(read(text), Inferred)


def test_a_dash_before_a_two_digit_year_is_a_range_not_a_year() -> None:
    # "Dec 24 '27" and "Dec 24, 27" name the year; "Dec 24-27" names four days.
    assert due("remind me Dec 24 '27") == "2027-12-24 09:00:00"
    assert due("remind me Dec 24, 27") == "2027-12-24 09:00:00"
    assert due("remind me Dec 24-27") == Unparsable("leftover-words")


@pytest.mark.parametrize(
    ("text", "expected", "span"),
    [
        ("remind me I'm available tomorrow", "2026-11-26 09:00:00", "tomorrow"),
        ("remind me im available on Friday at 3pm", "2026-11-27 15:00:00", "on Friday at 3pm"),
        ("remind me tomorrow would work best for me", "2026-11-26 09:00:00", "tomorrow"),
        ("remind me to move the car Friday would work", "2026-11-27 09:00:00", "Friday"),
    ],
)
def test_a_pronoun_opens_a_clause_and_a_modal_ends_the_phrase(
    text: str, expected: str, span: str
) -> None:
    outcome = read(text)
    assert due(text) == expected
    assert isinstance(outcome, Inferred)
    assert text[outcome.span[0] : outcome.span[1]] == span


def test_a_loose_time_word_after_a_pronoun_is_still_a_leftover() -> None:
    assert due("remind me I'm free the following Friday") == Unparsable("leftover-words")
