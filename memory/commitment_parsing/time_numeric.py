"""Scanning rules for all-numeric dates: "2026-12-03", "3/4", "03/04/2027", "31.12.",
"10/31/74".

``NUMERIC_RULES`` runs after the date rules of ``time_grammar`` and before the clock rules.
Conventions (codes in docs/time-grammar.md):

- A date that starts with a 4-digit year is year-month-day, always ("2026-12-03",
  "2026/12/03"); one whose month is out of range is refused.
- Dotted dates are day-first, always ("23.04.2018", "8.5.", "8.5.18"):
  "dotted-date-day-first" when the other order would also have been a date.
- Slashed (and dashed, with a year) dates take the tenant's ``date_order`` when both
  orders make a date ("date-order-MDY", "date-order-DMY"; YMD reads two numbers
  month-first); a date only one order can read takes it ("date-order-only-valid"); a
  year-first date with a two-digit year ("27/3/4") is refused ("ambiguous-date-order").
- The year is ``time_dates.full_year``'s; no year: the next occurrence.
- "24/7" (always) and fractions ("1/2 hour", taken earlier) are not dates.
"""

from __future__ import annotations

import re

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_dates import add_date, month_day, valid_date
from memory.commitment_parsing.time_pieces import Clock, Handler, ScanContext

NUMERIC_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = NUMERIC_RULES.register


@_rule(
    r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})[t ](?P<h>\d{2}):(?P<mi>\d{2})"
    r"(?::(?P<s>\d{2})(?:\.(?P<frac>\d{1,6}))?)?(?![\d:.])"
)
def _iso_local(match: re.Match[str], ctx: ScanContext) -> bool:
    # "2022-12-27T09:15:01.002" with no offset: ISO 8601 local time, a 24-hour clock,
    # seconds and fractions kept. (With an offset it is time_grammar's.)
    year, month, day = int(match.group("y")), int(match.group("mo")), int(match.group("d"))
    add_date(ctx, valid_date(year, month, day))
    fraction = (match.group("frac") or "").ljust(6, "0")
    second = int(match.group("s") or 0)
    hour, minute = int(match.group("h")), int(match.group("mi"))
    ctx.scan.clocks.append(Clock(hour, minute, None, True, second, int(fraction)))
    return True


@_rule(
    r"\b(?P<y>\d{4})/(?P<mo>\d{1,2})/(?P<d>\d{1,2})\s+(?P<mer>am|pm)\s+(?P<h>\d{1,2}):(?P<mi>\d{2})\b"
)
def _year_first_meridiem_first(match: re.Match[str], ctx: ScanContext) -> bool:
    # "2020/10/9 PM 2:26": the East Asian order, meridiem before the clock. Read only
    # right after a year-first date, where "PM" can belong to nothing else.
    year, month, day = int(match.group("y")), int(match.group("mo")), int(match.group("d"))
    add_date(ctx, valid_date(year, month, day))
    hour, minute = int(match.group("h")), int(match.group("mi"))
    ctx.scan.clocks.append(Clock(hour, minute, match.group("mer"), padded=False))
    return True


@_rule(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|\b(\d{4})[/.](\d{1,2})[/.](\d{1,2})\b")
def _year_first(match: re.Match[str], ctx: ScanContext) -> bool:
    year, month, day = (int(g) for g in match.groups() if g is not None)
    add_date(ctx, valid_date(year, month, day))
    return True


@_rule(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4}|\d{2})(?![\d.]))?")
def _dotted(match: re.Match[str], ctx: ScanContext) -> bool:
    day, month = int(match.group(1)), int(match.group(2))
    if not 1 <= month <= 12:
        return False
    if day != month and 1 <= day <= 12:
        ctx.scan.conventions.append("dotted-date-day-first")
    return month_day(ctx, month, day, match.group(3))


@_rule(
    r"(?<![\d/.-])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])"
    r"|(?<![\d/.-])(\d{1,2})-(\d{1,2})-(\d{4}|\d{2})(?![\d-])"
)
def _slashed(match: re.Match[str], ctx: ScanContext) -> bool:
    if match.group(0) == "24/7":  # "always", not July 24th
        return False
    first, second, year = (
        (match.group(1), match.group(2), match.group(3))
        if match.group(1)
        else (match.group(4), match.group(5), match.group(6))
    )
    a, b = int(first), int(second)
    order = ctx.settings.date_order
    if order == "YMD" and year is not None:
        ctx.scan.refuse("ambiguous-date-order")  # "27/3/4": which number is the year?
        return True
    month_first = 1 <= a <= 12 and 1 <= b <= 31
    day_first = 1 <= b <= 12 and 1 <= a <= 31
    if month_first and day_first and a != b:
        month_first = order != "DMY"
        ctx.scan.conventions.append(f"date-order-{order}")
    elif month_first != day_first:
        ctx.scan.conventions.append("date-order-only-valid")
    elif not month_first:
        ctx.scan.refuse("invalid-date")
        return True
    month, day = (a, b) if month_first else (b, a)
    return month_day(ctx, month, day, year)
