"""Scanning: find the time pieces of a normalized text, each consuming its span so later
patterns cannot reuse it.

Owns the scanned pieces (``Clock``, ``Weekday``, ``Scan``), the ordered rule registry
and its handlers, and ``scan``. It says what a text holds, not which instant that is:
``time_resolution`` turns a ``Scan`` into a ``ParsedTime``.

Conventions the rules fix (tests/test_commitment_parsing.py pins each one):

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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Final

from dateutil.relativedelta import relativedelta

from memory.commitments.time_words import (
    AFTERNOON_PODS,
    END_OF_DAY,
    HOUR_WORD_RE,
    MERIDIEM_RE,
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


@dataclass(frozen=True)
class Clock:
    hour: int
    minute: int
    meridiem: str | None  # "am", "pm" or None when not said
    padded: bool  # "08:30", "17:00": written as a 24-hour clock

    def resolve(self, part_of_day: str | None) -> time | None:
        hour = self.hour
        if self.meridiem == "am":
            hour = 0 if hour == 12 else hour
        elif self.meridiem == "pm":
            # "20pm" is 20:00: the suffix is redundant, not an error.
            hour = hour if hour >= 12 else hour + 12
        elif part_of_day is not None:
            if part_of_day in AFTERNOON_PODS and hour < 12:
                hour += 12
        elif not self.padded and 1 <= hour <= 6:
            hour += 12
        if not (0 <= hour <= 23 and 0 <= self.minute <= 59):
            return None
        return time(hour, self.minute)


@dataclass(frozen=True)
class Weekday:
    index: int
    next_week: bool  # "<weekday> next week": that day of the following week


@dataclass(frozen=True)
class _Relative:
    amount: int
    unit: str  # minutes, hours, days, weeks, months, years


@dataclass
class Scan:
    """What a text says about time, before resolution."""

    dates: list[date] = field(default_factory=list)
    weekdays: list[Weekday] = field(default_factory=list)
    clocks: list[Clock] = field(default_factory=list)
    parts_of_day: list[str] = field(default_factory=list)
    relatives: list[_Relative] = field(default_factory=list)
    exact: list[datetime] = field(default_factory=list)  # an ISO timestamp with offset
    soft_times: list[time] = field(default_factory=list)  # "end of day" and the like
    invalid: bool = False  # something time-like we refuse to guess at
    utc_said: bool = False  # "at 17:00 UTC": the clock is UTC, not the entry's zone
    other_zone_said: bool = False  # "at 5pm PST": a zone we do not map (abbreviations clash)
    leftover: str = ""  # the text no piece claimed

    def found_anything(self) -> bool:
        pieces = (self.dates, self.weekdays, self.clocks, self.parts_of_day, self.relatives)
        return self.invalid or any(pieces) or bool(self.exact or self.soft_times)


@dataclass
class _Context:
    text: str
    today: date
    now_local: datetime  # naive wall clock
    scan: Scan
    taken: bytearray

    def free(self, match: re.Match[str]) -> bool:
        return not any(self.taken[match.start() : match.end()])

    def take(self, match: re.Match[str]) -> None:
        self.taken[match.start() : match.end()] = b"\x01" * (match.end() - match.start())


_Handler = Callable[[re.Match[str], _Context], bool]
_RULES: list[tuple[re.Pattern[str], _Handler]] = []


def _rule(pattern: str) -> Callable[[_Handler], _Handler]:
    compiled = re.compile(pattern)

    def register(handler: _Handler) -> _Handler:
        _RULES.append((compiled, handler))
        return handler

    return register


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


def _add_date(ctx: _Context, found: date | None) -> None:
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


def _month_day(ctx: _Context, month: int, day: int, year: int | None) -> bool:
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
def _now(match: re.Match[str], ctx: _Context) -> bool:
    # Only as the whole phrase: "now that the deal closed" says nothing about when.
    ctx.scan.exact.append(ctx.now_local)
    return True


@_rule(r"\b(\d{4}-\d{2}-\d{2})[t ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s?(z|[+-]\d{2}:?\d{2})\b")
def _iso_timestamp(match: re.Match[str], ctx: _Context) -> bool:
    from dateutil.parser import isoparse

    try:
        instant = isoparse(f"{match.group(1)}T{match.group(2)}{match.group(3).upper()}")
    except ValueError:
        ctx.scan.invalid = True
        return True
    ctx.scan.exact.append(instant)
    return True


@_rule(r"\b(?:in|within|after)\s+(?:a\s+few|few|several|some|many)\s+" + UNIT_RE + r"\b")
def _vague_relative(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.invalid = True
    return True


@_rule(r"\b(?:in|within|after)\s+half\s+an?\s+hour\b|\bhalf\s+an?\s+hour\s+from\s+now\b")
def _half_hour(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.relatives.append(_Relative(30, "minutes"))
    return True


@_rule(
    r"\b(?:(?:in|within|after)\s+(?P<n1>a\s+couple\s+of|" + NUMBER_RE + r")\s*(?P<u1>"
    r"" + UNIT_RE + r")\b(?:\s+from\s+now)?"
    r"|(?P<n2>a\s+couple\s+of|" + NUMBER_RE + r")\s*(?P<u2>" + UNIT_RE + r")\s+from\s+now)"
)
def _relative(match: re.Match[str], ctx: _Context) -> bool:
    amount_text = match.group("n1") or match.group("n2")
    unit_text = match.group("u1") or match.group("u2")
    amount = 2 if amount_text.startswith("a couple") else number_value(amount_text)
    if amount is None or amount > 1000:
        ctx.scan.invalid = True
        return True
    ctx.scan.relatives.append(_Relative(amount, UNITS[unit_text]))
    return True


@_rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b")
def _after_tomorrow(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.dates.append(ctx.today + timedelta(days=2))
    return True


@_rule(
    r"\b(?:(?:by|at|until|till)\s+)?(?:the\s+)?"
    r"(?:end\s+of\s+(?:the\s+)?(?:business\s+)?day|eod|cob|close\s+of\s+business)\b"
)
def _end_of_day(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.soft_times.append(END_OF_DAY)
    return True


@_rule(
    r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<unit>month|year|week)"
    r"|(?P<abbr>eom|eoy|eow)|month[- ]end)\b"
)
def _end_of(match: re.Match[str], ctx: _Context) -> bool:
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
def _end_of_next(match: re.Match[str], ctx: _Context) -> bool:
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
def _weekday_next_week(match: re.Match[str], ctx: _Context) -> bool:
    index = weekday_index(match.group("wd1") or match.group("wd2"))
    if index is None:
        return False
    ctx.scan.weekdays.append(Weekday(index, next_week=True))
    return True


@_rule(r"\b(?:(?:the\s+)?(?:beginning|start)\s+of\s+)?next\s+(?P<unit>week|month|year)\b")
def _next_period(match: re.Match[str], ctx: _Context) -> bool:
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
def _iso_date(match: re.Match[str], ctx: _Context) -> bool:
    groups = [g for g in match.groups() if g is not None]
    found = _valid_date(int(groups[0]), int(groups[1]), int(groups[2]))
    if found is None:
        # "2022/30/11": not ISO; dateparser may know the order.
        _add_date(ctx, _dateparser_date(match.group(0), ctx.now_local))
        return True
    ctx.scan.dates.append(found)
    return True


@_rule(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4}|\d{2})(?![\d.]))?")
def _dotted_date(match: re.Match[str], ctx: _Context) -> bool:
    day, month, year = int(match.group(1)), int(match.group(2)), _year(match.group(3))
    if not 1 <= month <= 12:
        return False
    return _month_day(ctx, month, day, year)


@_rule(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])")
def _slashed_date(match: re.Match[str], ctx: _Context) -> bool:
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
def _month_then_day(match: re.Match[str], ctx: _Context) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    return _month_day(ctx, month, int(match.group("day")), _year(match.group("year")))


@_rule(
    r"\b" + _DAY_NUMBER_RE + r"(?:\s+of)?[\s/.-]*(?P<month>" + MONTH_RE + r")(?![a-z])" + _YEAR_RE
)
def _day_then_month(match: re.Match[str], ctx: _Context) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    return _month_day(ctx, month, int(match.group("day")), _year(match.group("year")))


@_rule(r"\b(?P<wd>" + WEEKDAY_RE + r"),?\s+(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)\b")
def _weekday_day_of_month(match: re.Match[str], ctx: _Context) -> bool:
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
def _day_of_month(match: re.Match[str], ctx: _Context) -> bool:
    day = int(match.group("a") or match.group("b"))
    _add_date(ctx, _next_day_of_month(ctx.today, day))
    return True


@_rule(r"\btonight\b|\bthis\s+night\b")
def _tonight(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.dates.append(ctx.today)
    ctx.scan.parts_of_day.append("night")
    return True


@_rule(
    r"\b(?P<prefix>this|today|tomorrow|tmrw|tmr|in\s+the|(?:on\s+)?" + WEEKDAY_RE + r")\s+"
    r"(?P<pod>morning|afternoon|evening|night)\b"
)
def _part_of_day(match: re.Match[str], ctx: _Context) -> bool:
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
def _named_day(match: re.Match[str], ctx: _Context) -> bool:
    offset = {"today": 0, "yesterday": -1}.get(match.group(0), 1)
    ctx.scan.dates.append(ctx.today + timedelta(days=offset))
    return True


_WEEKDAY_KEYWORDS: Final = frozenset(
    {"on", "next", "this", "coming", "by", "until", "till", "and", "or", "every", "each"}
)


@_rule(r"\b(?:(?:this|coming|next)\s+)?(?P<wd>" + WEEKDAY_RE + r")")
def _weekday(match: re.Match[str], ctx: _Context) -> bool:
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


# --- times of day ----------------------------------------------------------------------


_CLOCK_TEXT: Final = r"\d{1,2}(?::\d{2})?(?:\s?(?:am|pm))?"


@_rule(r"\b(?:at|@)\s+(?P<first>" + _CLOCK_TEXT + r")\s+and\s+(?P<second>" + _CLOCK_TEXT + r")\b")
def _two_clocks(match: re.Match[str], ctx: _Context) -> bool:
    # "at 9 and 17": two times (a conflict for one instant, two hours for a series).
    for group in ("first", "second"):
        found = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s?(am|pm)?", match.group(group))
        assert found is not None
        hour, minute, meridiem = found.group(1), found.group(2), found.group(3)
        padded = hour.startswith("0") or (minute is not None and len(hour) == 2)
        ctx.scan.clocks.append(Clock(int(hour), int(minute or 0), meridiem, padded=padded))
    return True


@_rule(r"\b(?P<h>\d{1,2})[:.](?P<m>\d{2})\s?(?P<mer>" + MERIDIEM_RE + r")\b")
def _clock_with_meridiem(match: re.Match[str], ctx: _Context) -> bool:
    meridiem = match.group("mer")
    ctx.scan.clocks.append(
        Clock(int(match.group("h")), int(match.group("m")), meridiem[0] + "m", padded=False)
    )
    return True


@_rule(r"(?<![\d.:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])")
def _clock_colon(match: re.Match[str], ctx: _Context) -> bool:
    text = match.group("h")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m")), None, padded=text.startswith("0"))
    )
    return True


@_rule(r"\b(?:at|@|around|about)\s+(?:around\s+|about\s+)?(?P<h>\d{1,2})\.(?P<m>\d{2})\b")
def _clock_dotted(match: re.Match[str], ctx: _Context) -> bool:
    # "at 7.25": only after "at", where it cannot be an amount.
    text = match.group("h")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m")), None, padded=text.startswith("0"))
    )
    return True


@_rule(r"\b(?P<h>\d{1,2})\s?(?P<mer>am|pm)\b|\b(?P<h2>\d{1,2})(?P<mer2>a|p)\b")
def _hour_with_meridiem(match: re.Match[str], ctx: _Context) -> bool:
    hour = match.group("h") or match.group("h2")
    meridiem = (match.group("mer") or match.group("mer2"))[0] + "m"
    ctx.scan.clocks.append(Clock(int(hour), 0, meridiem, padded=False))
    return True


@_rule(r"(?<!in )(?<!for )(?<!within )\b(?P<h>\d{1,2})h(?P<m>\d{2})?\b")
def _hour_h(match: re.Match[str], ctx: _Context) -> bool:
    # "8h", "20h", "8h00": a European clock time. "in 2h" is a duration (taken earlier).
    text = match.group("h")
    ctx.scan.clocks.append(Clock(int(text), int(match.group("m") or 0), None, padded=True))
    return True


@_rule(
    r"\b(?:a\s+)?quarter\s+(?P<dir>past|after|to|before)\s+(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\b"
)
def _quarter(match: re.Match[str], ctx: _Context) -> bool:
    hour = number_value(match.group("h"))
    if hour is None or not 1 <= hour <= 12:
        return False
    if match.group("dir") in ("to", "before"):
        ctx.scan.clocks.append(Clock(hour - 1 if hour > 1 else 12, 45, None, padded=False))
    else:
        ctx.scan.clocks.append(Clock(hour, 15, None, padded=False))
    return True


@_rule(r"\bhalf\s+past\s+(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\b")
def _half_past(match: re.Match[str], ctx: _Context) -> bool:
    hour = number_value(match.group("h"))
    if hour is None or not 1 <= hour <= 12:
        return False
    ctx.scan.clocks.append(Clock(hour, 30, None, padded=False))
    return True


@_rule(
    r"\b(?:(?:at|@|around|about|by)\s+(?:around\s+|about\s+)?)?"
    r"(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\s*o'?\s?clock\b"
)
def _oclock(match: re.Match[str], ctx: _Context) -> bool:
    hour = number_value(match.group("h"))
    if hour is None:
        return False
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=False))
    return True


@_rule(
    r"\b(?:at|@|around|about)\s+(?:around\s+|about\s+)?(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")"
    r"(?![\d:.%/]|\s*(?:st|nd|rd|th|" + UNIT_RE + r"|people|percent)\b)"
)
def _at_hour(match: re.Match[str], ctx: _Context) -> bool:
    text = match.group("h")
    hour = number_value(text)
    if hour is None:
        return False
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=text.startswith("0") or hour > 12))
    return True


@_rule(r"\b(?:(?:at|by)\s+)?(?P<name>noon|midday|midnight)\b")
def _noon(match: re.Match[str], ctx: _Context) -> bool:
    hour = 0 if match.group("name") == "midnight" else 12
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=True))
    return True


@_rule(r"\bin\s+the\s+(?P<pod>morning|afternoon|evening)\b|\bat\s+night\b")
def _pod_modifier(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.parts_of_day.append(match.group("pod") or "night")
    return True


@_rule(r"\b(?:utc|gmt)\b")
def _utc(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.utc_said = True
    return True


# Zone abbreviations are ambiguous (IST, CST) and do not say which side of DST: a clock
# time next to one is refused rather than read in the entry's zone.
@_rule(
    r"\b(?:cet|cest|eet|eest|wet|west|bst|est|edt|cst|cdt|mst|mdt|pst|pdt|akst|akdt|hst"
    r"|ist|jst|kst|sgt|hkt|aest|aedt|acst|acdt|awst|nzst|nzdt)\b"
)
def _other_zone(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.other_zone_said = True
    return True


def scan(text: str, *, now_local: datetime) -> Scan:
    """Find the time pieces of ``text`` (normalized with ``normalize_text``)."""
    ctx = _Context(text, now_local.date(), now_local, Scan(), bytearray(len(text)))
    for pattern, handler in _RULES:
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
