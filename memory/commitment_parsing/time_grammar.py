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
- Dotted numeric dates are day-first ("8.5.2018", "23.04.2018", "8.5."); slashed ones
  ("5/8", "12/03/2026") go to dateparser, which reads English month-first; ISO dates
  ("2026-12-03") are ours, ISO timestamps with an offset go to dateutil.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from itertools import chain
from typing import Final

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_clocks import CLOCK_RULES
from memory.commitment_parsing.time_pieces import Handler, Relative, Scan, ScanContext, Weekday
from memory.commitment_parsing.time_words import (
    END_OF_DAY,
    MONTH_RE,
    MONTHS,
    NUMBER_RE,
    UNIT_RE,
    UNITS,
    WEEKDAY_RE,
    WORDLIKE_WEEKDAYS,
    number_value,
    weekday_index,
)

_DATE_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = _DATE_RULES.register


def _valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _year(token: str | None) -> int | None:
    if not token:
        return None
    value = int(token)
    return 2000 + value if value < 100 else value


def _add_date(ctx: ScanContext, found: date | None) -> None:
    if found is None:
        ctx.scan.invalid = True  # "Feb 30", "the 32nd": never a guess
    else:
        ctx.scan.dates.append(found)


def _next_day_of_month(today: date, day: int, weekday: int | None = None) -> date | None:
    """The first date on or after ``today`` on that day of the month (and weekday)."""
    first = today.replace(day=1)
    for months_ahead in range(48):
        month = first + relativedelta(months=months_ahead)
        candidate = _valid_date(month.year, month.month, day)
        matches = weekday is None or (candidate is not None and candidate.weekday() == weekday)
        if candidate is not None and candidate >= today and matches:
            return candidate
    return None


def _month_day(ctx: ScanContext, month: int, day: int, year: int | None) -> bool:
    if year is not None:
        found = _valid_date(year, month, day)
    else:
        # This year's if not before today, else the next year that has it (Feb 29).
        found = None
        for candidate_year in range(ctx.today.year, ctx.today.year + 9):
            candidate = _valid_date(candidate_year, month, day)
            if candidate is not None and candidate >= ctx.today:
                found = candidate
                break
    _add_date(ctx, found)
    return True


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


@_rule(r"\b(?:in|within|after)\s+half\s+an?\s+hour\b|\bhalf\s+an?\s+hour\s+from\s+now\b")
def _half_hour(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.relatives.append(Relative(30, "minutes"))
    return True


@_rule(
    r"\b(?:(?:in|within|after)\s+(?P<n1>a\s+couple\s+of|" + NUMBER_RE + r")\s*(?P<u1>"
    r"" + UNIT_RE + r")\b(?:\s+from\s+now)?"
    r"|(?P<n2>a\s+couple\s+of|" + NUMBER_RE + r")\s*(?P<u2>" + UNIT_RE + r")\s+from\s+now)"
)
def _relative(match: re.Match[str], ctx: ScanContext) -> bool:
    amount_text = match.group("n1") or match.group("n2")
    unit_text = match.group("u1") or match.group("u2")
    amount = 2 if amount_text.startswith("a couple") else number_value(amount_text)
    if amount is None or amount > 1000:
        ctx.scan.invalid = True
        return True
    ctx.scan.relatives.append(Relative(amount, UNITS[unit_text]))
    return True


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
    ctx.scan.dates.append(found)
    return True


@_rule(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|\b(\d{4})[/.](\d{1,2})[/.](\d{1,2})\b")
def _iso_date(match: re.Match[str], ctx: ScanContext) -> bool:
    groups = [g for g in match.groups() if g is not None]
    found = _valid_date(int(groups[0]), int(groups[1]), int(groups[2]))
    if found is None:
        # "2022/30/11": not ISO; dateparser may know the order.
        _add_date(ctx, _dateparser_date(match.group(0), ctx.now_local))
        return True
    ctx.scan.dates.append(found)
    return True


@_rule(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4}|\d{2})(?![\d.]))?")
def _dotted_date(match: re.Match[str], ctx: ScanContext) -> bool:
    day, month, year = int(match.group(1)), int(match.group(2)), _year(match.group(3))
    if not 1 <= month <= 12:
        return False
    return _month_day(ctx, month, day, year)


@_rule(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])")
def _slashed_date(match: re.Match[str], ctx: ScanContext) -> bool:
    if match.group(0) == "24/7":  # "always", not July 24th
        return False
    _add_date(ctx, _dateparser_date(match.group(0), ctx.now_local))
    return True


_DAY_NUMBER_RE: Final = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_RE: Final = r"(?:,?[\s/-]+(?P<year>(?:19|20)\d{2}))?"


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
    return _month_day(ctx, month, int(match.group("day")), _year(match.group("year")))


@_rule(
    r"\b" + _DAY_NUMBER_RE + r"(?:\s+of)?[\s/.-]*(?P<month>" + MONTH_RE + r")(?![a-z])" + _YEAR_RE
)
def _day_then_month(match: re.Match[str], ctx: ScanContext) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    return _month_day(ctx, month, int(match.group("day")), _year(match.group("year")))


@_rule(r"\b(?P<wd>" + WEEKDAY_RE + r"),?\s+(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)\b")
def _weekday_day_of_month(match: re.Match[str], ctx: ScanContext) -> bool:
    index = weekday_index(match.group("wd"))
    day = int(match.group("day"))
    if index is None:
        return False
    # The next date, today included, that is both ("Tuesday the 8th" said in March is
    # May 8th when that is the next Tuesday the 8th).
    _add_date(ctx, _next_day_of_month(ctx.today, day, weekday=index))
    return True


@_rule(
    r"\b(?:(?:on|by|until|till|before)\s+(?:the\s+)?(?P<a>\d{1,2})(?:st|nd|rd|th)\b"
    r"|the\s+(?P<b>\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?:the|this)\s+month\b)"
)
def _day_of_month(match: re.Match[str], ctx: ScanContext) -> bool:
    day = int(match.group("a") or match.group("b"))
    _add_date(ctx, _next_day_of_month(ctx.today, day))
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


_WEEKDAY_KEYWORDS: Final = frozenset(
    {"on", "next", "this", "coming", "by", "until", "till", "and", "or", "every", "each"}
)


@_rule(r"\b(?:(?:this|coming|next)\s+)?(?P<wd>" + WEEKDAY_RE + r")")
def _weekday(match: re.Match[str], ctx: ScanContext) -> bool:
    token = match.group("wd")
    index = weekday_index(token)
    if index is None:
        return False
    if token in WORDLIKE_WEEKDAYS and match.group(0) == token:
        before = ctx.text[: match.start()].rstrip()
        previous = before.rsplit(" ", 1)[-1] if before else ""
        whole = token == ctx.text
        if not (whole or previous in _WEEKDAY_KEYWORDS or before.endswith(",")):
            return False
    ctx.scan.weekdays.append(Weekday(index, next_week=False))
    return True


def scan(text: str, *, now_local: datetime) -> Scan:
    """Find the time pieces of ``text`` (normalized with ``normalize_text``)."""
    ctx = ScanContext(text, now_local.date(), now_local, Scan(), bytearray(len(text)))
    for pattern, handler in chain(_DATE_RULES, CLOCK_RULES):
        for match in pattern.finditer(text):
            if match.end() > match.start() and ctx.free(match) and handler(match, ctx):
                ctx.take(match)
    ctx.scan.leftover = "".join(" " if t else ch for ch, t in zip(text, ctx.taken, strict=True))
    return ctx.scan


def _dateparser_date(token: str, now_local: datetime) -> date | None:
    # Imported here: dateparser costs about a second to import, and most phrases never
    # need it.
    import dateparser

    parsed = dateparser.parse(
        token,
        languages=["en"],
        settings={
            "PREFER_DATES_FROM": "future",
            "RELATIVE_BASE": now_local,
            "REQUIRE_PARTS": ["day", "month"],
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    return None if parsed is None else parsed.date()
