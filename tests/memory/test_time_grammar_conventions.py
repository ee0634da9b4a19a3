"""The ambiguity rules (ParsingConventions) and what every Inferred reports about its
reading: the span it read and the convention codes it applied. Expectations are worked
out by hand from docs/time-grammar.md; said on Wednesday 2026-11-25 10:30 in Berlin
unless a test says otherwise."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmarks.commitment_phrases import CASES
from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.inference import REASONS, Inferred, Unparsable, infer_commitment
from schemas.commitment_spec import OnceSpec

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2026, 11, 25, 10, 30, tzinfo=BERLIN)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "time-grammar.md"


def infer(
    text: str, conventions: ParsingConventions = DEFAULT_CONVENTIONS
) -> Inferred | Unparsable | None:
    return infer_commitment(text, (), said_at=WEDNESDAY, zone=BERLIN, conventions=conventions)


def local(outcome: Inferred | Unparsable | None) -> str:
    assert isinstance(outcome, Inferred), outcome
    assert isinstance(outcome.spec, OnceSpec)
    return outcome.spec.at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M")


# --- numeric day/month order -----------------------------------------------------------


def test_date_order_settles_an_ambiguous_numeric_date() -> None:
    mdy = infer("remind me on 3/4/2027")
    dmy = infer("remind me on 3/4/2027", ParsingConventions(date_order="DMY"))
    assert local(mdy) == "2027-03-04 09:00"
    assert local(dmy) == "2027-04-03 09:00"
    assert isinstance(mdy, Inferred) and "date-order-MDY" in mdy.conventions
    assert isinstance(dmy, Inferred) and "date-order-DMY" in dmy.conventions


def test_a_date_only_one_order_can_read_takes_it() -> None:
    for order in ("MDY", "DMY"):
        outcome = infer("remind me on 31/10/2027", ParsingConventions(date_order=order))
        assert local(outcome) == "2027-10-31 09:00"
        assert isinstance(outcome, Inferred) and "date-order-only-valid" in outcome.conventions


def test_year_first_order_refuses_a_two_digit_year_first_date() -> None:
    ymd = ParsingConventions(date_order="YMD")
    assert infer("remind me on 27/03/04", ymd) == Unparsable("ambiguous-date-order")
    assert local(infer("remind me on 2027-03-04", ymd)) == "2027-03-04 09:00"


def test_dotted_dates_are_day_first_whatever_the_order() -> None:
    outcome = infer("remind me on 3.4.2027")
    assert local(outcome) == "2027-04-03 09:00"
    assert isinstance(outcome, Inferred) and "dotted-date-day-first" in outcome.conventions


# --- two-digit years -------------------------------------------------------------------


def test_two_digit_year_is_the_nearest_within_the_window() -> None:
    outcome = infer("remind me on 12/25/27")
    assert local(outcome) == "2027-12-25 09:00"
    assert isinstance(outcome, Inferred) and "two-digit-year-nearest" in outcome.conventions
    # 74 said in 2026: 1974 and 2074 are both 48+ years away; neither is picked.
    assert infer("remind me on 10/31/74") == Unparsable("ambiguous-two-digit-year")
    narrow = ParsingConventions(two_digit_year_window=0)
    assert infer("remind me on 12/25/27", narrow) == Unparsable("ambiguous-two-digit-year")
    # A two-digit year in the past is a past instant, never moved a century on.
    assert infer("remind me on 14th April 15") == Unparsable("time-in-past")


# --- "next <weekday>" ------------------------------------------------------------------


def test_next_weekday_is_refused_only_when_the_readings_differ() -> None:
    assert WEDNESDAY.strftime("%A") == "Wednesday"
    assert infer("remind me next Friday") == Unparsable("ambiguous-next-weekday")
    # Monday is behind us this week: the coming Monday is next week's under both readings.
    assert local(infer("remind me next Monday")) == "2026-11-30 09:00"
    coming = infer("remind me next Friday", ParsingConventions(next_weekday="coming"))
    following = infer("remind me next Friday", ParsingConventions(next_weekday="following-week"))
    assert local(coming) == "2026-11-27 09:00"
    assert local(following) == "2026-12-04 09:00"
    assert isinstance(coming, Inferred)
    assert "next-weekday-is-coming-one" in coming.conventions
    # Bare and "this" weekdays are never ambiguous.
    assert local(infer("remind me this Friday")) == "2026-11-27 09:00"


# --- zone abbreviations ----------------------------------------------------------------


def test_zone_abbreviations_come_from_an_allow_list() -> None:
    utc = infer("remind me tomorrow at 17:00 UTC")
    assert isinstance(utc, Inferred) and isinstance(utc.spec, OnceSpec)
    assert utc.spec.at == datetime(2026, 11, 26, 17, 0, tzinfo=UTC)
    assert "zone-utc" in utc.conventions
    assert infer("remind me tomorrow at 3pm EST") == Unparsable("unknown-zone-abbreviation")
    eastern = ParsingConventions(zone_abbreviations=(("utc", "UTC"), ("est", "America/New_York")))
    allowed = infer("remind me tomorrow at 3pm EST", eastern)
    assert isinstance(allowed, Inferred) and isinstance(allowed.spec, OnceSpec)
    assert allowed.spec.at == datetime(2026, 11, 26, 20, 0, tzinfo=UTC)  # 15:00 EST
    with pytest.raises(ValueError):
        ParsingConventions(zone_abbreviations=(("est", "Not/AZone"),))


# --- span and conventions --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "span_text", "codes"),
    [
        ("remind me tomorrow to book the train", "tomorrow", ("default-time-09:00",)),
        ("Remind  me   at 5 P.M. to leave", "at 5 P.M.", ("clock-today-or-tomorrow",)),
        ("remind me in 5 days", "in 5 days", ("relative-days-keep-time-of-day",)),
        ("remind me at 4 to leave", "at 4", ("bare-hour-1-6-is-pm", "clock-today-or-tomorrow")),
        ("remind me this evening", "this evening", ("part-of-day-evening-18:00",)),
        (
            "remind me when the contract is signed, thanks",
            "when the contract is signed",
            ("condition-tag-from-words",),
        ),
        ("remind me when tag deal-won exists", "when tag deal-won exists", ()),
        (
            "check in weekly with Dana",
            "weekly",
            ("default-time-09:00", "weekly-on-said-weekday"),
        ),
        ("Straße: remind me in 2 hours", "in 2 hours", ()),  # casefold lengthens "ß"
    ],
)
def test_span_and_conventions(text: str, span_text: str, codes: tuple[str, ...]) -> None:
    outcome = infer(text)
    assert isinstance(outcome, Inferred), outcome
    assert text[outcome.span[0] : outcome.span[1]] == span_text
    assert outcome.conventions == codes


def test_every_inferred_of_the_regression_set_carries_a_real_span() -> None:
    inferred = 0
    for case in CASES:
        outcome = infer_commitment(case.text, case.tags, said_at=case.said.at, zone=case.said.zone)
        if isinstance(outcome, Inferred):
            inferred += 1
            start, end = outcome.span
            assert 0 <= start < end <= len(case.text), case.text
            assert case.text[start:end].strip() == case.text[start:end], case.text
        elif isinstance(outcome, Unparsable):
            assert outcome.reason in REASONS
    assert inferred > 80


def test_reason_and_convention_codes_are_documented() -> None:
    documented = set(re.findall(r"`([a-z0-9:-]+)`", DOCS.read_text(encoding="utf-8")))
    assert REASONS.issubset(documented)
    for text in ("remind me next Friday", "remind me on 10/31/74", "remind me at 3pm EST"):
        outcome = infer(text)
        assert isinstance(outcome, Unparsable) and outcome.reason in REASONS
    for case in CASES:
        outcome = infer_commitment(case.text, case.tags, said_at=case.said.at, zone=case.said.zone)
        if isinstance(outcome, Inferred):
            for code in outcome.conventions:
                assert code in documented or re.sub(r"\d\d:\d\d$", "HH:MM", code) in documented
