"""Scanning rules for days named by their position: "the first Tuesday of October", "last
Monday of March", "the 2nd Friday of next month", "Friday after next", "the week after
next".

``POSITION_RULES`` runs before the date rules of ``time_grammar`` (whose weekday and
"next week" rules would otherwise read part of these). Conventions (codes in
docs/time-grammar.md):

- "<position> <weekday> of/in <month>": that day in the month's next occurrence, this
  year's if not before today, else next year's ("month-day-next-occurrence"); with a
  year, that year's. "of the month"/"this month": this month's; "next month": next
  month's. A fifth weekday a month does not have is refused.
- "the Nth of this/next month": that month's, refused when it has no such day ("the
  31st of this month" said in September).
- "<weekday> after next": one week after the coming <weekday> ("next-weekday-is-coming-one"
  applied, then a week on); "the week after next": the Monday two weeks on, 09:00.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Final

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_dates import add_date, full_year, valid_date
from memory.commitment_parsing.time_pieces import Handler, ScanContext, Weekday
from memory.commitment_parsing.time_words import MONTH_RE, MONTHS, WEEKDAY_RE, weekday_index

POSITION_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = POSITION_RULES.register

_POSITIONS: Final = {
    **dict.fromkeys(("first", "1st"), 1),
    **dict.fromkeys(("second", "2nd"), 2),
    **dict.fromkeys(("third", "3rd"), 3),
    **dict.fromkeys(("fourth", "4th"), 4),
    **dict.fromkeys(("fifth", "5th"), 5),
    "last": -1,
}
_POSITION_RE: Final = "|".join(_POSITIONS)


def nth_weekday(year: int, month: int, weekday: int, position: int) -> date | None:
    """The ``position``-th (1-5, or -1 for the last) ``weekday`` of a month, or None."""
    days = [
        day
        for day in range(1, calendar.monthrange(year, month)[1] + 1)
        if date(year, month, day).weekday() == weekday
    ]
    if position == -1:
        return date(year, month, days[-1])
    return date(year, month, days[position - 1]) if position <= len(days) else None


@_rule(
    r"\b(?:the\s+)?(?P<pos>" + _POSITION_RE + r")\s+(?P<wd>" + WEEKDAY_RE + r")\s+(?:of|in)\s+"
    r"(?:(?P<month>" + MONTH_RE + r")(?:,?\s+(?P<year>\d{4}|'\d{2}))?"
    r"|(?P<rel>the|this|next)\s+month)\b"
)
def _positioned_weekday(match: re.Match[str], ctx: ScanContext) -> bool:
    position = _POSITIONS[match.group("pos")]
    weekday = weekday_index(match.group("wd"))
    if weekday is None:
        return False
    if match.group("rel"):
        first = ctx.today.replace(day=1)
        if match.group("rel") == "next":
            first += relativedelta(months=1)
        add_date(ctx, nth_weekday(first.year, first.month, weekday, position))
        return True
    month = MONTHS[match.group("month").rstrip(".")]
    year_token = match.group("year")
    if year_token:
        year = full_year(ctx, year_token)
        if year is not None:
            add_date(ctx, nth_weekday(year, month, weekday, position))
        return True
    for year in (ctx.today.year, ctx.today.year + 1):
        found = nth_weekday(year, month, weekday, position)
        if found is not None and found >= ctx.today:
            ctx.scan.conventions.append("month-day-next-occurrence")
            ctx.scan.dates.append(found)
            return True
    ctx.scan.refuse("invalid-date")
    return True


@_rule(r"\b(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?P<which>the|this|next)\s+month\b")
def _day_of_named_month(match: re.Match[str], ctx: ScanContext) -> bool:
    # "the 31st of this month": this month's only (refused when it has none).
    first = ctx.today.replace(day=1)
    if match.group("which") == "next":
        first += relativedelta(months=1)
    add_date(ctx, valid_date(first.year, first.month, int(match.group("day"))))
    return True


@_rule(
    r"\b(?:the\s+)?(?:(?P<wd>" + WEEKDAY_RE + r")\s+)?(?:of\s+)?(?:the\s+)?week\s+after\s+next\b"
)
def _week_after_next(match: re.Match[str], ctx: ScanContext) -> bool:
    monday = ctx.today - timedelta(days=ctx.today.weekday()) + timedelta(days=14)
    if match.group("wd"):
        index = weekday_index(match.group("wd"))
        if index is None:
            return False
        ctx.scan.dates.append(monday + timedelta(days=index))
    else:
        ctx.scan.conventions.append("week-starts-monday")
        ctx.scan.dates.append(monday)
    return True


@_rule(r"\b(?:the\s+)?(?P<wd>" + WEEKDAY_RE + r")\s+after\s+next\b")
def _weekday_after_next(match: re.Match[str], ctx: ScanContext) -> bool:
    index = weekday_index(match.group("wd"))
    if index is None:
        return False
    ctx.scan.weekdays.append(Weekday(index, next_week=False, weeks_later=1))
    return True
