"""One entry in, one commitment (or a reason) out: the single entry point of parsing.

``infer_commitment(text, tags, said_at=..., zone=...)`` returns

- None when the entry is not a commitment (no trigger phrase, no commitment tag);
- ``Unparsable(reason)`` when it reads like one but we cannot say when it is due
  (``reason`` is a short code, never the entry's text);
- ``Inferred(spec, condition, normalized_condition)`` otherwise.

Order, on the condition part (the text after the trigger phrase; when that part says
nothing about time or conditions, the text before the trigger: "Next Monday: follow up
with Dana"):

1. a "when/once/as soon as/after <clause>" -> PredicateSpec (conditions.py); a time or
   recurrence next to the clause ("on Friday once the contract is signed") is
   unparsable, since one spec cannot hold both;
2. a recurrence word ("every", "each", "daily", "weekdays", "on Mondays", ...) ->
   RecurringSpec (recurrence.py), or unparsable when the grammar cannot read it: a
   recurrence is never read as one date;
3. otherwise a one-off time -> OnceSpec (time_resolution.py); a time not after said_at is
   unparsable.

Relative phrasings resolve from ``said_at``, the entry's creation time, never from when
the parse runs. ``normalized_condition`` is canonical (equal meaning, equal string) and
is hashed with (memoryRef, memoryId) into the commitment id:

- ``once:2026-11-28T08:00:00Z`` (the UTC instant, to the second);
- ``rrule:FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0@Europe/Berlin``, plus
  ``#<dtstart>`` when the rule's phase depends on it (INTERVAL > 1, hourly, minutely);
- ``predicate:memory.tag_exists:tag=contract-signed`` (arguments sorted by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal
from zoneinfo import ZoneInfo

from memory.commitment_parsing.conditions import find_clause, predicate_for_clause
from memory.commitment_parsing.phrasing import split_intention
from memory.commitment_parsing.recurrence_dates import rrule_parts
from memory.commitment_parsing.recurrence_phrases import has_recurrence_signal, parse_recurrence
from memory.commitment_parsing.time_grammar import scan
from memory.commitment_parsing.time_resolution import parse_time_phrase, resolve, starts_with_time
from memory.commitment_parsing.time_words import normalize_text
from schemas.commitment_spec import OnceSpec, PredicateSpec, RecurringSpec


@dataclass(frozen=True)
class Inferred:
    spec: OnceSpec | RecurringSpec | PredicateSpec
    condition: Literal["time", "predicate"]
    normalized_condition: str


@dataclass(frozen=True)
class Unparsable:
    reason: str  # a short code such as "no-time-or-condition"; never the entry's text


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


def _inferred(spec: OnceSpec | RecurringSpec | PredicateSpec) -> Inferred:
    condition: Literal["time", "predicate"] = (
        "predicate" if isinstance(spec, PredicateSpec) else "time"
    )
    return Inferred(spec, condition, normalized_condition(spec))


def _mentions_time(text: str, said_at: datetime, zone: ZoneInfo) -> bool:
    normalized = normalize_text(text)
    if has_recurrence_signal(normalized):
        return True
    local = said_at.astimezone(zone).replace(tzinfo=None)
    return scan(normalized, now_local=local).found_anything()


def _infer_part(text: str, said_at: datetime, zone: ZoneInfo) -> Inferred | Unparsable | None:
    """What one part of an entry says; None when it says nothing about when."""
    normalized = normalize_text(text)
    if not normalized:
        return None

    def is_time(words: str) -> bool:
        return starts_with_time(words, now=said_at, zone=zone)

    clause = find_clause(text, is_time=is_time)
    if clause is not None:
        predicate = predicate_for_clause(clause.text)
        if predicate is None:
            return Unparsable("empty-condition")
        if _mentions_time(text[: clause.start] + " " + text[clause.end :], said_at, zone):
            return Unparsable("time-and-condition")
        return _inferred(predicate)
    if has_recurrence_signal(normalized):
        recurring = parse_recurrence(text, now=said_at, zone=zone)
        return Unparsable("unsupported-recurrence") if recurring is None else _inferred(recurring)
    parsed = parse_time_phrase(text, now=said_at, zone=zone)
    if parsed is None:
        local = said_at.astimezone(zone).replace(tzinfo=None)
        found = scan(normalized, now_local=local)
        if found.found_anything() and resolve(found, now=said_at, zone=zone) is None:
            return Unparsable("unresolvable-time")
        return None
    if parsed.utc <= said_at:
        return Unparsable("time-in-past")
    return _inferred(OnceSpec(at=parsed.utc, time_zone=_zone_name(zone)))


def _zone_name(zone: ZoneInfo) -> str:
    if not zone.key:
        raise ValueError("zone must be an IANA time zone with a name")
    return zone.key


def infer_commitment(
    text: str, tags: Sequence[str], *, said_at: datetime, zone: ZoneInfo
) -> Inferred | Unparsable | None:
    """The commitment an entry states (see the module docstring)."""
    if said_at.tzinfo is None:
        raise ValueError("said_at must be timezone-aware")
    _zone_name(zone)
    parts = split_intention(text, tags)
    if parts is None:
        return None
    lead, condition = parts
    outcome = _infer_part(condition, said_at, zone)
    if outcome is None and lead:
        outcome = _infer_part(lead, said_at, zone)
    return outcome if outcome is not None else Unparsable("no-time-or-condition")
