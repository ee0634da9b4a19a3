"""A small grammar for the time phrasings commitments use, resolved in an IANA zone.

``parse_time_phrase("in 5 days to send the invoice", now=..., zone=...)`` finds the time
expressions inside free text (the task words around them are ignored) and resolves them
against ``now``, the moment the entry was written. It returns None when the text holds
no time, or when what it holds is contradictory or outside the grammar (two different
dates, "in a few days", "Mar 99th"): a commitment is never scheduled on a guess.

Conventions (tests/test_commitment_parsing.py pins each one):

- Everything is computed on local wall-clock time in ``zone`` (zoneinfo) and then
  localized: a nonexistent local time (spring-forward gap) moves forward by the gap
  (02:30 on a 02:00->03:00 night is 03:30); an ambiguous one (fall-back) takes the first
  occurrence (fold=0).
- No time of day given: 09:00. Parts of day: morning 09:00, noon 12:00, afternoon 15:00,
  evening 18:00, night and "tonight" 20:00; "end of day"/"eod" 17:00.
- A date that resolves to today with no explicit clock time ("today", "tonight",
  "end of the month" on its last day) means that time or now, whichever is later.
- A clock time with no day ("at 5pm") is today if still ahead, else tomorrow.
- A bare weekday, "on/this/coming/next <weekday>": the first such day strictly after
  today ("next Friday" said on a Wednesday is two days later; "Friday" said on a Friday
  is a week later). "<weekday> next week" / "next week <weekday>": that day of the
  following Monday-to-Sunday week.
- "next week" = Monday 09:00 of next week; "next month" = the 1st of next month 09:00;
  "next year" = January 1st 09:00.
- "end of (the) month"/"eom" = its last day (09:00); "end of (the) year"/"eoy" =
  December 31st; "end of (the) week"/"eow" = Friday (next week's from Saturday on).
- "in N minutes/hours" adds elapsed time to ``now``; "in N days/weeks/months/years"
  moves the calendar date and keeps now's wall-clock time of day (so "in 5 days" across
  a DST change still fires at the same local time), unless a time is also given.
- An hour without am/pm: 1-6 mean the afternoon (13-18: "at 4" is 16:00, as calendars
  read it), 7-12 and zero-padded or 24-hour values ("08:30", "17:00") are as written;
  "morning/afternoon/evening" next to the hour decides instead.
- A month and day without a year: this year's if not before today, else next year's.
  "on the 27th": this month's if not before today, else the next month that has one.
  "Tuesday the 8th": the next date that is both.
- A clock time followed by "UTC"/"GMT" is read in UTC (the day too); one followed by
  another zone abbreviation ("5pm PST") is refused: abbreviations are ambiguous.
- Dotted numeric dates are day-first ("8.5.2018", "23.04.2018", "8.5."); slashed ones
  ("5/8", "12/03/2026") go to dateparser, which reads English month-first; ISO dates
  ("2026-12-03") are ours, ISO timestamps with an offset go to dateutil.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Final, TypeVar
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta

_T = TypeVar("_T")

DEFAULT_TIME: Final = time(9, 0)
END_OF_DAY: Final = time(17, 0)
PARTS_OF_DAY: Final[dict[str, time]] = {
    "morning": time(9, 0),
    "noon": time(12, 0),
    "midday": time(12, 0),
    "afternoon": time(15, 0),
    "evening": time(18, 0),
    "night": time(20, 0),
}
_AFTERNOON_PODS: Final = frozenset({"afternoon", "evening", "night"})


def _table(*rows: str, start: int = 0) -> dict[str, int]:
    """{spelling: value} from rows of space-separated spellings, one value per row."""
    return {name: value for value, row in enumerate(rows, start) for name in row.split()}


def _alternation(names: Iterable[str]) -> str:
    # Longest first, so "tues" wins over "tue" and "an" over "a".
    return "|".join(sorted(names, key=len, reverse=True))


WEEKDAYS: Final = _table(
    "monday mon",
    "tuesday tue tues",
    "wednesday wed weds",
    "thursday thu thur thurs",
    "friday fri",
    "saturday sat",
    "sunday sun",
)
WEEKDAY_CODES: Final = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# Abbreviations that are also English words ("we sat down", "the sun"): accepted only
# after a keyword such as "on" or "every", with a dot, or as the whole phrase.
_WORDLIKE_WEEKDAYS: Final = frozenset({"sat", "sun", "wed"})
_FULL_WEEKDAYS: Final = [name for name in WEEKDAYS if name.endswith("day")]
_SHORT_WEEKDAYS: Final = [name for name in WEEKDAYS if not name.endswith("day")]
# "tuesdays" is a plural of the full name; abbreviations take an optional dot.
WEEKDAY_RE: Final = (
    r"(?:(?:" + _alternation(_FULL_WEEKDAYS) + r")s?\b"
    r"|(?:" + _alternation(_SHORT_WEEKDAYS) + r")\b\.?)"
)

MONTHS: Final = _table(
    "january jan",
    "february feb",
    "march mar",
    "april apr",
    "may",
    "june jun",
    "july jul",
    "august aug",
    "september sept sep",
    "october oct",
    "november nov",
    "december dec",
    start=1,
)
_MONTH_RE: Final = r"(?:" + _alternation(MONTHS) + r")\.?"

NUMBER_WORDS: Final = {
    **_table("a an one", "two", "three", "four", "five", "six", "seven", start=1),
    **_table("eight", "nine", "ten", "eleven", "twelve", start=8),
    **{"fifteen": 15, "twenty": 20, "thirty": 30, "forty-five": 45, "ninety": 90},
}
_NUMBER_RE: Final = r"(?:\d{1,4}|" + _alternation(NUMBER_WORDS) + ")"
# "one" is left out of clock hours: "at one point" is not 13:00.
_HOUR_WORDS: Final = {k: v for k, v in NUMBER_WORDS.items() if 2 <= v <= 12 and len(k) > 2}
_HOUR_WORD_RE: Final = _alternation(_HOUR_WORDS)

_UNIT_SPELLINGS: Final = {
    "minutes": "minute minutes min mins",
    "hours": "hour hours hr hrs h",
    "days": "day days d",
    "weeks": "week weeks wk wks",
    "months": "month months",
    "years": "year years yr yrs",
}
_UNITS: Final = {name: unit for unit, row in _UNIT_SPELLINGS.items() for name in row.split()}
_UNIT_RE: Final = r"(?:" + _alternation(_UNITS) + r")"
_MERIDIEM_RE: Final = r"(?:am|pm|a|p)"
_ORDINALS: Final = "first second third fourth fifth sixth seventh eighth ninth tenth"
ORDINAL_WORDS: Final = {word: value for value, word in enumerate(_ORDINALS.split(), 1)}


@dataclass(frozen=True)
class ParsedTime:
    """A resolved time phrase: ``local`` is aware, in the zone the phrase was read in;
    ``has_date``/``has_time`` say whether the phrase itself fixed the calendar date and
    the time of day (false where a convention filled them in)."""

    local: datetime
    has_date: bool
    has_time: bool

    @property
    def utc(self) -> datetime:
        return self.local.astimezone(UTC)


def localize(naive: datetime, zone: ZoneInfo) -> datetime:
    """Local wall-clock time -> aware datetime in ``zone``, DST-correct.

    fold=0 maps a nonexistent time with the offset in force before the gap, so the round
    trip through UTC lands the same distance past the gap (02:30 -> 03:30), and picks
    the first of two ambiguous times.
    """
    return naive.replace(tzinfo=zone, fold=0).astimezone(UTC).astimezone(zone)


def normalize_text(text: str) -> str:
    """Lowercase, straight apostrophes, "a.m." -> "am", single spaces."""
    lowered = text.casefold().replace("\u2019", "'").replace("\u2018", "'")
    lowered = re.sub(r"\b([ap])\.\s?m\b\.?", r"\1m", lowered)
    return re.sub(r"\s+", " ", lowered).strip()


def number_value(token: str) -> int | None:
    token = token.strip()
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token)


def weekday_index(token: str) -> int | None:
    token = token.strip().rstrip(".")
    if token.endswith("days") and token[:-1] in WEEKDAYS:
        token = token[:-1]
    return WEEKDAYS.get(token)


def ordinal_value(token: str) -> int | None:
    token = token.strip()
    if token in ORDINAL_WORDS:
        return ORDINAL_WORDS[token]
    digits = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", token)
    return int(digits.group(1)) if digits else None


# ---------------------------------------------------------------------------------------
# Scanning: find the pieces, each consuming its span so later patterns cannot reuse it.


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
            if part_of_day in _AFTERNOON_PODS and hour < 12:
                hour += 12
        elif not self.padded and 1 <= hour <= 6:
            hour += 12
        if not (0 <= hour <= 23 and 0 <= self.minute <= 59):
            return None
        return time(hour, self.minute)


@dataclass(frozen=True)
class _Weekday:
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
    weekdays: list[_Weekday] = field(default_factory=list)
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


@_rule(r"\b(?:in|within|after)\s+(?:a\s+few|few|several|some|many)\s+" + _UNIT_RE + r"\b")
def _vague_relative(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.invalid = True
    return True


@_rule(r"\b(?:in|within|after)\s+half\s+an?\s+hour\b|\bhalf\s+an?\s+hour\s+from\s+now\b")
def _half_hour(match: re.Match[str], ctx: _Context) -> bool:
    ctx.scan.relatives.append(_Relative(30, "minutes"))
    return True


@_rule(
    r"\b(?:(?:in|within|after)\s+(?P<n1>a\s+couple\s+of|" + _NUMBER_RE + r")\s*(?P<u1>"
    r"" + _UNIT_RE + r")\b(?:\s+from\s+now)?"
    r"|(?P<n2>a\s+couple\s+of|" + _NUMBER_RE + r")\s*(?P<u2>" + _UNIT_RE + r")\s+from\s+now)"
)
def _relative(match: re.Match[str], ctx: _Context) -> bool:
    amount_text = match.group("n1") or match.group("n2")
    unit_text = match.group("u1") or match.group("u2")
    amount = 2 if amount_text.startswith("a couple") else number_value(amount_text)
    if amount is None or amount > 1000:
        ctx.scan.invalid = True
        return True
    ctx.scan.relatives.append(_Relative(amount, _UNITS[unit_text]))
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
    ctx.scan.weekdays.append(_Weekday(index, next_week=True))
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
    + _MONTH_RE
    + r")(?:\s+the)?[\s/-]*"
    + _DAY_NUMBER_RE
    + r"(?![\d:.]\d)\b"
    + _YEAR_RE
)
def _month_then_day(match: re.Match[str], ctx: _Context) -> bool:
    month = MONTHS[match.group("month").rstrip(".")]
    return _month_day(ctx, month, int(match.group("day")), _year(match.group("year")))


@_rule(
    r"\b" + _DAY_NUMBER_RE + r"(?:\s+of)?[\s/.-]*(?P<month>" + _MONTH_RE + r")(?![a-z])" + _YEAR_RE
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
        ctx.scan.weekdays.append(_Weekday(index, next_week=False))
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
    if token in _WORDLIKE_WEEKDAYS and match.group(0) == token:
        before = ctx.text[: match.start()].rstrip()
        previous = before.rsplit(" ", 1)[-1] if before else ""
        whole = token == ctx.text
        if not (whole or previous in _WEEKDAY_KEYWORDS or before.endswith(",")):
            return False
    ctx.scan.weekdays.append(_Weekday(index, next_week=False))
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


@_rule(r"\b(?P<h>\d{1,2})[:.](?P<m>\d{2})\s?(?P<mer>" + _MERIDIEM_RE + r")\b")
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
    r"\b(?:a\s+)?quarter\s+(?P<dir>past|after|to|before)\s+(?P<h>\d{1,2}|" + _HOUR_WORD_RE + r")\b"
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


@_rule(r"\bhalf\s+past\s+(?P<h>\d{1,2}|" + _HOUR_WORD_RE + r")\b")
def _half_past(match: re.Match[str], ctx: _Context) -> bool:
    hour = number_value(match.group("h"))
    if hour is None or not 1 <= hour <= 12:
        return False
    ctx.scan.clocks.append(Clock(hour, 30, None, padded=False))
    return True


@_rule(
    r"\b(?:(?:at|@|around|about|by)\s+(?:around\s+|about\s+)?)?"
    r"(?P<h>\d{1,2}|" + _HOUR_WORD_RE + r")\s*o'?\s?clock\b"
)
def _oclock(match: re.Match[str], ctx: _Context) -> bool:
    hour = number_value(match.group("h"))
    if hour is None:
        return False
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=False))
    return True


@_rule(
    r"\b(?:at|@|around|about)\s+(?:around\s+|about\s+)?(?P<h>\d{1,2}|" + _HOUR_WORD_RE + r")"
    r"(?![\d:.%/]|\s*(?:st|nd|rd|th|" + _UNIT_RE + r"|people|percent)\b)"
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


# ---------------------------------------------------------------------------------------
# Resolution


class _Conflict(Exception):
    """Two pieces of a phrase disagree (two dates, two clock times): no guess."""


def _single(values: Iterable[_T]) -> _T | None:
    distinct = set(values)
    if len(distinct) > 1:
        raise _Conflict
    return next(iter(distinct), None)


def _weekday_date(today: date, weekday: _Weekday) -> date:
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
