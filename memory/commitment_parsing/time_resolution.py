"""Resolution: turn a ``Scan`` into the one instant it names, in an IANA zone.

``read_time(mapped, now=..., zone=..., conventions=...)`` finds the time phrases of a
part of an entry (``coverage.regions``: every word of a phrase must be read, task words
may sit around it) and resolves them against ``now``, the moment the entry was written.
It returns a ``TimeReading`` (the instant, the span read, the convention codes applied),
a ``Refusal`` with a stable reason code (a leftover word, two different dates, "in a few
days", an ambiguous date the tenant's conventions do not settle), or None when the text
holds no time. ``parse_time_phrase`` is the same for a bare phrase, instant or None.

Conventions (docs/time-grammar.md lists each code; tests pin them; the default times
and the DST rule of ``localize`` are in time_words.py, the readings the rules fix in
time_grammar.py and the modules it runs):

- A date that resolves to today with no explicit clock time ("today", "tonight",
  "end of the month" on its last day) means that time or now, whichever is later.
- A clock time with no day ("at 5pm") is today if still ahead, else tomorrow.
- A bare weekday, "on/this/coming <weekday>": the first such day strictly after today
  ("Friday" said on a Friday is a week later). "next <weekday>": the same by default
  (``ParsingConventions.next_weekday``). "<weekday> next week" / "next week <weekday>":
  that day of the following Monday-to-Sunday week; "<weekday> after next": a week after
  "next <weekday>".
- "in N minutes/hours" adds elapsed time to ``now``; "in N days/weeks/months/years"
  moves the calendar date and keeps now's wall-clock time of day (so "in 5 days" across
  a DST change still fires at the same local time), unless a time is also given.
- A clock time followed by an allowed zone abbreviation ("17:00 UTC") is read in that
  zone (the day too); another known abbreviation ("5pm PST") is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final, TypeVar
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.coverage import regions
from memory.commitment_parsing.text_map import MappedText, normalize_mapped
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


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TimeReading:
    """A time phrase read whole: the instant, the span read (offsets into the text given)
    and the codes of the conventions the reading applied."""

    parsed: ParsedTime
    span: tuple[int, int]
    conventions: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    reason: str  # a stable code (docs/time-grammar.md), never the entry's text


def _single(values: Iterable[_T]) -> _T | None:
    distinct = set(values)
    if len(distinct) > 1:
        raise _Conflict
    return next(iter(distinct), None)


class _Resolver:
    """One resolution: the scan, the settings, and the codes of conventions applied."""

    def __init__(self, found: Scan, settings: ParsingConventions) -> None:
        self.found = found
        self.settings = settings
        self.codes: list[str] = list(found.conventions)

    def weekday_date(self, today: date, weekday: Weekday) -> date:
        monday_next = today - timedelta(days=today.weekday()) + timedelta(days=7)
        if weekday.next_week:
            return monday_next + timedelta(days=weekday.index)
        coming = today + timedelta(days=(weekday.index - today.weekday() - 1) % 7 + 1)
        day = coming
        if weekday.said_next and coming != monday_next + timedelta(days=weekday.index):
            rule = self.settings.next_weekday
            if rule == "refuse-when-ambiguous":
                raise _Refused("ambiguous-next-weekday")
            if rule == "following-week":
                day = monday_next + timedelta(days=weekday.index)
            self.codes.append(f"next-weekday-is-{'coming-one' if rule == 'coming' else rule}")
        elif not weekday.said_next:
            self.codes.append("weekday-is-coming-one")
        return day + timedelta(weeks=weekday.weeks_later)

    def day(self, today: date) -> date | None:
        found = self.found
        day = _single(found.dates)
        if day is None:
            return _single(self.weekday_date(today, w) for w in found.weekdays)
        # A weekday next to a date must agree with it ("Tuesday, May 8th").
        if any(day.weekday() != w.index for w in found.weekdays):
            raise _Conflict
        return day

    def time_of_day(self) -> tuple[time | None, bool]:
        """(time of day, whether a clock time said it) from clocks, parts of day, end of day."""
        found = self.found
        pod = _single(found.parts_of_day)
        clock = _single(c.resolve(pod) for c in found.clocks)
        if found.clocks:
            if clock is None:  # "25:00", "13pm", "12 in the morning": refuse.
                raise _Conflict
            self.codes.extend(c for c in {c.convention(pod) for c in found.clocks} if c)
            return clock, True
        soft = _single(found.soft_times)
        if pod is not None and soft is not None:
            raise _Conflict
        if pod is not None:
            self.codes.append(f"part-of-day-{pod}-{PARTS_OF_DAY[pod]:%H:%M}")
            return PARTS_OF_DAY[pod], False
        if soft is not None:
            self.codes.append(f"end-of-day-{soft:%H:%M}")
        return soft, False


def resolve(
    found: Scan,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> ParsedTime | None:
    """The instant a scan names, or None (nothing, a conflict, or an invalid piece)."""
    outcome = _resolve_scan(found, now, zone, conventions)
    return outcome[0] if isinstance(outcome, tuple) else None


def _resolve_scan(
    found: Scan, now: datetime, zone: ZoneInfo, settings: ParsingConventions
) -> tuple[ParsedTime, tuple[str, ...]] | Refusal | None:
    if found.invalid:
        return Refusal(found.refusal or "unresolvable-time")
    resolver = _Resolver(found, settings)
    try:
        if found.zone is not None and found.clocks:
            # Read the whole phrase in that zone ("tomorrow at 17:00 UTC" is UTC's tomorrow).
            said_zone = found.zone
            parsed = _resolve(resolver, now.astimezone(said_zone), said_zone)
            resolver.codes.append(f"zone-{found.zone_code}")
            if parsed is None:
                return None
            parsed = ParsedTime(parsed.local.astimezone(zone), parsed.has_date, parsed.has_time)
        else:
            parsed = _resolve(resolver, now.astimezone(zone), zone)
    except _Conflict:
        return Refusal("unresolvable-time")
    except _Refused as refused:
        return Refusal(refused.reason)
    if parsed is None:
        return None
    return parsed, tuple(dict.fromkeys(resolver.codes))


def _resolve(resolver: _Resolver, now_local: datetime, zone: ZoneInfo) -> ParsedTime | None:
    found = resolver.found
    today = now_local.date()
    clock, explicit = resolver.time_of_day()
    if found.exact:
        if found.dates or found.weekdays or found.relatives or clock is not None:
            raise _Conflict
        instant = _single(found.exact)
        assert instant is not None
        if instant.tzinfo is None:  # "now"
            return ParsedTime(now_local.replace(microsecond=0), True, True)
        return ParsedTime(instant.astimezone(zone), True, True)
    if found.relatives:
        return _resolve_relative(resolver, now_local, zone, clock, explicit)
    day = resolver.day(today)
    if day is None:
        if clock is None:
            return None
        # A time with no day: today if still ahead, else tomorrow.
        resolver.codes.append("clock-today-or-tomorrow")
        local = localize(datetime.combine(today, clock), zone)
        if local <= now_local:
            local = localize(datetime.combine(today + timedelta(days=1), clock), zone)
        return ParsedTime(local, has_date=False, has_time=explicit)
    if clock is None:
        resolver.codes.append(f"default-time-{DEFAULT_TIME:%H:%M}")
    local = localize(datetime.combine(day, clock or DEFAULT_TIME), zone)
    if day == today and not explicit and local < now_local:
        # "today", "tonight", "end of the month" on its last day: due now.
        resolver.codes.append("today-past-time-is-now")
        local = now_local.replace(microsecond=0)
    return ParsedTime(local, has_date=True, has_time=explicit)


def _resolve_relative(
    resolver: _Resolver, now_local: datetime, zone: ZoneInfo, clock: time | None, explicit: bool
) -> ParsedTime:
    found = resolver.found
    if found.dates or found.weekdays:
        raise _Conflict
    relative = _single(found.relatives)
    assert relative is not None
    parts = relative.parts()
    elapsed = timedelta(
        seconds=sum(n for n, u in parts if u == "seconds"),
        minutes=sum(n for n, u in parts if u == "minutes"),
        hours=sum(n for n, u in parts if u == "hours"),
    )
    calendar = {u: sum(n for n, v in parts if v == u) for u in {u for _, u in parts}}
    if elapsed and clock is not None:
        raise _Conflict
    # Calendar time moves the local date and keeps the wall-clock time (or the one
    # given); elapsed time is then added on the instant, so a DST change does not
    # stretch it.
    naive = now_local.replace(tzinfo=None, microsecond=0)
    moved = naive + relativedelta(
        years=calendar.get("years", 0)
        + 10 * calendar.get("decades", 0)
        + 100 * calendar.get("centuries", 0),
        months=calendar.get("months", 0),
        weeks=calendar.get("weeks", 0) + 2 * calendar.get("fortnights", 0),
        days=calendar.get("days", 0),
    )
    calendar_moved = moved != naive
    if clock is not None:
        moved = datetime.combine(moved.date(), clock)
    elif calendar_moved:
        resolver.codes.append("relative-days-keep-time-of-day")
    if elapsed:
        start = localize(moved, zone) if calendar_moved else now_local
        local = (start.astimezone(UTC) + elapsed).astimezone(zone).replace(microsecond=0)
        return ParsedTime(local, has_date=True, has_time=True)
    return ParsedTime(localize(moved, zone), has_date=True, has_time=explicit)


# Words that may come before a time without saying anything else: "after 3 days",
# "when it's 5pm", "once on Friday at 9".
_FILLER: Final = frozenset(
    {"on", "at", "the", "by", "in", "this", "coming", "next", "of", "around", "about"}
    | {"it", "is", "it's", "its", "latest", "earliest"}
    | {"after", "when", "whenever", "once", "as", "soon"}
)


def starts_with_time(
    phrase: str,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> bool:
    """Does ``phrase`` open with a time ("3 days to check", "it's 5pm", "Friday")?

    Tells "after 3 days" (a time) from "after the launch" (an event).
    """
    text = normalize_text(phrase)
    local = now.astimezone(zone).replace(tzinfo=None)
    found = scan(text, now_local=local, conventions=conventions)
    if not found.found_anything():
        return False
    for word in re.finditer(r"[\w']+", text):
        if word.group(0) not in _FILLER:
            # Claimed by a time piece: blank in the leftover text.
            return not found.leftover[word.start() : word.end()].strip()
    return False


def read_time(
    mapped: MappedText,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> TimeReading | Refusal | None:
    """The time a part of an entry names (see the module docstring); the span is in
    ``mapped``'s original offsets."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    text = mapped.text
    if not text:
        return None
    now_local = now.astimezone(zone).replace(tzinfo=None)
    found = scan(text, now_local=now_local, conventions=conventions)
    covered = regions(text, found.taken)
    if covered.span is None:
        return None
    if covered.leftover:
        return Refusal("leftover-words")
    outcome = _resolve_scan(found, now, zone, conventions)
    if not isinstance(outcome, tuple):
        return outcome
    parsed, codes = outcome
    return TimeReading(parsed, mapped.span(*covered.span), codes)


def parse_time_phrase(
    phrase: str,
    *,
    now: datetime,
    zone: ZoneInfo,
    conventions: ParsingConventions = DEFAULT_CONVENTIONS,
) -> ParsedTime | None:
    """The one time ``phrase`` names, resolved against ``now`` (aware) in ``zone``.

    None when the phrase names no time, names two that disagree, leaves a word of its
    time phrase unread, or holds a time-like expression outside the grammar.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    reading = read_time(normalize_mapped(phrase), now=now, zone=zone, conventions=conventions)
    return reading.parsed if isinstance(reading, TimeReading) else None
