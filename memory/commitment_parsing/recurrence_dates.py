"""When a recurring commitment fires: RecurringSpec + instant -> the next instant.

``next_occurrence(spec, after)`` is the first occurrence strictly after ``after``;
``first_occurrence(spec, said_at)`` the first at or after it (the first firing of a
spec ``recurrence_phrases`` just parsed); ``occurrences`` the next few;
``occurrences_through`` those up to an instant. The firing path
(memory/commitments/firing.py) calls ``occurrences_through`` at run time for the instants
a late firing owes and ``next_occurrence`` to move a recurring commitment to its next
instant.

Conventions:

- Occurrences are generated from the RRULE body and ``dtstart`` on naive local
  wall-clock times in ``spec.time_zone`` and then localized with
  ``time_words.localize`` (a time in a spring-forward gap moves forward by the gap, an
  ambiguous one takes its first occurrence): 17:00 stays 17:00 local across DST.
  Hourly and minutely rules follow the wall clock too, so they skip the repeated hour
  of a fall-back night.
- Results are aware UTC datetimes; None when the rule has no more occurrences.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta
from dateutil.rrule import rrule, rrulestr

from memory.commitment_parsing.time_words import localize
from schemas.commitment_spec import RecurringSpec

# How far a localized occurrence can move past its wall-clock time (the largest DST
# gaps are 1-2 hours); the search starts this much before ``after`` to catch one.
_MAX_GAP: Final = timedelta(hours=3)
_MAX_STEPS: Final = 20_000


def rrule_parts(body: str) -> dict[str, str]:
    """{"FREQ": "WEEKLY", "BYDAY": "TH", ...} of an RRULE body."""
    parts: dict[str, str] = {}
    for part in body.split(";"):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ValueError("malformed RRULE body")
        parts[key.strip().upper()] = value.strip()
    return parts


@lru_cache(maxsize=4096)
def _compiled(body: str, dtstart: datetime) -> rrule:
    if "\n" in body or "DTSTART" in body.upper() or body.upper().startswith("RRULE:"):
        raise ValueError("RRULE body expected, without DTSTART")
    parsed = rrulestr(body, dtstart=dtstart)
    if not isinstance(parsed, rrule):
        raise ValueError("a single RRULE expected")
    return parsed


def _rebased_start(body: str, dtstart: datetime, after: datetime) -> datetime:
    """A later dtstart with the same phase, at most two periods before ``after``, so
    finding the next occurrence does not walk every period since the original start."""
    parts = rrule_parts(body)
    if "COUNT" in parts or after <= dtstart:
        return dtstart  # a COUNT is counted from the original start
    interval = int(parts.get("INTERVAL", "1"))
    freq = parts.get("FREQ", "")
    steps = {"WEEKLY": timedelta(weeks=1), "DAILY": timedelta(days=1)}
    steps |= {"HOURLY": timedelta(hours=1), "MINUTELY": timedelta(minutes=1)}
    if freq in steps:
        period = steps[freq] * interval
        periods = (after - dtstart) // period - 1
        return dtstart + period * periods if periods > 0 else dtstart
    months = {"MONTHLY": 1, "YEARLY": 12}.get(freq)
    if months is None:
        return dtstart
    elapsed = (after.year - dtstart.year) * 12 + after.month - dtstart.month
    periods = elapsed // (months * interval) - 1
    if periods <= 0:
        return dtstart
    moved = dtstart + relativedelta(months=periods * months * interval)
    # Clipped to a shorter month (Jan 31 -> Feb 28) the day would change the rule.
    return moved if moved.day == dtstart.day else dtstart


def next_occurrence(spec: RecurringSpec, after: datetime) -> datetime | None:
    """The first occurrence strictly after ``after`` (aware), as an aware UTC datetime;
    None when the rule has no more."""
    if after.tzinfo is None:
        raise ValueError("after must be timezone-aware")
    zone = ZoneInfo(spec.time_zone)
    dtstart = spec.dtstart.replace(tzinfo=None)
    after_local = after.astimezone(zone).replace(tzinfo=None)
    cursor = after_local - _MAX_GAP
    rule = _compiled(spec.rrule, _rebased_start(spec.rrule, dtstart, cursor))
    best: datetime | None = None
    best_wall: datetime | None = None
    for steps, wall in enumerate(rule.xafter(cursor, inc=True)):
        # Localizing can move a time forward (a gap), so a later wall time may still be
        # the earlier instant; past _MAX_GAP beyond the best one, none can be.
        if (best_wall is not None and wall > best_wall + _MAX_GAP) or steps > _MAX_STEPS:
            break
        instant = localize(wall, zone).astimezone(UTC)
        if instant > after and (best is None or instant < best):
            best, best_wall = instant, wall
    return best


def first_occurrence(spec: RecurringSpec, not_before: datetime) -> datetime | None:
    """The first occurrence at or after ``not_before`` (aware), in UTC."""
    return next_occurrence(spec, not_before - timedelta(microseconds=1))


def occurrences(spec: RecurringSpec, after: datetime, count: int) -> list[datetime]:
    """The next ``count`` occurrences strictly after ``after``, in UTC."""
    found: list[datetime] = []
    cursor = after
    while len(found) < count:
        upcoming = next_occurrence(spec, cursor)
        if upcoming is None:
            break
        found.append(upcoming)
        cursor = upcoming
    return found


def occurrences_through(
    spec: RecurringSpec, after: datetime, until: datetime, limit: int
) -> list[datetime]:
    """The occurrences strictly after ``after`` and at or before ``until``, in order, in
    UTC; at most ``limit`` of them (the first ``limit``)."""
    found: list[datetime] = []
    cursor = after
    while len(found) < limit:
        upcoming = next_occurrence(spec, cursor)
        if upcoming is None or upcoming > until:
            break
        found.append(upcoming)
        cursor = upcoming
    return found
