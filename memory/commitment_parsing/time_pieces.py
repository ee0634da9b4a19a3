"""The pieces a time scan finds, and the context its rules share.

``Scan`` is what a text says about time before resolution: dates, weekdays, clock
times (``Clock``), parts of day, relative offsets (``Relative``), exact instants and
flags. ``ScanContext`` is what every scanning rule of ``time_grammar``, ``time_numeric``,
``time_positions``, ``time_clocks`` and ``time_spoken`` gets with its match: the text,
today, the naive local now, the tenant's ``ParsingConventions``, the ``Scan`` being
filled, and which characters earlier rules already took.

A rule that settles an ambiguity by a convention appends its code to
``Scan.conventions``; one that refuses sets ``Scan.refusal`` to a stable reason code
(both listed in docs/time-grammar.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from memory.commitment_parsing.conventions import DEFAULT_CONVENTIONS, ParsingConventions
from memory.commitment_parsing.time_words import AFTERNOON_PODS

# The hours a part of day can qualify ("8 this evening" is 20:00, "3 in the morning"
# 03:00); a clock outside its part's range is contradictory or ambiguous, so refused.
_POD_HOURS = {
    "morning": (0, 11),
    "afternoon": (12, 18),
    "evening": (17, 23),
    "night": (17, 23),  # "tonight at 6" is 18:00
    "noon": (12, 12),
    "midday": (12, 12),
}


@dataclass(frozen=True)
class Clock:
    hour: int
    minute: int
    meridiem: str | None  # "am", "pm" or None when not said
    padded: bool  # "08:30", "17:00": written as a 24-hour clock
    second: int = 0  # "12:00:05", "09:15:01.002": kept, so the instant is the one written
    microsecond: int = 0

    def resolve(self, part_of_day: str | None) -> time | None:
        hour = self.hour
        if self.meridiem == "am":
            if hour > 12:
                return None  # "13am"
            hour = 0 if hour == 12 else hour
        elif self.meridiem == "pm":
            # "20pm" is 20:00: the suffix is redundant, not an error.
            hour = hour if hour >= 12 else hour + 12
        elif part_of_day is not None:
            if part_of_day in AFTERNOON_PODS and hour < 12:
                hour += 12
        elif not self.padded and 1 <= hour <= 6:
            hour += 12
        if part_of_day is not None:
            low, high = _POD_HOURS.get(part_of_day, (0, 23))
            if not low <= hour <= high:
                return None  # "12 in the morning", "8am tonight": which one? refused
        if not (0 <= hour <= 23 and 0 <= self.minute <= 59 and 0 <= self.second <= 59):
            return None
        return time(hour, self.minute, self.second, self.microsecond)

    def convention(self, part_of_day: str | None) -> str | None:
        """The code of the convention ``resolve`` applied, if any."""
        if self.meridiem is None and part_of_day is None and not self.padded:
            if 1 <= self.hour <= 6:
                return "bare-hour-1-6-is-pm"
            if 7 <= self.hour <= 12:
                return "bare-hour-7-12-as-written"
        return None


@dataclass(frozen=True)
class Weekday:
    index: int
    next_week: bool  # "<weekday> next week": that day of the following week
    said_next: bool = False  # "next <weekday>": read by ParsingConventions.next_weekday
    weeks_later: int = 0  # "<weekday> after next": one week after the coming one


@dataclass(frozen=True)
class Relative:
    amount: int
    unit: str  # minutes, hours, days, weeks, fortnights, months, years, decades, centuries
    # Further parts of one compound offset ("in 1 year, 2 months and 3 days").
    more: tuple[tuple[int, str], ...] = ()

    def parts(self) -> tuple[tuple[int, str], ...]:
        return ((self.amount, self.unit), *self.more)


@dataclass
class Scan:
    """What a text says about time, before resolution."""

    dates: list[date] = field(default_factory=list)
    weekdays: list[Weekday] = field(default_factory=list)
    clocks: list[Clock] = field(default_factory=list)
    parts_of_day: list[str] = field(default_factory=list)
    relatives: list[Relative] = field(default_factory=list)
    exact: list[datetime] = field(default_factory=list)  # an ISO timestamp with offset
    soft_times: list[time] = field(default_factory=list)  # "end of day" and the like
    invalid: bool = False  # something time-like we refuse to guess at
    refusal: str | None = None  # a specific reason code for refusing (docs/time-grammar.md)
    zone: ZoneInfo | None = None  # "at 17:00 UTC": an allowed zone abbreviation after a time
    zone_code: str = ""  # the abbreviation said, lowercase (for the convention code)
    conventions: list[str] = field(default_factory=list)  # codes of conventions applied
    leftover: str = ""  # the text no piece claimed
    taken: bytes = b""  # 1 for each character a rule consumed (coverage.regions reads it)

    def refuse(self, reason: str) -> None:
        self.invalid = True
        self.refusal = self.refusal or reason

    def found_anything(self) -> bool:
        pieces = (self.dates, self.weekdays, self.clocks, self.parts_of_day, self.relatives)
        return self.invalid or any(pieces) or bool(self.exact or self.soft_times)


@dataclass
class ScanContext:
    text: str
    today: date
    now_local: datetime  # naive wall clock
    scan: Scan
    taken: bytearray
    settings: ParsingConventions = DEFAULT_CONVENTIONS

    def free(self, match: re.Match[str]) -> bool:
        return not any(self.taken[match.start() : match.end()])

    def take(self, match: re.Match[str]) -> None:
        self.taken[match.start() : match.end()] = b"\x01" * (match.end() - match.start())


# A scanning rule: given its match and the context, records what it found and says
# whether it consumed the match (False leaves the span to later rules).
Handler = Callable[[re.Match[str], ScanContext], bool]
