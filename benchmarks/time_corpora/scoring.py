"""The three parsers the benchmark runs, each reduced to one ``Answer``, and the verdict of
an answer against a row's expectation.

Parsers (all given the row's reference time, read as UTC):

- ours: ``infer_commitment("Remind me " + phrase, (), said_at=<reference, UTC>,
  zone=UTC)``, the whole inference path. OnceSpec -> its instant; RecurringSpec -> its
  RRULE parts; PredicateSpec -> "condition"; Unparsable or None -> no answer.
- dateparser, out of the box on the bare phrase: ``dateparser.parse(phrase,
  settings={"PREFER_DATES_FROM": "future", "RELATIVE_BASE": <reference>})``.
- parsedatetime on the bare phrase: ``Calendar().parseDT(phrase,
  sourceTime=<reference>)``; status 0 (nothing parsed) -> no answer.

The baselines get the filter our inference applies itself (it answers "time-in-past"):
an instant not after the reference is no answer, since a reminder built on the baseline
could not be scheduled there either. Aware results are converted to UTC.

A parser that raises gives no answer; the benchmark counts and prints such errors.

Verdicts (correct / wrong / none):

- ``Instant``: an instant equal on the fields the row fixes (date; hour:minute) is
  correct, another instant is wrong; a rule or a condition is wrong (a recurrence given
  for a one-off); no answer is none.
- ``NoCommitment``: no answer is correct; any answer is wrong. There is no "none".
- ``Recurrence`` (representable): our rule is correct when FREQ, INTERVAL, BYDAY and
  BYMONTHDAY match (as sets) and BYHOUR/BYMINUTE/BYMONTH match where the row gives them;
  a part the row leaves to its reference date (bare "weekly" -> that weekday) counts as
  that value, since our rules spell it out. Another rule, an instant or a condition is
  wrong; no answer is none. The baselines cannot give rules: their instants are wrong.
- ``Recurrence`` (needs count/until/exceptions): no answer is correct, any answer is
  wrong (it would drop part of the phrase).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from benchmarks.time_corpora.rows import Expectation, Instant, NoCommitment, Recurrence, Row
from memory.commitment_parsing.inference import Inferred, infer_commitment
from memory.commitment_parsing.recurrence_dates import rrule_parts
from schemas.commitment_spec import OnceSpec, RecurringSpec

Verdict = Literal["correct", "wrong", "none"]
UTC_ZONE = ZoneInfo("UTC")
TRIGGER = "Remind me "


@dataclass(frozen=True)
class Answer:
    """What a parser made of a phrase: an instant (naive UTC), a rule, a condition, or
    nothing (all None)."""

    instant: datetime | None = None
    rule: dict[str, str] | None = None
    condition: bool = False
    error: str | None = None  # the exception's type name when the parser raised

    @property
    def empty(self) -> bool:
        return self.instant is None and self.rule is None and not self.condition

    def describe(self) -> str:
        if self.instant is not None:
            return self.instant.strftime("%Y-%m-%d %H:%M")
        if self.rule is not None:
            return ";".join(f"{k}={v}" for k, v in self.rule.items())
        if self.error:
            return f"error {self.error}"
        return "condition" if self.condition else "nothing"


NOTHING = Answer()


def ours(row: Row) -> Answer:
    said_at = row.reference.replace(tzinfo=UTC)
    try:
        outcome = infer_commitment(TRIGGER + row.phrase, (), said_at=said_at, zone=UTC_ZONE)
    except Exception as error:
        return Answer(error=type(error).__name__)
    if not isinstance(outcome, Inferred):
        return NOTHING
    spec = outcome.spec
    if isinstance(spec, OnceSpec):
        return Answer(instant=spec.at.astimezone(UTC).replace(tzinfo=None))
    if isinstance(spec, RecurringSpec):
        return Answer(rule=rrule_parts(spec.rrule))
    return Answer(condition=True)


def _future_only(found: datetime | None, reference: datetime) -> Answer:
    if found is None:
        return NOTHING
    if found.tzinfo is not None:
        found = found.astimezone(UTC).replace(tzinfo=None)
    return Answer(instant=found) if found > reference else NOTHING


def dateparser_answer(row: Row) -> Answer:
    import dateparser

    settings: Any = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": row.reference}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            found = dateparser.parse(row.phrase, settings=settings)
        except (ValueError, OverflowError):
            found = None
    return _future_only(found, row.reference)


def parsedatetime_answer(row: Row) -> Answer:
    import parsedatetime

    try:
        found, status = parsedatetime.Calendar().parseDT(row.phrase, sourceTime=row.reference)
    except (ValueError, OverflowError):
        return NOTHING
    return _future_only(found if status else None, row.reference)


PARSERS = {"ours": ours, "dateparser": dateparser_answer, "parsedatetime": parsedatetime_answer}


def _values(value: Any) -> set[str]:
    return {v.strip().lstrip("+").upper() for v in str(value).split(",") if v.strip()}


def rule_matches(expected: dict[str, Any], got: dict[str, str], reference: datetime) -> bool:
    freq = str(expected["freq"]).upper()
    implied: dict[str, str] = {}
    # What dateutil fills in from the reference date when the row leaves it out.
    if freq == "WEEKLY" and "byday" not in expected:
        implied["byday"] = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")[reference.weekday()]
    if freq in ("MONTHLY", "YEARLY") and "byday" not in expected and "bymonthday" not in expected:
        implied["bymonthday"] = str(reference.day)
    if freq == "YEARLY" and "bymonth" not in expected:
        implied["bymonth"] = str(reference.month)
    checks = [
        got.get("FREQ") == freq,
        int(got.get("INTERVAL", "1")) == int(expected.get("interval", 1)),
    ]
    for key in ("byday", "bymonthday", "bymonth"):
        want = expected.get(key, implied.get(key))
        have = got.get(key.upper())
        checks.append(_values(want) == _values(have) if want is not None else have is None)
    for key in ("byhour", "byminute"):
        if key in expected:
            checks.append(_values(expected[key]) == _values(got.get(key.upper(), "")))
    return all(checks)


def verdict(expected: Expectation, answer: Answer, reference: datetime) -> Verdict:
    if isinstance(expected, NoCommitment):
        return "correct" if answer.empty else "wrong"
    if isinstance(expected, Recurrence) and not expected.representable:
        return "correct" if answer.empty else "wrong"
    if answer.empty:
        return "none"
    if isinstance(expected, Recurrence):
        if answer.rule is None:
            return "wrong"
        return "correct" if rule_matches(expected.rule, answer.rule, reference) else "wrong"
    return "correct" if instant_matches(expected, answer.instant) else "wrong"


def instant_matches(expected: Instant, got: datetime | None) -> bool:
    if got is None:
        return False
    if expected.day is not None and got.date() != expected.day:
        return False
    return expected.clock is None or (got.hour, got.minute) == expected.clock
