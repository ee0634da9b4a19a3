"""Recurring phrasings -> RecurringSpec, and when a recurring commitment fires next.

``parse_recurrence("every Thursday at 17:00", now=..., zone=...)`` gives
``FREQ=WEEKLY;BYDAY=TH;BYHOUR=17;BYMINUTE=0;BYSECOND=0`` over local wall-clock time in
``zone``. The grammar covers the common shapes: daily / every N days, weekdays,
weekends, "every (other|N) week(s) on <days>", plural days ("tuesdays and thursdays"),
"every month on the 1st", "the 4th of every other month", "every first Monday of the
month", "2nd and last Friday of each month", "every July 4th", "every fourth Thursday
in November", hourly / every N minutes, each with "at <time>" anywhere.

Conventions:

- The rule is written out in full, so the RRULE body alone says when it fires:
  BYHOUR/BYMINUTE/BYSECOND are always set for daily and longer periods (09:00 when no
  time is given; "every morning/evening" use the parts of day of time_words), and a
  bare "weekly"/"monthly"/"yearly" takes its day from when it was said (BYDAY,
  BYMONTHDAY, BYMONTH+BYMONTHDAY). INTERVAL is written only when it is not 1.
- ``dtstart`` is the start of the period the phrase was said in (that day, that
  week's Monday, the 1st of that month, January 1st, that hour, that minute) at
  00:00: with INTERVAL > 1 it fixes which weeks/days/months are "on", and it is the
  same for every moment of one period. Use ``first_occurrence(spec, said_at)`` for the
  first firing: occurrences earlier in that period are not due.
- Anything the RRULE body cannot hold, or that we do not parse, gives None rather than
  a rule that drops part of the phrase: counts ("twice", "3x", "for 5 times"), bounds
  ("until", "starting", "for the next 3 weeks"), exceptions ("except"), positions
  ("instance"), week numbers, seconds, two different recurrences in one phrase, or a
  recurrence next to a one-off date ("every week on the 4th day").
- "at 17:00 UTC"/"GMT" makes the rule run in UTC; a clock time next to another zone
  abbreviation ("5pm PST") gives None.
- Occurrences are generated on naive local wall-clock times and then localized with
  ``time_words.localize`` (a time in a spring-forward gap moves forward by the gap,
  an ambiguous one takes its first occurrence): 17:00 stays 17:00 local across DST.
  Hourly and minutely rules follow the wall clock too, so they skip the repeated hour
  of a fall-back night.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta
from dateutil.rrule import rrule, rrulestr

from memory.commitments.time_grammar import scan
from memory.commitments.time_words import (
    DEFAULT_TIME,
    MONTHS,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    PARTS_OF_DAY,
    WEEKDAY_CODES,
    WEEKDAY_RE,
    localize,
    normalize_text,
    ordinal_value,
    weekday_index,
)
from schemas.commitment_spec import RecurringSpec

# How far a localized occurrence can move past its wall-clock time (the largest DST
# gaps are 1-2 hours); the search starts this much before ``after`` to catch one.
_MAX_GAP: Final = timedelta(hours=3)
_MAX_STEPS: Final = 20_000

# ---------------------------------------------------------------------------------------
# Vocabulary

_NUMBER_WORD_RE: Final = "|".join(
    sorted((w for w in NUMBER_WORDS if len(w) > 2), key=len, reverse=True)
)
_ORDINAL_WORD_RE: Final = "|".join(ORDINAL_WORDS)
_INTERVAL_RE: Final = (
    r"(?:other|\d{1,3}(?:st|nd|rd|th)?|" + _ORDINAL_WORD_RE + "|" + _NUMBER_WORD_RE + r")"
)
# An ordinal weekday position in a month: "first", "2nd", "last", "2nd to the last".
_POSITION_RE: Final = (
    r"(?:(?:2nd|second|3rd|third)\s+to\s+(?:the\s+)?last|next\s+to\s+(?:the\s+)?last"
    r"|penultimate|last|first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)"
)
_LIST_SEP: Final = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s*/\s*)"
_POSITIONS_RE: Final = _POSITION_RE + r"(?:" + _LIST_SEP + _POSITION_RE + r")*"
_POSITIONED_DAY_RE: Final = _POSITIONS_RE + r"\s+" + WEEKDAY_RE
_POSITIONED_DAYS_RE: Final = _POSITIONED_DAY_RE + r"(?:" + _LIST_SEP + _POSITIONED_DAY_RE + r")*"
_DAY_RANGE_RE: Final = WEEKDAY_RE + r"(?:\s*(?:-|\u2013|to|through|thru)\s*" + WEEKDAY_RE + r")?"
_DAYS_RE: Final = _DAY_RANGE_RE + r"(?:" + _LIST_SEP + _DAY_RANGE_RE + r")*"
_PLURAL_DAY_RE: Final = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s\b"
_PLURAL_DAYS_RE: Final = (
    _PLURAL_DAY_RE
    + r"(?:\s*(?:-|\u2013|to|through|thru)\s*"
    + WEEKDAY_RE
    + r")?(?:"
    + _LIST_SEP
    + _DAY_RANGE_RE
    + r")*"
)
# A day of the month: "4th", "1st day", "first", "last", "2nd to the last".
_MONTH_DAY_RE: Final = r"(?:" + _POSITION_RE + r"|\d{1,2}(?:st|nd|rd|th)?)"
_MONTH_DAYS_RE: Final = _MONTH_DAY_RE + r"(?:" + _LIST_SEP + _MONTH_DAY_RE + r")*"
_NUMBERED_DAYS_RE: Final = r"\d{1,2}(?:st|nd|rd|th)?(?:" + _LIST_SEP + r"\d{1,2}(?:st|nd|rd|th)?)*"
_MONTH_NAME_RE: Final = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?"
_MONTH_EDGE: Final = {"beginning": 1, "begin": 1, "start": 1, "end": -1}

# Phrasings the RRULE body cannot carry or that we do not parse: no rule, never a
# partial one. Kept narrow ("starting on/in/next ...", "instance of", "between 9 ...")
# so that task words like "starting the build" or "EC2 instances" do not trip it.
_UNSUPPORTED: Final = re.compile(
    r"\b(?:twice|thrice|except|excluding|until|till|untill|"
    r"(?:starting|beginning|start)\s+(?:on|in|from|next|tomorrow|today|this|the\s+\d|\d|"
    + _MONTH_NAME_RE
    + "|"
    + WEEKDAY_RE
    + r")|from\b.*\b(?:to|until|till|through|thru)|"
    r"for\s+(?:the\s+next\s+|up\s+to\s+)?(?:\d+|a|an|" + _NUMBER_WORD_RE + r")\s*"
    r"(?:x|times?|occurrences?|days?|weeks?|months?|years?)\b|up\s+to\s+\d|\d+\s*x|"
    r"(?:\d+|" + _NUMBER_WORD_RE + r")\s+(?:times|occurrences)|instances?\s+of|"
    r"in\s+week\s+\d|weeks?\s+\d+|biweekly|bimonthly|semi-?monthly|holidays?|"
    r"between\s+(?:\d|noon|midnight)|"
    r"(?:every|each)\s+(?:\d+\s+(?:seconds?|secs?)|seconds|secs?)\b|"
    r"(?:every|each)\s+(?:other\s+)?second\b(?!\s+(?:day|week|month|year|" + WEEKDAY_RE + r")))\b"
)

# "the weekly report", "daily standup": adjectives, not a schedule.
_DETERMINERS: Final = frozenset(
    {"the", "a", "an", "our", "my", "your", "their", "his", "her", "its", "this", "that"}
)
_SCHEDULE_NOUNS: Final = frozenset(
    {
        *("report", "reports", "standup", "stand-up", "meeting", "meetings", "sync"),
        *("review", "reviews", "update", "updates", "summary", "digest", "newsletter"),
        *("numbers", "metrics", "check-in", "call", "calls", "goal", "goals", "plan"),
        *("budget", "recap", "retro", "retrospective", "email", "emails", "invoice"),
        *("backup", "backups", "build", "builds", "job", "jobs", "limit", "rate", "rates"),
        *("cap", "quota", "active", "users", "revenue"),
    }
)
_ADVERBS: Final = re.compile(
    r"\b(?:daily|weekly|monthly|yearly|annually|nightly|hourly|everyday|fortnightly)\b"
)


# ---------------------------------------------------------------------------------------
# Rules


@dataclass(frozen=True)
class Rule:
    """The parts of a recurrence a phrase fixes, before its time of day."""

    freq: str
    interval: int = 1
    by_day: tuple[str, ...] = ()
    by_month_day: tuple[int, ...] = ()
    by_month: tuple[int, ...] = ()
    part_of_day: str | None = None


@dataclass(frozen=True)
class _Found:
    rule: Rule
    start: int
    end: int


# A maker gets the match and the local date the phrase was said (for a bare "weekly").
_Maker = Callable[[re.Match[str], date], Rule | None]
_RECOGNIZERS: list[tuple[re.Pattern[str], _Maker]] = []


def _recognizer(pattern: str) -> Callable[[_Maker], _Maker]:
    compiled = re.compile(pattern)

    def register(maker: _Maker) -> _Maker:
        _RECOGNIZERS.append((compiled, maker))
        return maker

    return register


def _interval(token: str | None) -> int | None:
    if token is None:
        return 1
    token = token.strip()
    if token == "other":
        return 2
    value = ordinal_value(token)
    if value is None:
        value = NUMBER_WORDS.get(token)
    return value if value is not None and 1 <= value <= 999 else None


def _position(token: str) -> int | None:
    token = re.sub(r"\s+", " ", token.strip())
    if token in ("last",):
        return -1
    if token in ("penultimate", "next to last", "next to the last"):
        return -2
    before_last = re.fullmatch(r"(\w+) to (?:the )?last", token)
    if before_last:
        value = ordinal_value(before_last.group(1))
        return None if value is None else -value
    return ordinal_value(token)


def _days(text: str) -> tuple[str, ...] | None:
    """BYDAY codes of a day list with ranges: "mon and wed", "saturday thru tuesday"."""
    codes: set[int] = set()
    for item in re.finditer(_DAY_RANGE_RE, text):
        names = re.findall(WEEKDAY_RE, item.group(0))
        indexes = [weekday_index(name) for name in names]
        if any(i is None for i in indexes) or not indexes:
            return None
        first, last = indexes[0], indexes[-1]
        assert first is not None and last is not None
        # A range may wrap over the weekend: "saturday through tuesday".
        span = (last - first) % 7
        codes.update((first + step) % 7 for step in range(span + 1))
    return tuple(WEEKDAY_CODES[i] for i in sorted(codes)) if codes else None


def _positioned_days(text: str) -> tuple[str, ...] | None:
    """BYDAY codes with positions: "first and third friday and second tuesday"."""
    codes: list[tuple[int, int]] = []
    for item in re.finditer(r"(" + _POSITIONS_RE + r")\s+(" + WEEKDAY_RE + r")", text):
        weekday = weekday_index(item.group(2))
        if weekday is None:
            return None
        for position_text in re.finditer(_POSITION_RE, item.group(1)):
            position = _position(position_text.group(0))
            if position is None or not -5 <= position <= 5 or position == 0:
                return None
            codes.append((weekday, position))
    if not codes:
        return None
    ordered = sorted(set(codes), key=lambda c: (c[0], c[1] < 0, abs(c[1])))
    return tuple(f"{position}{WEEKDAY_CODES[weekday]}" for weekday, position in ordered)


def _month_days(text: str) -> tuple[int, ...] | None:
    values: set[int] = set()
    for item in re.finditer(_MONTH_DAY_RE, text):
        token = item.group(0)
        numeric = re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", token)
        value = ordinal_value(token) if numeric else _position(token)
        if value is None or value == 0 or not -31 <= value <= 31:
            return None
        values.add(value)
    return tuple(sorted(values, key=lambda v: (v < 0, abs(v)))) if values else None


def _every(match: re.Match[str]) -> bool:
    return bool(re.search(r"\b(?:every|each|monthly)\b", match.group(0)))


# Priority order: the most specific shapes first, so "every first Monday of the month"
# is not read as "every ... Monday".


@_recognizer(
    r"\b(?:(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?years?\s+on\s+the"
    r"|(?:yearly|annually|once\s+(?:a|per)\s+year)\s+on\s+the|every|each)\s+"
    r"(?P<days>" + _POSITIONED_DAY_RE + r")\s+(?:in|of)\s+(?P<month>" + _MONTH_NAME_RE + ")"
)
def _yearly_positioned(match: re.Match[str], said: date) -> Rule | None:
    interval, days = _interval(match.group("iv")), _positioned_days(match.group("days"))
    month = MONTHS[match.group("month").rstrip(".")]
    if interval is None or days is None:
        return None
    return Rule("YEARLY", interval, by_day=days, by_month=(month,))


@_recognizer(
    r"\b(?:(?:every|each|on\s+the|the)\s+)?(?P<days>" + _POSITIONED_DAYS_RE + r")\s+"
    r"(?:of|in)\s+(?:every|each|the|a)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?months?\b"
    r"|\b(?:monthly|(?:every|each)\s+(?:(?P<iv2>" + _INTERVAL_RE + r")\s+)?months?)\s+"
    r"on\s+the\s+(?P<days2>" + _POSITIONED_DAYS_RE + ")"
)
def _monthly_positioned(match: re.Match[str], said: date) -> Rule | None:
    if not _every(match):  # "the first Monday of the month" is one day, not a series
        return None
    interval = _interval(match.group("iv") or match.group("iv2"))
    days = _positioned_days(match.group("days") or match.group("days2"))
    if interval is None or days is None:
        return None
    return Rule("MONTHLY", interval, by_day=days)


@_recognizer(
    r"\bevery\s+(?P<days>" + _NUMBERED_DAYS_RE + r")\s+of\s+(?P<month>" + _MONTH_NAME_RE + ")"
    r"|\b(?:(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?years?\s+on"
    r"|(?:yearly|annually|once\s+(?:a|per)\s+year)\s+on|every|each)\s+"
    r"(?P<month2>" + _MONTH_NAME_RE + r")\s+(?P<days2>" + _NUMBERED_DAYS_RE + r")\b"
)
def _yearly_dates(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    month = MONTHS[(match.group("month") or match.group("month2")).rstrip(".")]
    days = _month_days(match.group("days") or match.group("days2"))
    if interval is None or days is None or any(d < 0 for d in days):
        return None
    return Rule("YEARLY", interval, by_month_day=days, by_month=(month,))


@_recognizer(
    r"\b(?:(?:every|each|on\s+the|the)\s+)?(?P<days>" + _MONTH_DAYS_RE + r")(?:\s+days?)?"
    r"\s+of\s+(?:every|each|the)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?months?\b"
    r"|\b(?:monthly|(?:every|each)\s+(?:(?P<iv2>" + _INTERVAL_RE + r")\s+)?months?"
    r"|once\s+(?:a|per)\s+month)\s+on\s+(?:the\s+)?(?:day\s+)?"
    r"(?P<days2>" + _MONTH_DAYS_RE + r")(?:\s+days?)?\b"
)
def _monthly_dates(match: re.Match[str], said: date) -> Rule | None:
    if not _every(match) and "once" not in match.group(0):
        return None
    interval = _interval(match.group("iv") or match.group("iv2"))
    days = _month_days(match.group("days") or match.group("days2"))
    if interval is None or days is None:
        return None
    return Rule("MONTHLY", interval, by_month_day=days)


@_recognizer(
    r"\b(?:(?:the\s+)?(?P<edge>beginning|begin|start|end)\s+of\s+(?:every|each)\s+"
    r"(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?months?"
    r"|(?:monthly|(?:every|each)\s+(?:(?P<iv2>" + _INTERVAL_RE + r")\s+)?months?)\s+at\s+"
    r"the\s+(?P<edge2>beginning|begin|start|end))\b"
)
def _monthly_edge(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv") or match.group("iv2"))
    if interval is None:
        return None
    edge = _MONTH_EDGE[match.group("edge") or match.group("edge2")]
    return Rule("MONTHLY", interval, by_month_day=(edge,))


@_recognizer(
    r"\b(?:monthly|(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?months?)\s+on\s+"
    r"(?P<days>" + _DAYS_RE + ")"
)
def _monthly_weekdays(match: re.Match[str], said: date) -> Rule | None:
    interval, days = _interval(match.group("iv")), _days(match.group("days"))
    if interval is None or days is None:
        return None
    return Rule("MONTHLY", interval, by_day=days)


@_recognizer(
    r"\b(?:(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?"
    r"(?:weeks?\s+on\s+(?:the\s+)?)?weekends?|(?:on\s+)?(?:the\s+)?weekends)\b"
)
def _weekends(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    return None if interval is None else Rule("WEEKLY", interval, by_day=("SA", "SU"))


@_recognizer(
    r"\b(?:(?:every|each)\s+(?:week\s?day|work\s?day|business\s+day|working\s+day)\b"
    r"|(?:on\s+)?(?:week\s?days|work\s?days|business\s+days|working\s+days)\b)"
)
def _weekdays(match: re.Match[str], said: date) -> Rule | None:
    return Rule("WEEKLY", 1, by_day=("MO", "TU", "WE", "TH", "FR"))


@_recognizer(
    r"\b(?:(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?(?:weeks?\s+)?"
    r"|(?:weekly|once\s+(?:a|per)\s+week)\s+)(?:on\s+)?(?:the\s+)?(?P<days>" + _DAYS_RE + ")"
    r"|\b(?:on\s+)?(?P<plural>" + _PLURAL_DAYS_RE + ")"
)
def _weekly_days(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    days = _days(match.group("days") or match.group("plural"))
    if interval is None or days is None:
        return None
    return Rule("WEEKLY", interval, by_day=days)


@_recognizer(
    r"\b(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?days?\b"
    r"|\b(?P<adverb>daily|everyday|nightly)\b|\bevery\s+single\s+day\b"
    r"|\bonce\s+(?:a|per)\s+day\b|\b(?:every|each)\s+(?P<pod>morning|afternoon|evening|night)\b"
)
def _daily(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    if interval is None:
        return None
    pod = match.group("pod") or ("night" if match.group("adverb") == "nightly" else None)
    return Rule("DAILY", interval, part_of_day=pod)


@_recognizer(
    r"\b(?:hourly|(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?(?:hours?|hrs?))\b"
)
def _hourly(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    return None if interval is None else Rule("HOURLY", interval)


@_recognizer(r"\b(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?(?:minutes?|mins?)\b")
def _minutely(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    return None if interval is None else Rule("MINUTELY", interval)


@_recognizer(
    r"\b(?:weekly|once\s+(?:a|per)\s+week|(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?"
    r"weeks?|(?P<fortnight>fortnightly|every\s+fortnight))\b"
)
def _weekly(match: re.Match[str], said: date) -> Rule | None:
    interval = 2 if match.group("fortnight") else _interval(match.group("iv"))
    if interval is None:
        return None
    return Rule("WEEKLY", interval, by_day=(WEEKDAY_CODES[said.weekday()],))


@_recognizer(
    r"\b(?:monthly|once\s+(?:a|per)\s+month|(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?"
    r"months?)\b"
)
def _monthly(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    if interval is None:
        return None
    return Rule("MONTHLY", interval, by_month_day=(said.day,))


@_recognizer(
    r"\b(?:yearly|annually|once\s+(?:a|per)\s+year|(?:every|each)\s+(?:(?P<iv>"
    + _INTERVAL_RE
    + r")\s+)?years?)\b"
)
def _yearly(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    if interval is None:
        return None
    return Rule("YEARLY", interval, by_month_day=(said.day,), by_month=(said.month,))


def _adjective(text: str, match: re.Match[str]) -> bool:
    """ "the weekly report": a frequency word used as an adjective, not a schedule."""
    word = _ADVERBS.fullmatch(match.group(0).strip())
    if word is None:
        return False
    before = text[: match.start()].split()
    after = text[match.end() :].split()
    previous = before[-1] if before else ""
    following = re.sub(r"[^\w-]", "", after[0]) if after else ""
    return previous in _DETERMINERS or following in _SCHEDULE_NOUNS


def _find_all(text: str, said: date) -> Iterator[_Found]:
    for pattern, maker in _RECOGNIZERS:
        for match in pattern.finditer(text):
            if _adjective(text, match):
                continue
            rule = maker(match, said)
            if rule is not None:
                yield _Found(rule, match.start(), match.end())


RECURRENCE_SIGNAL: Final = re.compile(
    r"\b(?:(?:every|each)\s+(?:other|\d+|single|business|working|fortnight|"
    + _ORDINAL_WORD_RE
    + "|"
    + _NUMBER_WORD_RE
    + r"|last|days?|weeks?|week\s?days?|weekends?|months?|years?|hours?|hrs?|minutes?|mins?"
    r"|seconds?|secs?|morning|afternoon|evening|night|"
    + WEEKDAY_RE
    + r")|daily|weekly|monthly|yearly|annually|hourly|nightly|fortnightly|biweekly|bimonthly"
    r"|everyday|weekdays|weekends|once\s+(?:a|per|every)\s+\w+|twice\s+(?:a|per|every)\s+\w+"
    r"|\w+\s+times\s+(?:a|per)\s+\w+|" + _PLURAL_DAY_RE + r")"
)


def has_recurrence_signal(text: str) -> bool:
    """Does ``text`` (normalized) say something repeats? Then it must parse as a
    recurrence or not at all: "every Thursday" is never read as one Thursday."""
    return any(not _adjective(text, match) for match in RECURRENCE_SIGNAL.finditer(text))


# A day number left over once the recurrence is read: part of the schedule we did not
# parse (a day of the year, a week day number), so no rule rather than a partial one.
_STRAY_DAY: Final = re.compile(r"\b(?:\d{1,3}(?:st|nd|rd|th)|day\s+\d{1,3})\b")
_POD_AFTER: Final = re.compile(r"\s*(morning|afternoon|evening|night)s?\b")


def _times(
    rule: Rule, text: str, span: _Found, now_local: datetime
) -> tuple[list[time], bool] | None:
    """(times of day, whether the phrase gave any); several only when they share the
    minute ("at 9am and 5pm"); None when the rest of the phrase does not fit."""
    remaining = text[: span.start] + " " * (span.end - span.start) + text[span.end :]
    found = scan(remaining, now_local=now_local)
    if found.dates or found.weekdays or found.relatives or found.exact or found.invalid:
        return None  # "every week on the 4th day", "every Monday in 5 days"
    if _STRAY_DAY.search(remaining):
        return None  # "31st of every year": a day we would otherwise drop
    pods = set(found.parts_of_day)
    after = _POD_AFTER.match(text, span.end)  # "every Monday morning"
    if after:
        pods.add(after.group(1))
    if rule.part_of_day:
        pods.add(rule.part_of_day)
    soft = set(found.soft_times)
    if len(pods) > 1 or len(soft) > 1:
        return None
    pod = next(iter(pods), None)
    clocks = {clock.resolve(pod) for clock in found.clocks}
    if None in clocks:
        return None
    times = sorted(c for c in clocks if c is not None)
    said = bool(times or pod or soft)
    if not times:
        times = [PARTS_OF_DAY[pod]] if pod else sorted(soft) or [DEFAULT_TIME]
    if len({t.minute for t in times}) > 1:
        return None
    return times, said


def build_rrule(rule: Rule, times: list[time]) -> str:
    """The canonical RRULE body: fixed part order, sorted values, INTERVAL only if > 1."""
    parts = [f"FREQ={rule.freq}"]
    if rule.interval != 1:
        parts.append(f"INTERVAL={rule.interval}")
    if rule.by_month:
        parts.append("BYMONTH=" + ",".join(map(str, sorted(rule.by_month))))
    if rule.by_month_day:
        parts.append("BYMONTHDAY=" + ",".join(map(str, rule.by_month_day)))
    if rule.by_day:
        parts.append("BYDAY=" + ",".join(rule.by_day))
    if rule.freq in ("HOURLY", "MINUTELY"):
        parts.extend(["BYMINUTE=0", "BYSECOND=0"] if rule.freq == "HOURLY" else ["BYSECOND=0"])
    else:
        parts.append("BYHOUR=" + ",".join(str(t.hour) for t in times))
        parts.extend([f"BYMINUTE={times[0].minute}", "BYSECOND=0"])
    return ";".join(parts)


def period_start(freq: str, local: datetime) -> datetime:
    """Naive start of the period ``local`` falls in: the anchor of INTERVAL > 1."""
    naive = local.replace(tzinfo=None, second=0, microsecond=0)
    if freq == "MINUTELY":
        return naive
    if freq == "HOURLY":
        return naive.replace(minute=0)
    day = datetime.combine(naive.date(), time())
    if freq == "WEEKLY":
        return day - timedelta(days=day.weekday())
    if freq == "MONTHLY":
        return day.replace(day=1)
    if freq == "YEARLY":
        return day.replace(month=1, day=1)
    return day


def parse_recurrence(phrase: str, *, now: datetime, zone: ZoneInfo) -> RecurringSpec | None:
    """The recurrence ``phrase`` describes, or None when it describes none we support."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    text = normalize_text(phrase)
    if not text or _UNSUPPORTED.search(text):
        return None
    whole = scan(text, now_local=now.astimezone(zone).replace(tzinfo=None))
    if whole.clocks and whole.other_zone_said:
        return None  # "every day at 5pm PST": an abbreviation we do not map
    if whole.clocks and whole.utc_said:
        zone = ZoneInfo("UTC")  # "every day at 17:00 UTC": the rule runs in UTC
    now_local = now.astimezone(zone)
    found = list(_find_all(text, now_local.date()))
    if not found:
        return None
    primary = found[0]
    # A second, separate recurrence ("every Monday and every Friday") is not dropped.
    if any(f.end <= primary.start or f.start >= primary.end for f in found[1:]):
        return None
    times = _times(primary.rule, text, primary, now_local.replace(tzinfo=None))
    if times is None:
        return None
    if primary.rule.freq in ("HOURLY", "MINUTELY") and times[1]:
        return None  # "every hour at 9", "hourly in the morning": not supported
    return RecurringSpec(
        rrule=build_rrule(primary.rule, times[0]),
        dtstart=period_start(primary.rule.freq, now_local),
        time_zone=zone.key or "UTC",
    )


# ---------------------------------------------------------------------------------------
# Occurrences


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
