"""The recurrence recognizers: the phrase shapes that say something repeats, each
read into a ``Rule`` (frequency, interval, days, months) before its time of day.

``find_all(text, said)`` yields every shape found in a normalized text, most specific
first ("every first Monday of the month" before "every ... Monday"), skipping frequency
words used as adjectives ("the weekly report"). ``recurrence_phrases`` picks the one a
phrase means, adds its time of day and writes the RRULE.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Final

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_words import (
    MONTHS,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    WEEKDAY_CODES,
    WEEKDAY_RE,
    ordinal_value,
    weekday_index,
)

# ---------------------------------------------------------------------------------------
# Vocabulary

NUMBER_WORD_RE: Final = "|".join(
    sorted((w for w in NUMBER_WORDS if len(w) > 2), key=len, reverse=True)
)
ORDINAL_WORD_RE: Final = "|".join(ORDINAL_WORDS)
_INTERVAL_RE: Final = (
    r"(?:other|\d{1,3}(?:st|nd|rd|th)?|" + ORDINAL_WORD_RE + "|" + NUMBER_WORD_RE + r")"
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
PLURAL_DAY_RE: Final = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s\b"
_PLURAL_DAYS_RE: Final = (
    PLURAL_DAY_RE
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
MONTH_NAME_RE: Final = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?"
_MONTH_EDGE: Final = {"beginning": 1, "begin": 1, "start": 1, "end": -1}

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
    implied: tuple[str, ...] = ()  # convention codes: a day taken from when it was said


@dataclass(frozen=True)
class Found:
    """A rule and the span of the text it was read from."""

    rule: Rule
    start: int
    end: int


# A maker gets the match and the local date the phrase was said (for a bare "weekly").
_Maker = Callable[[re.Match[str], date], Rule | None]
_RECOGNIZERS: PatternRegistry[_Maker] = PatternRegistry()
_recognizer = _RECOGNIZERS.register


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
    r"(?P<days>" + _POSITIONED_DAY_RE + r")\s+(?:in|of)\s+(?P<month>" + MONTH_NAME_RE + ")"
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
    r"\bevery\s+(?P<days>" + _NUMBERED_DAYS_RE + r")\s+of\s+(?P<month>" + MONTH_NAME_RE + ")"
    r"|\b(?:(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?years?\s+on"
    r"|(?:yearly|annually|once\s+(?:a|per)\s+year)\s+on|every|each)\s+"
    r"(?P<month2>" + MONTH_NAME_RE + r")\s+(?P<days2>" + _NUMBERED_DAYS_RE + r")\b"
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
    day = WEEKDAY_CODES[said.weekday()]
    return Rule("WEEKLY", interval, by_day=(day,), implied=("weekly-on-said-weekday",))


@_recognizer(
    r"\b(?:monthly|once\s+(?:a|per)\s+month|(?:every|each)\s+(?:(?P<iv>" + _INTERVAL_RE + r")\s+)?"
    r"months?)\b"
)
def _monthly(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    if interval is None:
        return None
    return Rule("MONTHLY", interval, by_month_day=(said.day,), implied=("monthly-on-said-day",))


@_recognizer(
    r"\b(?:yearly|annually|once\s+(?:a|per)\s+year|(?:every|each)\s+(?:(?P<iv>"
    + _INTERVAL_RE
    + r")\s+)?years?)\b"
)
def _yearly(match: re.Match[str], said: date) -> Rule | None:
    interval = _interval(match.group("iv"))
    if interval is None:
        return None
    days, months, implied = (said.day,), (said.month,), ("yearly-on-said-date",)
    return Rule("YEARLY", interval, by_month_day=days, by_month=months, implied=implied)


def is_adjective(text: str, match: re.Match[str]) -> bool:
    """ "the weekly report": a frequency word used as an adjective, not a schedule."""
    word = _ADVERBS.fullmatch(match.group(0).strip())
    if word is None:
        return False
    before = text[: match.start()].split()
    after = text[match.end() :].split()
    previous = before[-1] if before else ""
    following = re.sub(r"[^\w-]", "", after[0]) if after else ""
    return previous in _DETERMINERS or following in _SCHEDULE_NOUNS


def find_all(text: str, said: date) -> Iterator[Found]:
    """Every recurrence shape in ``text`` (normalized), in priority order; ``said`` is
    the local date the phrase was said (a bare "weekly" takes its weekday)."""
    for pattern, maker in _RECOGNIZERS:
        for match in pattern.finditer(text):
            if is_adjective(text, match):
                continue
            rule = maker(match, said)
            if rule is not None:
                yield Found(rule, match.start(), match.end())
