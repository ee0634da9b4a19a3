"""One entry in, one commitment (or a reason) out: the single entry point of parsing.

``infer_commitment(text, tags, said_at=..., zone=..., conventions=...)`` returns

- None when the entry is not a commitment (no trigger phrase, no commitment tag);
- ``Unparsable(reason)`` when it reads like one but we cannot say exactly when it is
  due; ``reason`` is a stable code listed in docs/time-grammar.md (``REASONS``), never
  the entry's text;
- ``Inferred(spec, condition, normalized_condition, span, conventions)`` otherwise:
  ``span`` is the (start, end) character offsets in ``text`` of the phrase the grammar
  read (the time phrase, recurrence phrase or condition clause, not the task words),
  ``conventions`` the codes of the conventions the reading applied
  ("default-time-09:00", "date-order-DMY", ...).

Order, on the condition part (the text after the trigger phrase; when that part says
nothing about time or conditions, the text before the trigger: "Next Monday: follow up
with Dana"):

1. a "when/once/as soon as/after <clause>" -> PredicateSpec (conditions.py); a time or
   recurrence next to the clause ("on Friday once the contract is signed") is
   unparsable, since one spec cannot hold both;
2. a recurrence word ("every", "each", "daily", "weekdays", "on Mondays", ...) ->
   RecurringSpec (recurrence_phrases.py), or unparsable when the grammar cannot read
   all of it: a recurrence is never read as one date;
3. otherwise a one-off time -> OnceSpec (time_resolution.py), read only when every word
   of its phrase is read (coverage.py); a time not after said_at is unparsable.

Relative phrasings resolve from ``said_at``, the entry's creation time, never from when
the parse runs; ambiguous ones by the tenant's ``ParsingConventions`` (conventions.py).
``normalized_condition`` is canonical (equal meaning, equal string) and is hashed with
(memoryRef, memoryId) into the commitment id:

- ``once:2026-11-28T08:00:00Z`` (the UTC instant, to the second);
- ``rrule:FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0@Europe/Berlin``, plus
  ``#<dtstart>`` when the rule's phase depends on it (INTERVAL > 1, hourly, minutely);
- ``predicate:memory.tag_exists:tag=contract-signed`` (arguments sorted by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal
from zoneinfo import ZoneInfo

from memory.commitment_parsing.conditions import find_clause, is_explicit, predicate_for_clause
from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.phrasing import locate_intention
from memory.commitment_parsing.recurrence_dates import rrule_parts
from memory.commitment_parsing.recurrence_phrases import (
    RecurrenceReading,
    has_recurrence_signal,
    read_recurrence,
)
from memory.commitment_parsing.text_map import normalize_mapped
from memory.commitment_parsing.time_grammar import scan
from memory.commitment_parsing.time_resolution import TimeReading, read_time, starts_with_time
from memory.commitment_parsing.time_words import normalize_text
from schemas.commitment_spec import OnceSpec, PredicateSpec, RecurringSpec

# Every reason ``Unparsable`` can carry: stable codes, documented in docs/time-grammar.md.
REASONS: Final = frozenset(
    {
        "no-time-or-condition",
        "empty-condition",
        "time-and-condition",
        "unsupported-recurrence",
        "unresolvable-time",
        "time-in-past",
        "leftover-words",
        "invalid-date",
        "ambiguous-date-order",
        "ambiguous-two-digit-year",
        "ambiguous-next-weekday",
        "unknown-zone-abbreviation",
    }
)


@dataclass(frozen=True)
class Inferred:
    spec: OnceSpec | RecurringSpec | PredicateSpec
    condition: Literal["time", "predicate"]
    normalized_condition: str
    span: tuple[int, int]  # offsets into the text given to infer_commitment
    conventions: tuple[str, ...]  # codes of the conventions the reading applied


@dataclass(frozen=True)
class Unparsable:
    reason: str  # a code from REASONS; never the entry's text


def normalized_condition(spec: OnceSpec | RecurringSpec | PredicateSpec) -> str:
    """The canonical string of a spec (see the module docstring)."""
    if isinstance(spec, OnceSpec):
        return "once:" + spec.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(spec, RecurringSpec):
        parts = rrule_parts(spec.rrule)
        phased = parts.get("INTERVAL", "1") != "1" or parts["FREQ"] in ("HOURLY", "MINUTELY")
        anchor = "#" + spec.dtstart.strftime("%Y-%m-%dT%H:%M") if phased else ""
        return f"rrule:{spec.rrule}@{spec.time_zone}{anchor}"
    args = ",".join(f"{key}={spec.args[key]}" for key in sorted(spec.args))
    return f"predicate:{spec.predicate}:{args}"


def _inferred(
    spec: OnceSpec | RecurringSpec | PredicateSpec,
    span: tuple[int, int],
    conventions: tuple[str, ...],
) -> Inferred:
    condition: Literal["time", "predicate"] = (
        "predicate" if isinstance(spec, PredicateSpec) else "time"
    )
    return Inferred(spec, condition, normalized_condition(spec), span, conventions)


@dataclass(frozen=True)
class _Part:
    """A part of an entry (lead or condition) and where it sits in the entry."""

    text: str
    start: int
    total: int


def _mentions_time(
    text: str, said_at: datetime, zone: ZoneInfo, conventions: ParsingConventions
) -> bool:
    normalized = normalize_text(text)
    if has_recurrence_signal(normalized):
        return True
    local = said_at.astimezone(zone).replace(tzinfo=None)
    return scan(normalized, now_local=local, conventions=conventions).found_anything()


def _infer_part(
    part: _Part, said_at: datetime, zone: ZoneInfo, conventions: ParsingConventions
) -> Inferred | Unparsable | None:
    """What one part of an entry says; None when it says nothing about when."""
    text = part.text
    mapped = normalize_mapped(text).shifted(part.start, part.total)
    if not mapped.text:
        return None

    def is_time(words: str) -> bool:
        return starts_with_time(words, now=said_at, zone=zone, conventions=conventions)

    clause = find_clause(text, is_time=is_time)
    if clause is not None:
        predicate = predicate_for_clause(clause.text)
        if predicate is None:
            return Unparsable("empty-condition")
        rest = text[: clause.start] + " " + text[clause.end :]
        if _mentions_time(rest, said_at, zone, conventions):
            return Unparsable("time-and-condition")
        span = (part.start + clause.start, part.start + clause.end)
        codes = () if is_explicit(clause.text) else ("condition-tag-from-words",)
        return _inferred(predicate, span, codes)
    if has_recurrence_signal(mapped.text):
        recurring = read_recurrence(mapped, now=said_at, zone=zone, conventions=conventions)
        if not isinstance(recurring, RecurrenceReading):
            return Unparsable(recurring.reason)
        return _inferred(recurring.spec, recurring.span, recurring.conventions)
    reading = read_time(mapped, now=said_at, zone=zone, conventions=conventions)
    if reading is None:
        return None
    if not isinstance(reading, TimeReading):
        return Unparsable(reading.reason)
    # "today" past its default time resolves to the moment it was said (due now); every
    # other instant must lie after it.
    due_now = "today-past-time-is-now" in reading.conventions
    if reading.parsed.utc <= said_at and not due_now:
        return Unparsable("time-in-past")
    spec = OnceSpec(at=reading.parsed.utc, time_zone=_zone_name(zone))
    return _inferred(spec, reading.span, reading.conventions)


def _zone_name(zone: ZoneInfo) -> str:
    if not zone.key:
        raise ValueError("zone must be an IANA time zone with a name")
    return zone.key


def infer_commitment(
    text: str,
    tags: Sequence[str],
    *,
    said_at: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> Inferred | Unparsable | None:
    """The commitment an entry states (see the module docstring)."""
    if said_at.tzinfo is None:
        raise ValueError("said_at must be timezone-aware")
    _zone_name(zone)
    located = locate_intention(text, tags)
    if located is None:
        return None
    (lead_start, lead_end), (start, end) = located
    condition = _Part(text[start:end], start, len(text))
    outcome = _infer_part(condition, said_at, zone, conventions)
    if outcome is None and lead_end > lead_start:
        lead = _Part(text[lead_start:lead_end], lead_start, len(text))
        outcome = _infer_part(lead, said_at, zone, conventions)
    return outcome if outcome is not None else Unparsable("no-time-or-condition")
