"""The pieces a time scan finds, and the context its rules share.

``Scan`` is what a text says about time before resolution: dates, weekdays, clock
times (``Clock``), parts of day, relative offsets (``Relative``), exact instants and
flags. ``ScanContext`` is what every scanning rule of ``time_grammar`` and
``time_clocks`` gets with its match: the text, today, the naive local now, the ``Scan``
being filled, and which characters earlier rules already took.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time

from memory.commitment_parsing.time_words import AFTERNOON_PODS


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
class Relative:
    amount: int
    unit: str  # minutes, hours, days, weeks, months, years


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
    utc_said: bool = False  # "at 17:00 UTC": the clock is UTC, not the entry's zone
    other_zone_said: bool = False  # "at 5pm PST": a zone we do not map (abbreviations clash)
    leftover: str = ""  # the text no piece claimed

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

    def free(self, match: re.Match[str]) -> bool:
        return not any(self.taken[match.start() : match.end()])

    def take(self, match: re.Match[str]) -> None:
        self.taken[match.start() : match.end()] = b"\x01" * (match.end() - match.start())


# A scanning rule: given its match and the context, records what it found and says
# whether it consumed the match (False leaves the span to later rules).
Handler = Callable[[re.Match[str], ScanContext], bool]
