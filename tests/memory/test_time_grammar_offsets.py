"""Offsets from when an entry was said (issue 21, second round): fractional amounts of
every unit, "now + 30 minutes", "+2 years", and a bare duration as the whole time phrase.
Expectations are worked out by hand from docs/time-grammar.md, said on Wednesday
2026-11-25 10:30 in Berlin (CET, UTC+1) unless a test says otherwise. Pure Python."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from schemas.commitment_spec import OnceSpec

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2026, 11, 25, 10, 30, tzinfo=BERLIN)


def read(text: str, said_at: datetime = WEDNESDAY) -> Inferred | Unparsable | None:
    return infer_commitment(text, (), said_at=said_at, zone=BERLIN)


def due(text: str, said_at: datetime = WEDNESDAY) -> str | Unparsable | None:
    """The local due time (to the second) of a one-off entry, or what inference said."""
    outcome = read(text, said_at)
    if isinstance(outcome, Inferred):
        assert isinstance(outcome.spec, OnceSpec), text
        return outcome.spec.at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M:%S")
    return outcome


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A fraction of a day is 24-hour days of elapsed time: 1.5 days = 36 hours.
        ("remind me in 1.5 days", "2026-11-26 22:30:00"),
        ("remind me in 1,5 days", "2026-11-26 22:30:00"),  # a decimal comma
        ("remind me in 0.5 weeks", "2026-11-28 22:30:00"),  # 84 hours
        ("remind me 0,5 hours later", "2026-11-25 11:00:00"),
        ("remind me in 10.75 minutes", "2026-11-25 10:40:45"),  # 645 seconds
        # A fraction of a year is whole months: 1.5 years = 18 months, wall time kept.
        ("remind me in 1.5 years", "2028-05-25 10:30:00"),
        ("remind me in 2.5 decades", "2051-11-25 10:30:00"),
    ],
)
def test_fractional_amounts_are_read_exactly(text: str, expected: str) -> None:
    assert due(text) == expected


def test_a_fraction_of_a_day_is_elapsed_hours_across_dst() -> None:
    # Saturday 2027-03-27 10:30 CET (09:30 UTC); clocks go forward on Sunday at 02:00.
    # 36 hours later is 21:30 UTC, 23:30 CEST; a whole day keeps the wall time.
    saturday = datetime(2027, 3, 27, 10, 30, tzinfo=BERLIN)
    assert due("remind me in 1.5 days", saturday) == "2027-03-28 23:30:00"
    assert due("remind me in 1 day", saturday) == "2027-03-28 10:30:00"


def test_fractional_amounts_carry_their_convention() -> None:
    days = read("remind me in 1.5 days")
    years = read("remind me in 1.5 years")
    assert isinstance(days, Inferred) and "fractional-days-are-24-hours" in days.conventions
    assert isinstance(years, Inferred) and "fractional-years-are-months" in years.conventions


@pytest.mark.parametrize(
    "text",
    [
        "remind me in 1.5 months",  # months differ in length
        "remind me in 0.1 years",  # 1.2 months
        "remind me in 1.33 minutes",  # 79.8 seconds
    ],
)
def test_fractions_that_are_not_exact_are_refused(text: str) -> None:
    assert due(text) == Unparsable("unresolvable-time")


def test_a_comma_before_three_digits_is_not_a_decimal() -> None:
    # "1,500": a thousands separator or a decimal comma; neither is picked.
    assert not isinstance(read("remind me in 1,500 minutes"), Inferred)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("remind me now + 30 minutes", "2026-11-25 11:00:00"),
        ("remind me now + 1hour", "2026-11-25 11:30:00"),
        ("remind me now+2 days to renew", "2026-11-27 10:30:00"),
        ("remind me +2 years", "2028-11-25 10:30:00"),
    ],
)
def test_plus_offsets_from_now(text: str, expected: str) -> None:
    assert due(text) == expected


@pytest.mark.parametrize(
    ("text", "expected", "span"),
    [
        ("remind me 30 minutes", "2026-11-25 11:00:00", "30 minutes"),
        ("remind me 30 mins", "2026-11-25 11:00:00", "30 mins"),
        ("remind me 2 hours and 30 minutes", "2026-11-25 13:00:00", "2 hours and 30 minutes"),
        ("remind me 2h30m", "2026-11-25 13:00:00", "2h30m"),
        ("remind me 1.5h", "2026-11-25 12:00:00", "1.5h"),
        ("remind me a wk", "2026-12-02 10:30:00", "a wk"),
        ("remind me thirty two hours", "2026-11-26 18:30:00", "thirty two hours"),
        ("remind me 30 minutes to check the oven", "2026-11-25 11:00:00", "30 minutes"),
        ("remind me 3 days: renew the domain", "2026-11-28 10:30:00", "3 days"),
    ],
)
def test_a_bare_duration_as_the_whole_phrase_is_an_offset(
    text: str, expected: str, span: str
) -> None:
    outcome = read(text)
    assert due(text) == expected
    assert isinstance(outcome, Inferred)
    assert "bare-duration-is-offset" in outcome.conventions
    assert text[outcome.span[0] : outcome.span[1]] == span


@pytest.mark.parametrize(
    "text",
    [
        "remind me 30 minutes before the meeting",  # relative to an event we cannot see
        "remind me to stretch 30 minutes",  # how long the task lasts
        "remind me 30 minutes and call Dana",
        "remind me 30 minutes of exercise",
        "remind me for 30 minutes",
    ],
)
def test_a_duration_that_is_not_the_whole_phrase_is_not_an_offset(text: str) -> None:
    assert not isinstance(read(text), Inferred)
