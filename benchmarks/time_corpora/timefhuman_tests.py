"""timefhuman's end-to-end test cases: tests/test_e2e.py of the timefhuman 0.1.4 sdist
(fetched by ``python -m benchmarks.time_corpora.fetch``), read with ``ast``, never run.

Reference time: 2018-08-04 14:00 (a Saturday). The sdist does not ship the ``now``
fixture; the cases fix it themselves ("30 minutes" -> 2018-08-04 14:30, "in 1 year" ->
2019-08-04 14:00, "1p" -> the next day's 13:00).

Rows: every case of every parametrised test. Key: ``tests/test_e2e.py::<function>::
<index>::<sha256 of the case's source, 8 hex>``. Scored:

- test_default and test_no_inference, where the expectation is one value: a datetime, a
  date or a time-of-day is an instant on the fields it gives (a time alone: the clock),
  judged with the rules of benchmarks/time_corpora/judging.py; timefhuman puts a date
  without a year in the current year, past or not, so its dates are not read forward
  ("July 3rd" said in August is skipped as past-leaning, "7-17-18" expects nothing);
  a timedelta is reference + delta ("in five minutes"), a negative one a past instant
  ("1 year ago": no commitment); an empty list means no date in the text: expect no
  commitment.
- test_matched_text rows whose expectation is empty (prose with no date): no commitment.

Skipped, counted by reason: partial dates (a month alone: "July 2019"), ranges (tuples),
choices (nested lists), several matches in prose, time-zone expectations (not literals),
part-of-day words (timefhuman's own hour for "morning", "afternoon", ...), and
test_custom_config (its config objects change the reading).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from typing import Any

from benchmarks.time_corpora.fetch import TIMEFHUMAN, read_member
from benchmarks.time_corpora.judging import expect_instant
from benchmarks.time_corpora.language import fixes_clock, is_english
from benchmarks.time_corpora.rows import Expectation, Instant, NoCommitment, Row
from benchmarks.time_corpora.testcode import Case, Opaque, cases

NAME = "timefhuman tests"
PATH = "tests/test_e2e.py"
REFERENCE = datetime(2018, 8, 4, 14, 0)
_PART_OF_DAY = ("morning", "afternoon", "evening", "night", "midday", "midnight")


def _partial(phrase: str, value: date) -> bool:
    """A month (and year) alone: timefhuman gives its first day, no phrase of a day."""
    if value.day != 1 or (isinstance(value, datetime) and (value.hour, value.minute) != (0, 0)):
        return False
    return re.search(r"\b0?1(?:st)?\b|\bfirst\b|\d+[/-]\d+[/-]", phrase) is None


def _expectation(phrase: str, expected: Any) -> Expectation | str:
    if expected == []:
        return NoCommitment("not a date")
    if not isinstance(expected, list) or len(expected) != 1:
        return "several dates in one text"
    value = expected[0]
    if isinstance(value, tuple):
        return "range (interval)"
    if isinstance(value, list):
        return "choice of several dates"
    if isinstance(value, Opaque):
        return "not a literal (time-zone expectation)"
    if isinstance(value, timedelta):
        return expect_instant(phrase, REFERENCE + value, REFERENCE, forward=True)
    if isinstance(value, datetime | date):
        if _partial(phrase, value):
            return "partial date (month or year only)"
        # timefhuman reads a date without a year in the current year, past or not.
        return expect_instant(phrase, value, REFERENCE, forward=False)
    if isinstance(value, time):
        if not fixes_clock(phrase) or any(w in phrase.casefold() for w in _PART_OF_DAY[:4]):
            return "part-of-day word (the parser's own hour)"
        return Instant(None, (value.hour, value.minute))
    return "unknown expectation shape"


def _row(case: Case) -> Row:
    phrase = case.args.get("test_input")
    text = phrase if isinstance(phrase, str) else ""

    def skip(reason: str) -> Row:
        return Row(NAME, case.key, text, REFERENCE, None, skip=reason, group=case.function)

    if case.function == "test_custom_config":
        return skip("custom parser configuration")
    if not isinstance(phrase, str):
        return skip("not a literal")
    expected = case.args.get("expected")
    if case.function == "test_matched_text" and expected != []:
        return skip("several dates in one text")
    if isinstance(expected, list) and any(isinstance(v, Opaque) for v in expected):
        return skip("not a literal (time-zone expectation)")
    if not is_english(phrase) and expected != []:
        return skip("not English")
    if any(w in phrase.casefold().split() for w in _PART_OF_DAY) and expected != []:
        return skip("part-of-day word (the parser's own hour)")
    expectation = _expectation(phrase, expected)
    if isinstance(expectation, str):
        return skip(expectation)
    return Row(NAME, case.key, phrase, REFERENCE, expectation, group=case.function)


def load() -> Iterator[Row]:
    for case in cases(PATH, read_member(TIMEFHUMAN, PATH)):
        yield _row(case)
