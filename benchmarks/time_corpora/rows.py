"""The row every corpus loader yields, and the three kinds of expectation a row can hold.

A row is one phrase of a public corpus with the reference time it was written against
and what the corpus says it means, reduced to the fields a reminder can be judged on.
Rows out of scope are still yielded, with ``skip`` naming why, so that skipped phrases are
counted by reason and the committed split covers every row a loader can produce.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any


@dataclass(frozen=True)
class Instant:
    """A one-off instant, on the fields the phrase fixes: the date and/or hour:minute
    (UTC wall clock at the reference). None means the phrase leaves that field open."""

    day: date | None
    clock: tuple[int, int] | None

    def describe(self) -> str:
        day = self.day.isoformat() if self.day else "any day"
        clock = f"{self.clock[0]:02d}:{self.clock[1]:02d}" if self.clock else "any time"
        return f"{day} {clock}"


@dataclass(frozen=True)
class NoCommitment:
    """The right answer for a reminder is no commitment: the phrase names no date, or
    only an instant not after the reference (a reminder can never be due then)."""

    why: str

    def describe(self) -> str:
        return f"no commitment ({self.why})"


@dataclass(frozen=True)
class Recurrence:
    """A recurrence as an RRULE-ish dict (lower-case keys, as recurrent writes them).
    ``representable`` is False when the rule needs parts our RecurringSpec cannot hold
    (count, until, exceptions, ...): then the right answer is no rule."""

    rule: dict[str, Any]
    representable: bool

    def describe(self) -> str:
        return f"rule {self.rule}"


Expectation = Instant | NoCommitment | Recurrence


@dataclass(frozen=True)
class Row:
    """One corpus phrase. ``key`` is unique within its corpus and stable across runs."""

    corpus: str
    key: str
    phrase: str
    reference: datetime  # naive, read as UTC
    expected: Expectation | None  # None when skipped
    skip: str | None = None  # why the row is out of scope, counted by the benchmark
    group: str = ""  # the corpus' own grouping (test method, target kind), for notes

    @property
    def scored(self) -> bool:
        return self.skip is None and self.expected is not None


def skipped(corpus: str, key: str, phrase: str, reference: datetime, reason: str) -> Row:
    return Row(corpus, key, phrase, reference, None, skip=reason)


def unique_keys(keys: list[str]) -> list[str]:
    """``keys`` with a ``#n`` suffix on the n-th repeat (n >= 2), so duplicates of one
    phrase in a corpus stay distinct and keep their key across runs."""
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        out.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return out
