"""dateparser's own test data: the ``param(...)`` cases of three test files in the
dateparser 1.5.0 sdist (fetched by ``python -m benchmarks.time_corpora.fetch``), read
with ``ast`` (benchmarks/time_corpora/testcode.py), never imported or run.

Rows are every parameter set of every parameterised test in tests/test_date_parser.py,
tests/test_freshness_date_parser.py and tests/test_search.py. Key:
``<file>::<Class>.<method>::<index>::<sha256 of the case's source, 8 hex>``.

Scored test methods and what their expectation means for a reminder ("Remind me
<phrase>", said at the reference time):

- Instant methods (``METHODS[...] == "instant"``: date_string -> expected datetime, or
  date + time): the instant, judged on the fields the phrase fixes; a past instant is
  "no commitment" or skipped by the rules of benchmarks/time_corpora/judging.py, where
  "forward" means the method sets PREFER_DATES_FROM=future.
- ``ago`` (freshness: date_string -> now - relativedelta(ago)): a past instant. Expect
  no commitment when the phrase says it is past ("2 days ago", "yesterday", "last
  week"); a bare duration ("2 weeks") that dateparser reads as past is skipped (a
  reminder reads "in 2 weeks").
- ``in_future`` (freshness: now + relativedelta(in_future)) and ``delta`` ("two days
  later": reference + expected_delta): that instant; "approx" cases are skipped.
- ``nothing`` methods (dateparser must return None or raise): expect no commitment.

Reference time: the method's RELATIVE_BASE (or the case's relative_base / today, or a
``base_date`` in the body), else the class' ``self.now`` (freshness: 2014-09-01 10:30),
else 2012-11-13 00:00 (the RELATIVE_BASE of the file's main English test).

Skipped, counted by reason: methods not listed (settings a reminder does not have: time
zones, DATE_ORDER, PREFER_DAY_OF_MONTH, date_formats, RETURN_TIME_AS_PERIOD periods,
language detection; test_search.py's prose with several dates per text), cases for a
language other than English (by the method's language argument or by vocabulary,
benchmarks/time_corpora/language.py), cases that are not literals (f-strings, time-zone
objects), partial dates (period month or year), and the past-leaning readings above.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from typing import Any

from dateutil.relativedelta import relativedelta

from benchmarks.time_corpora.fetch import DATEPARSER, read_member
from benchmarks.time_corpora.judging import expect_instant
from benchmarks.time_corpora.language import is_english, marks_past
from benchmarks.time_corpora.rows import Expectation, NoCommitment, Row
from benchmarks.time_corpora.testcode import Case, Opaque, assigned_in, cases, setting_in

NAME = "dateparser tests"
FILES = ("tests/test_date_parser.py", "tests/test_freshness_date_parser.py", "tests/test_search.py")
DEFAULT_REFERENCE = datetime(2012, 11, 13)

METHODS: dict[str, str] = {
    # tests/test_date_parser.py
    "test_dates_parsing": "instant",
    "test_dates_parsing_with_normalization": "instant",
    "test_preferably_past_dates": "instant",
    "test_preferably_future_dates": "instant",
    "test_preferably_future_dates_relative_last_week_of_month": "instant",
    "test_dates_without_preference": "instant",
    "test_preferably_past_dates_leap_year": "instant",
    "test_preferably_future_dates_leap_year": "instant",
    "test_dates_without_preference_leap_year": "instant",
    "test_extracted_period": "instant",
    "test_hour_after_at_or_date_is_time": "instant",
    "test_hour_after_at_or_date_is_duration": "instant",
    "test_weekday_with_modifier_variants": "instant",
    "test_word_numbers_with_later": "delta",
    "test_word_numbers_advanced": "delta",
    "test_dates_not_parsed": "nothing",
    "test_error_should_be_raised_for_invalid_dates_with_too_large_day_number": "nothing",
    "test_misplaced_modifier_is_not_parsed": "nothing",
    "test_modifier_without_weekday_is_not_parsed_by_default_languages": "nothing",
    "test_parsing_strings_containing_only_separator_tokens": "nothing",
    # tests/test_freshness_date_parser.py
    "test_relative_past_dates": "ago",
    "test_normalized_relative_dates": "ago",
    "test_relative_past_dates_with_time_as_period": "ago",
    "test_relative_future_dates": "in_future",
    "test_freshness_date_with_time": "instant",
    "test_freshness_date_with_relative_base": "instant",
    "test_freshness_date_with_relative_base_past": "instant",
    "test_freshness_date_with_relative_base_future": "instant",
    "test_insane_dates": "nothing",
    "test_dates_not_supported_by_date_time": "nothing",
    "test_ordinal_century_and_fortnight_are_not_relative_dates": "nothing",
    "test_number_words_without_a_time_unit_are_not_relative_dates": "nothing",
}
OUT_OF_SCOPE = "test method out of scope (time zones, date order, formats, periods, detection)"
SEARCH = "search over prose (several dates per text)"
NOT_LITERAL = "not a literal (f-string, time-zone object, lambda)"


def _reference(case: Case, now: datetime | None) -> datetime:
    for name in ("relative_base", "today"):
        value = case.args.get(name)
        if isinstance(value, datetime):
            return value
    for value in (setting_in(case.body, "RELATIVE_BASE"), assigned_in(case.body, "base_date")):
        if isinstance(value, datetime):
            return value
    return now or DEFAULT_REFERENCE


def _forward(case: Case) -> bool:
    return setting_in(case.body, "PREFER_DATES_FROM") == "future"


def _language_ok(case: Case, phrase: str) -> bool:
    language = case.args.get("language")
    if isinstance(language, str) and language != "en":
        return False
    return is_english(phrase)


def _when(case: Case, kind: str, reference: datetime) -> datetime | date | str | None:
    """The instant the case expects, None for "nothing", or a skip reason."""
    args = case.args
    if kind == "delta":
        delta = args.get("expected_delta")
        if "approx" in str(args.get("description", "")):
            return "approximate expectation (months or years as days)"
        return reference + delta if isinstance(delta, timedelta) else NOT_LITERAL
    if kind in ("ago", "in_future"):
        offset = args.get(kind)
        if not isinstance(offset, dict):
            return NOT_LITERAL
        step = relativedelta(**offset)
        return reference - step if kind == "ago" else reference + step
    if "date" in args and "time" in args:
        day, clock = args["date"], args["time"]
        if isinstance(day, date) and isinstance(clock, time):
            return datetime.combine(day, clock)
        return NOT_LITERAL
    expected = args.get("expected")
    if expected is None:
        return None
    if isinstance(expected, (datetime, date)):
        if args.get("period") in ("month", "year"):
            return "partial date (month or year only)"
        return expected
    return NOT_LITERAL


def _expectation(case: Case, kind: str, phrase: str, reference: datetime) -> Expectation | str:
    if kind == "nothing":
        return NoCommitment("not a date")
    when = _when(case, kind, reference)
    if isinstance(when, str):
        return when
    if when is None:
        return NoCommitment("not a date")
    if kind == "ago" and not marks_past(phrase):
        return "bare duration dateparser reads as past"
    return expect_instant(phrase, when, reference, forward=_forward(case) or kind != "instant")


def load() -> Iterator[Row]:
    for path in FILES:
        text = read_member(DATEPARSER, path)
        now = _setup_now(text)
        for case in cases(path, text):
            yield _row(case, now.get(case.owner))


def _setup_now(text: str) -> dict[str, datetime]:
    """Each test class' ``self.now`` set in setUp (the freshness tests' fixed clock)."""
    found: dict[str, datetime] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "setUp":
                    value = assigned_in(item, "now")
                    if isinstance(value, datetime):
                        found[node.name] = value
    return found


def _row(case: Case, now: datetime | None) -> Row:
    phrase_value: Any = case.args.get("date_string", case.args.get("text", case.args.get("string")))
    phrase = phrase_value if isinstance(phrase_value, str) else ""
    reference = _reference(case, now)
    key = case.key

    def skip(reason: str) -> Row:
        return Row(NAME, key, phrase, reference, None, skip=reason, group=case.function)

    if case.path.endswith("test_search.py"):
        return skip(SEARCH)
    kind = METHODS.get(case.function)
    if kind is None:
        return skip(OUT_OF_SCOPE)
    if not isinstance(phrase_value, str) or any(isinstance(v, Opaque) for v in case.args.values()):
        return skip(NOT_LITERAL)
    if not _language_ok(case, phrase):
        return skip("not English")
    expectation = _expectation(case, kind, phrase, reference)
    if isinstance(expectation, str):
        return skip(expectation)
    return Row(NAME, key, phrase, reference, expectation, group=case.function)
