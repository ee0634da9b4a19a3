"""Scanning: find the time pieces of a normalized text, each consuming its span so later
patterns cannot reuse it.

Owns the date rules (days, dates, weekdays, relative offsets, "end of ..." and the
like) and ``scan``, which runs them and then the time-of-day and zone rules of
``time_clocks``, in registration order. The pieces it fills are ``time_pieces``'. It
says what a text holds, not which instant that is: ``time_resolution`` turns a ``Scan``
into a ``ParsedTime``.

Conventions the rules fix (tests/memory/test_commitment_parsing.py pins each one):

- "next week" = Monday 09:00 of next week; "next month" = the 1st of next month 09:00;
  "next year" = January 1st 09:00.
- "end of (the) month"/"eom" = its last day (09:00); "end of (the) year"/"eoy" =
  December 31st; "end of (the) week"/"eow" = Friday (next week's from Saturday on).
- An hour without am/pm: 1-6 mean the afternoon (13-18: "at 4" is 16:00, as calendars
  read it), 7-12 and zero-padded or 24-hour values ("08:30", "17:00") are as written;
  "morning/afternoon/evening" next to the hour decides instead.
- A month and day without a year: this year's if not before today, else next year's.
  "on the 27th": this month's if not before today, else the next month that has one.
  "Tuesday the 8th": the next date that is both.
- Numeric dates ("8.5.2018", "5/8", "12/03/2026", "2026-12-03") are ``time_numeric``'s
  (the tenant's date order); ISO timestamps with an offset go to dateutil. Positions
  ("first Tuesday of October", "Friday after next") are ``time_positions``'; spoken
  clock times ("a quarter past 3pm", "three am") ``time_spoken``'s.
- "in 1/2 hour", "in an hour and a half": elapsed minutes. Decimal amounts, bare
  durations and "now + ..." are ``time_offsets``' (a fraction of a day is 24 hours).
- A weekday beside a date must agree with it ("Thu Aug 05 12:00:00 2027"); a dash
  before a two-digit year is a range ("June 12-14"), never the year 2014.
- A month-day may carry a year of 2 or 4 digits ("14th April 15", "April 14, 2027");
  the two-digit rule is ``time_dates.full_year``'s.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from itertools import chain
from typing import Final

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_clocks import CLOCK_RULES
from memory.commitment_parsing.time_dates import (
    add_date,
    month_day,
    next_day_of_month,
)
from memory.commitment_parsing.time_numeric import NUMERIC_RULES
from memory.commitment_parsing.time_offsets import OFFSET_RE, OFFSET_RULES, record_offset
from memory.commitment_parsing.time_pieces import (
    Clock,
    Handler,
    Relative,
    Scan,
    ScanContext,
    Weekday,
)
from memory.commitment_parsing.time_positions import POSITION_RULES
from memory.commitment_parsing.time_spoken import SPOKEN_RULES
from memory.commitment_parsing.time_words import (
    END_OF_DAY,
    MONTH_RE,
    MONTHS,
    UNIT_RE,
    WEEKDAY_RE,
    WORDLIKE_WEEKDAYS,
    number_value,
    weekday_index,
)

_DATE_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = _DATE_RULES.register


@_rule(r"^(?:right |just )?now$|^rightnow$")
def _now(match: re.Match[str], ctx: ScanContext) -> bool:
    # Only as the whole phrase: "now that the deal closed" says nothing about when.
    ctx.scan.exact.append(ctx.now_local)
    return True


@_rule(r"\b(\d{4}-\d{2}-\d{2})[t ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s?(z|[+-]\d{2}:?\d{2})\b")
def _iso_timestamp(match: re.Match[str], ctx: ScanContext) -> bool:
    from dateutil.parser import isoparse

    try:
        instant = isoparse(f"{match.group(1)}T{match.group(2)}{match.group(3).upper()}")
    except ValueError:
        ctx.scan.invalid = True
        return True
    ctx.scan.exact.append(instant)
    return True


@_rule(r"\b(?:in|within|after)\s+(?:a\s+few|few|several|some|many)\s+" + UNIT_RE + r"\b")
def _vague_relative(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.invalid = True
    return True


_FRACTIONS: Final = {"1/2": 0.5, "1/4": 0.25, "3/4": 0.75, "half": 0.5, "a quarter": 0.25}
_FRACTION_RE: Final = (
    r"(?P<whole>\d{1,3}|an?|one|two|three)?\s*(?:and\s+)?(?P<frac>1/2|1/4|3/4|half|a\s+quarter)"
    r"(?:\s+(?:of\s+)?an?)?\s+(?P<unit>hours?|hrs?|minutes?|mins?)"
    r"|(?P<unit2>an?|one)\s+(?P<unit2name>hour|minute)\s+and\s+a\s+(?P<frac2>half|quarter)"
)


@_rule(
    r"\b(?:(?:in|within|after)\s+(?:" + _FRACTION_RE + r")\b(?:\s+from\s+now)?"
    r"|(?:" + _FRACTION_RE.replace("?P<", "?P<x") + r")\s+from\s+now\b)"
)
def _fraction_relative(match: re.Match[str], ctx: ScanContext) -> bool:
    # "in 1/2 hour", "in 1 1/2 hours", "in an hour and a half": elapsed minutes, whole
    # ones only (a fraction of a minute is refused). Decimals are time_offsets'.
    groups = {k.removeprefix("x"): v for k, v in match.groupdict().items() if v is not None}
    if "frac2" in groups:
        amount, unit = 1 + (0.5 if groups["frac2"] == "half" else 0.25), groups["unit2name"]
    else:
        whole = groups.get("whole", "0")
        base = number_value(whole) if whole not in ("a", "an") else 0
        frac = _FRACTIONS[re.sub(r"\s+", " ", groups["frac"])]
        amount, unit = (base or 0) + frac, groups["unit"]
    minutes = amount * (60 if unit.startswith("h") else 1)
    if minutes != int(minutes) or minutes <= 0:
        ctx.scan.refuse("unresolvable-time")
        return True
    ctx.scan.relatives.append(Relative(int(minutes), "minutes"))
    return True


@_rule(r"\b(?:in|within|after)\s+half\s+an?\s+hour\b|\bhalf\s+an?\s+hour\s+from\s+now\b")
def _half_hour(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.relatives.append(Relative(30, "minutes"))
    return True


@_rule(
    r"\b(?:(?:in|within|after)\s+(?:about\s+|around\s+|approximately\s+)?"
    r"(?P<s1>" + OFFSET_RE + r")(?:\s+from\s+now)?"
    r"|(?P<s2>" + OFFSET_RE + r")\s+(?:from\s+now|later))\b"
)
def _relative(match: re.Match[str], ctx: ScanContext) -> bool:
    # "in 5 days", "in 1 year, 2 months and 3 days", "two hours from now", "3 days later",
    # "in 1.5 days", "0,5 hours later" (fractions: time_offsets).
    return record_offset(match.group("s1") or match.group("s2"), ctx)


@_rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b")
def _after_tomorrow(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.dates.append(ctx.today + timedelta(days=2))
    return True


@_rule(
    r"\b(?:(?:by|at|until|till)\s+)?(?:the\s+)?"
    r"(?:end\s+of\s+(?:the\s+)?(?:business\s+)?day|eod|cob|close\s+of\s+business)\b"
)
def _end_of_day(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.soft_times.append(END_OF_DAY)
    return True


@_rule(
    r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<unit>month|year|week)"
    r"|(?P<abbr>eom|eoy|eow)|month[- ]end)\b"
)
def _end_of(match: re.Match[str], ctx: ScanContext) -> bool:
    unit = (
        match.group("unit")
        or {"eom": "month", "eoy": "year", "eow": "week", None: "month"}[match.group("abbr")]
    )
    today = ctx.today
    if unit == "month":
        found = today + relativedelta(day=31)
    elif unit == "year":
        found = date(today.year, 12, 31)
    else:
        found = today + timedelta(days=(4 - today.weekday()) % 7)
        ctx.scan.conventions.append("end-of-week-is-friday")
    ctx.scan.dates.append(found)
    return True


@_rule(r"\bend\s+of\s+next\s+(?P<unit>month|year|week)\b")
def _end_of_next(match: re.Match[str], ctx: ScanContext) -> bool:
    today = ctx.today
    unit = match.group("unit")
    if unit == "month":
        found = today + relativedelta(months=1, day=31)
    elif unit == "year":
        found = date(today.year + 1, 12, 31)
    else:
        found = today - timedelta(days=today.weekday()) + timedelta(days=11)
    ctx.scan.dates.append(found)
    return True


@_rule(
    r"\b(?:(?P<wd1>" + WEEKDAY_RE + r")\s+(?:of\s+)?(?:the\s+)?(?:next|following)\s+week"
    r"|(?:the\s+)?(?:next|following)\s+week(?:'s)?\s+(?:on\s+)?(?P<wd2>" + WEEKDAY_RE + r"))"
)
def _weekday_next_week(match: re.Match[str], ctx: ScanContext) -> bool:
    index = weekday_index(match.group("wd1") or match.group("wd2"))
    if index is None:
        return False
    ctx.scan.weekdays.append(Weekday(index, next_week=True))
    return True


@_rule(r"\b(?:(?:the\s+)?(?:beginning|start)\s+of\s+)?next\s+(?P<unit>week|month|year)\b")
def _next_period(match: re.Match[str], ctx: ScanContext) -> bool:
    today = ctx.today
    unit = match.group("unit")
    if unit == "week":
        found = today - timedelta(days=today.weekday()) + timedelta(days=7)
    elif unit == "month":
        found = today + relativedelta(months=1, day=1)
    else:
        found = date(today.year + 1, 1, 1)
    ctx.scan.conventions.append(f"next-{unit}-is-its-first-day")
    ctx.scan.dates.append(found)
    return True


_DAY_NUMBER_RE: Final = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
# A year after a day and month: 4 digits, "'27", or two digits not followed by what
# makes them a clock time ("May 5 10am", "Dec 24th 18:00").
# A dash before a two-digit year reads as a range instead ("June 12-14" is not 2014).
_YEAR_RE: Final = (
    r"(?:,?[\s/-]+(?P<year>(?:19|20)\d{2}|'\d{2})"
    r"|,?(?:\s+|\s*/\s*)(?P<year2>\d{2}(?![\d:.]|\s?(?:am|pm|a|p|h)\b|\s*o'?clock)))?"
)


@_rule(
    r"\b(?P<month>" + MONTH_RE + r")\s+(?P<day>\d{1,2})\s+(?P<h>\d{1,2}):(?P<m>\d{2})"
    r"(?::(?P<s>\d{2}))?\s+(?P<year>\d{4})\b"
)
def _month_day_clock_year(match: re.Match[str], ctx: ScanContext) -> bool:
    # "Aug 05 12:00:00 2015" (C's ctime order): the year after the clock is the date's.
    month = MONTHS[match.group("month").rstrip(".")]
    hour = match.group("h")
    clock = Clock(
        int(hour), int(match.group("m")), None, hour.startswith("0"), int(match.group("s") or 0)
    )
    ctx.scan.clocks.append(clock)
    return month_day(ctx, month, int(match.group("day")), match.group("year"))


# Day-month first: "14th April 15" is April 14th of '15, not April 15th.
@_rule(
    r"\b" + _DAY_NUMBER_RE + r"(?:\s+of)?[\s/.-]*(?P<month>" + MONTH_RE + r")(?![a-z])" + _YEAR_RE
)
def _day_then_month(match: re.Match[str], ctx: ScanContext) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    year = match.group("year") or match.group("year2")
    return month_day(ctx, month, int(match.group("day")), year)


@_rule(
    r"\b(?P<month>"
    + MONTH_RE
    + r")(?:\s+the)?[\s/-]*"
    + _DAY_NUMBER_RE
    + r"(?![\d:.]\d)\b"
    + _YEAR_RE
)
def _month_then_day(match: re.Match[str], ctx: ScanContext) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    year = match.group("year") or match.group("year2")
    return month_day(ctx, month, int(match.group("day")), year)


@_rule(r"\b(?P<wd>" + WEEKDAY_RE + r"),?\s+(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)\b")
def _weekday_day_of_month(match: re.Match[str], ctx: ScanContext) -> bool:
    index = weekday_index(match.group("wd"))
    day = int(match.group("day"))
    if index is None:
        return False
    # The next date, today included, that is both ("Tuesday the 8th" said in March is
    # May 8th when that is the next Tuesday the 8th).
    add_date(ctx, next_day_of_month(ctx.today, day, weekday=index))
    return True


@_rule(r"\b(?:(?:on|by|until|till|before)\s+(?:the\s+)?(?P<a>\d{1,2})(?:st|nd|rd|th)\b)")
def _day_of_month(match: re.Match[str], ctx: ScanContext) -> bool:
    add_date(ctx, next_day_of_month(ctx.today, int(match.group("a"))))
    ctx.scan.conventions.append("day-of-month-next-occurrence")
    return True


@_rule(r"\btonight\b|\bthis\s+night\b")
def _tonight(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.dates.append(ctx.today)
    ctx.scan.parts_of_day.append("night")
    return True


@_rule(
    r"\b(?P<prefix>this|today|tomorrow|tmrw|tmr|in\s+the|(?:on\s+)?" + WEEKDAY_RE + r")\s+"
    r"(?P<pod>morning|afternoon|evening|night)\b"
)
def _part_of_day(match: re.Match[str], ctx: ScanContext) -> bool:
    prefix = match.group("prefix")
    if prefix in ("this", "today"):
        ctx.scan.dates.append(ctx.today)
    elif prefix in ("tomorrow", "tmrw", "tmr"):
        ctx.scan.dates.append(ctx.today + timedelta(days=1))
    elif prefix != "in the":
        index = weekday_index(prefix.removeprefix("on").strip())
        if index is None:
            return False
        ctx.scan.weekdays.append(Weekday(index, next_week=False))
    ctx.scan.parts_of_day.append(match.group("pod"))
    return True


@_rule(r"\b(?:today|tomorrow|tmrw|tmr|yesterday)\b")
def _named_day(match: re.Match[str], ctx: ScanContext) -> bool:
    offset = {"today": 0, "yesterday": -1}.get(match.group(0), 1)
    ctx.scan.dates.append(ctx.today + timedelta(days=offset))
    return True


# A date right after a word-like weekday makes it one ("Wed Aug 05", "sat 8th may").
_DATE_AFTER_WEEKDAY: Final = re.compile(
    r",?\s+(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?" + MONTH_RE + r"(?![a-z])"
)
_WEEKDAY_KEYWORDS: Final = frozenset(
    {"on", "next", "this", "coming", "by", "until", "till", "and", "or", "every", "each"}
)


@_rule(r"\b(?:(?P<which>this|coming|next)\s+)?(?P<wd>" + WEEKDAY_RE + r")")
def _weekday(match: re.Match[str], ctx: ScanContext) -> bool:
    token = match.group("wd")
    index = weekday_index(token)
    if index is None:
        return False
    if token in WORDLIKE_WEEKDAYS and match.group(0) == token:
        before = ctx.text[: match.start()].rstrip()
        previous = before.rsplit(" ", 1)[-1] if before else ""
        whole = token == ctx.text
        dated = _DATE_AFTER_WEEKDAY.match(ctx.text, match.end()) is not None
        if not (whole or dated or previous in _WEEKDAY_KEYWORDS or before.endswith(",")):
            return False
    said_next = match.group("which") == "next"
    ctx.scan.weekdays.append(Weekday(index, next_week=False, said_next=said_next))
    return True


_ALL_RULES: Final = (
    POSITION_RULES,
    _DATE_RULES,
    OFFSET_RULES,
    NUMERIC_RULES,
    SPOKEN_RULES,
    CLOCK_RULES,
)


def scan(
    text: str, *, now_local: datetime, conventions: ParsingConventions = DEFAULT_CONVENTIONS
) -> Scan:
    """Find the time pieces of ``text`` (normalized with ``normalize_text``); the
    consumed characters are ``Scan.taken``."""
    ctx = ScanContext(text, now_local.date(), now_local, Scan(), bytearray(len(text)), conventions)
    for pattern, handler in chain(*_ALL_RULES):
        for match in pattern.finditer(text):
            if match.end() > match.start() and ctx.free(match) and handler(match, ctx):
                ctx.take(match)
    ctx.scan.leftover = "".join(" " if t else ch for ch, t in zip(text, ctx.taken, strict=True))
    ctx.scan.taken = bytes(ctx.taken)
    return ctx.scan
