"""recurrent's test expressions (``recurrent.test.expressions``, in the recurrent wheel;
the module is imported for its list and NOW = 2010-01-01 00:00, its tests are not run):
rows of (phrase, expectation[, comment]).

Key: the phrase (``#n`` on the n-th repeat).

- A rule dict -> ``rows.Recurrence``: representable when every key is one our
  RecurringSpec holds (freq, interval, byday, bymonthday, bymonth, byhour, byminute);
  otherwise (count, until, dtstart, exdate, exrule, bysetpos, byyearday, byweekno) the
  right answer is no rule, since any rule would drop part of the phrase.
- A datetime or date -> a one-off instant on the fields the phrase fixes, with the past
  rules of benchmarks/time_corpora/judging.py (recurrent reads forward).
- None (recurrent: "not a date") -> no commitment.
- ExpectedFailure (a case recurrent itself gets wrong) -> skipped.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from benchmarks.time_corpora.judging import expect_instant
from benchmarks.time_corpora.rows import NoCommitment, Recurrence, Row, unique_keys

NAME = "recurrent"
REPRESENTABLE = frozenset(
    {"freq", "interval", "byday", "bymonthday", "bymonth", "byhour", "byminute"}
)


def reference() -> datetime:
    now: datetime = importlib.import_module("recurrent.test").NOW
    return now


def load() -> Iterator[Row]:
    module = importlib.import_module("recurrent.test")
    now: datetime = module.NOW
    rows: list[tuple[str, Any]] = [(row[0], row[1]) for row in module.expressions]
    keys = unique_keys([phrase for phrase, _ in rows])
    for key, (phrase, expected) in zip(keys, rows, strict=True):
        if isinstance(expected, dict):
            representable = not (set(expected) - REPRESENTABLE)
            group = "rule" if representable else "rule needing count/until/except"
            yield Row(NAME, key, phrase, now, Recurrence(expected, representable), group=group)
        elif expected is None:
            yield Row(NAME, key, phrase, now, NoCommitment("not a date"), group="not a date")
        elif isinstance(expected, datetime | date):
            outcome = expect_instant(phrase, expected, now, forward=True)
            if isinstance(outcome, str):
                yield Row(NAME, key, phrase, now, None, skip=outcome, group="one-off")
            else:
                yield Row(NAME, key, phrase, now, outcome, group="one-off")
        else:
            yield Row(NAME, key, phrase, now, None, skip="known failure in recurrent", group="")
