"""Calendar helpers every date rule shares: valid dates, the year rule, "the next one".

Conventions (docs/time-grammar.md lists the codes):

- A month and day without a year: this year's if not before today, else the next year
  that has it ("month-day-next-occurrence").
- A two-digit year: the year ending in those digits nearest the reference year, only
  within ``ParsingConventions.two_digit_year_window`` years of it
  ("two-digit-year-nearest"); otherwise the phrase is refused
  ("ambiguous-two-digit-year"): 74 said in 2026 is neither 1974 nor 2074.
- An invalid date ("Feb 30", "the 32nd") is refused, never moved to a valid one.
"""

from __future__ import annotations

from datetime import date

from dateutil.relativedelta import relativedelta

from memory.commitment_parsing.time_pieces import ScanContext


def valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def full_year(ctx: ScanContext, token: str | None) -> int | None:
    """The year ``token`` names ("2027", "27", "'27"); None when absent or refused (the
    scan is then marked refused)."""
    if not token:
        return None
    digits = token.lstrip("'\u2019")
    value = int(digits)
    if len(digits) == 4:
        return value
    if len(digits) != 2:
        ctx.scan.refuse("invalid-date")
        return None
    reference = ctx.today.year
    base = reference // 100 * 100
    candidates = [base - 100 + value, base + value, base + 100 + value]
    nearest = min(candidates, key=lambda year: abs(year - reference))
    if abs(nearest - reference) > ctx.settings.two_digit_year_window:
        ctx.scan.refuse("ambiguous-two-digit-year")
        return None
    ctx.scan.conventions.append("two-digit-year-nearest")
    return nearest


def add_date(ctx: ScanContext, found: date | None) -> None:
    if found is None:
        ctx.scan.refuse("invalid-date")  # "Feb 30", "the 32nd": never a guess
    else:
        ctx.scan.dates.append(found)


def next_day_of_month(today: date, day: int, weekday: int | None = None) -> date | None:
    """The first date on or after ``today`` on that day of the month (and weekday)."""
    first = today.replace(day=1)
    for months_ahead in range(48):
        month = first + relativedelta(months=months_ahead)
        candidate = valid_date(month.year, month.month, day)
        matches = weekday is None or (candidate is not None and candidate.weekday() == weekday)
        if candidate is not None and candidate >= today and matches:
            return candidate
    return None


def month_day(ctx: ScanContext, month: int, day: int, year_token: str | None) -> bool:
    """Record month/day (and the year ``year_token`` names, or the next occurrence);
    always consumes the match."""
    year = full_year(ctx, year_token)
    if year_token and year is None:
        return True  # the year was refused: the date cannot be placed
    if year is not None:
        found = valid_date(year, month, day)
    else:
        # This year's if not before today, else the next year that has it (Feb 29).
        found = None
        for candidate_year in range(ctx.today.year, ctx.today.year + 9):
            candidate = valid_date(candidate_year, month, day)
            if candidate is not None and candidate >= ctx.today:
                found = candidate
                break
        if found is not None:
            ctx.scan.conventions.append("month-day-next-occurrence")
    add_date(ctx, found)
    return True
