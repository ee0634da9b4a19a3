"""Resolution: turn a ``Scan`` into the one instant it names, in an IANA zone.

``parse_time_phrase("in 5 days to send the invoice", now=..., zone=...)`` finds the time
expressions inside free text (the task words around them are ignored) and resolves them
against ``now``, the moment the entry was written. It returns None when the text holds
no time, or when what it holds is contradictory or outside the grammar (two different
dates, "in a few days", "Mar 99th"): a commitment is never scheduled on a guess.

Conventions (tests/memory/test_commitment_parsing.py pins each one; the default times and the
DST rule of ``localize`` are in time_words.py, the readings the rules fix in
time_grammar.py):

- A date that resolves to today with no explicit clock time ("today", "tonight",
  "end of the month" on its last day) means that time or now, whichever is later.
- A clock time with no day ("at 5pm") is today if still ahead, else tomorrow.
- A bare weekday, "on/this/coming/next <weekday>": the first such day strictly after
  today ("next Friday" said on a Wednesday is two days later; "Friday" said on a Friday
  is a week later). "<weekday> next week" / "next week <weekday>": that day of the
  following Monday-to-Sunday week.
- "in N minutes/hours" adds elapsed time to ``now``; "in N days/weeks/months/years"
  moves the calendar date and keeps now's wall-clock time of day (so "in 5 days" across
  a DST change still fires at the same local time), unless a time is also given.
- A clock time followed by "UTC"/"GMT" is read in UTC (the day too); one followed by
  another zone abbreviation ("5pm PST") is refused: abbreviations are ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Final, TypeVar
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.time_grammar import scan
from memory.commitment_parsing.time_pieces import Scan, Weekday
from memory.commitment_parsing.time_words import (
    DEFAULT_TIME,
    PARTS_OF_DAY,
    ParsedTime,
    localize,
    normalize_text,
)

_T = TypeVar("_T")


class _Conflict(Exception):
    """Two pieces of a phrase disagree (two dates, two clock times): no guess."""


def _single(values: Iterable[_T]) -> _T | None:
    distinct = set(values)
    if len(distinct) > 1:
        raise _Conflict
    return next(iter(distinct), None)


def _weekday_date(today: date, weekday: Weekday) -> date:
    if weekday.next_week:
        return today - timedelta(days=today.weekday()) + timedelta(days=7 + weekday.index)
    return today + timedelta(days=(weekday.index - today.weekday() - 1) % 7 + 1)


def _resolve_day(found: Scan, today: date) -> date | None:
    day = _single(found.dates)
    if day is None:
        return _single(_weekday_date(today, w) for w in found.weekdays)
    # A weekday next to a date must agree with it ("Tuesday, May 8th").
    if any(day.weekday() != w.index for w in found.weekdays):
        raise _Conflict
    return day


def _time_of_day(found: Scan) -> tuple[time | None, bool]:
    """(time of day, whether a clock time said it) from clocks, parts of day, end of day."""
    pod = _single(found.parts_of_day)
    clock = _single(c.resolve(pod) for c in found.clocks)
    if found.clocks:
        if clock is None:  # "25:00", "13pm" read as a clock: refuse.
            raise _Conflict
        return clock, True
    soft = _single(found.soft_times)
    if pod is not None and soft is not None:
        raise _Conflict
    return (PARTS_OF_DAY[pod] if pod is not None else soft), False


def resolve(found: Scan, *, now: datetime, zone: ZoneInfo) -> ParsedTime | None:
    """The instant a scan names, or None (nothing, a conflict, or an invalid piece)."""
    if found.invalid or (found.other_zone_said and found.clocks):
        return None
    try:
        if found.utc_said and found.clocks:
            # Read the whole phrase in UTC ("tomorrow at 17:00 UTC" is UTC's tomorrow).
            parsed = _resolve(found, now.astimezone(UTC), ZoneInfo("UTC"))
            if parsed is None:
                return None
            return ParsedTime(parsed.local.astimezone(zone), parsed.has_date, parsed.has_time)
        return _resolve(found, now.astimezone(zone), zone)
    except _Conflict:
        return None


def _resolve(found: Scan, now_local: datetime, zone: ZoneInfo) -> ParsedTime | None:
    today = now_local.date()
    clock, explicit = _time_of_day(found)
    if found.exact:
        if found.dates or found.weekdays or found.relatives or clock is not None:
            raise _Conflict
        instant = _single(found.exact)
        assert instant is not None
        if instant.tzinfo is None:  # "now"
            return ParsedTime(now_local.replace(microsecond=0), True, True)
        return ParsedTime(instant.astimezone(zone), True, True)
    if found.relatives:
        return _resolve_relative(found, now_local, zone, clock, explicit)
    day = _resolve_day(found, today)
    if day is None:
        if clock is None:
            return None
        # A time with no day: today if still ahead, else tomorrow.
        local = localize(datetime.combine(today, clock), zone)
        if local <= now_local:
            local = localize(datetime.combine(today + timedelta(days=1), clock), zone)
        return ParsedTime(local, has_date=False, has_time=explicit)
    local = localize(datetime.combine(day, clock or DEFAULT_TIME), zone)
    if day == today and not explicit and local < now_local:
        # "today", "tonight", "end of the month" on its last day: due now.
        local = now_local.replace(microsecond=0)
    return ParsedTime(local, has_date=True, has_time=explicit)


def _resolve_relative(
    found: Scan, now_local: datetime, zone: ZoneInfo, clock: time | None, explicit: bool
) -> ParsedTime:
    if found.dates or found.weekdays:
        raise _Conflict
    relative = _single(found.relatives)
    assert relative is not None
    if relative.unit in ("minutes", "hours"):
        if clock is not None:
            raise _Conflict
        # Elapsed time: computed on the instant, so a DST change does not stretch it.
        delta = timedelta(**{relative.unit: relative.amount})
        local = (now_local.astimezone(UTC) + delta).astimezone(zone).replace(microsecond=0)
        return ParsedTime(local, has_date=True, has_time=True)
    # Calendar time: move the local date, keep the wall-clock time (or the one given).
    naive = now_local.replace(tzinfo=None, microsecond=0)
    amount, unit = relative.amount, relative.unit
    moved = naive + relativedelta(
        years=amount if unit == "years" else 0,
        months=amount if unit == "months" else 0,
        weeks=amount if unit == "weeks" else 0,
        days=amount if unit == "days" else 0,
    )
    if clock is not None:
        moved = datetime.combine(moved.date(), clock)
    return ParsedTime(localize(moved, zone), has_date=True, has_time=explicit)


# Words that may come before a time without saying anything else: "after 3 days",
# "when it's 5pm", "once on Friday at 9".
_FILLER: Final = frozenset(
    {"on", "at", "the", "by", "in", "this", "coming", "next", "of", "around", "about"}
    | {"it", "is", "it's", "its", "latest", "earliest"}
    | {"after", "when", "whenever", "once", "as", "soon"}
)


def starts_with_time(phrase: str, *, now: datetime, zone: ZoneInfo) -> bool:
    """Does ``phrase`` open with a time ("3 days to check", "it's 5pm", "Friday")?

    Tells "after 3 days" (a time) from "after the launch" (an event).
    """
    text = normalize_text(phrase)
    found = scan(text, now_local=now.astimezone(zone).replace(tzinfo=None))
    if resolve(found, now=now, zone=zone) is None:
        return False
    for word in re.finditer(r"[\w']+", text):
        if word.group(0) not in _FILLER:
            # Claimed by a time piece: blank in the leftover text.
            return not found.leftover[word.start() : word.end()].strip()
    return False


def parse_time_phrase(phrase: str, *, now: datetime, zone: ZoneInfo) -> ParsedTime | None:
    """The one time ``phrase`` names, resolved against ``now`` (aware) in ``zone``.

    None when the phrase names no time, names two that disagree, or holds a time-like
    expression outside the grammar.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    text = normalize_text(phrase)
    if not text:
        return None
    now_local = now.astimezone(zone).replace(tzinfo=None)
    return resolve(scan(text, now_local=now_local), now=now, zone=zone)
