"""The tenant's parsing conventions: how to settle what English leaves ambiguous.

``ParsingConventions`` is the one setting object the grammar reads; every reading it
settles is recorded as a short, content-free code on the result (``Inferred.conventions``),
listed in docs/time-grammar.md. Rules (each refuses rather than guesses when the setting
does not settle a phrase):

- ``date_order``: the order of an all-numeric date with slashes or dashes ("3/4/2027",
  "03-04-27"). A date only one order can read ("31/10/2027") takes that order; one that
  two orders read differently takes the setting's, and a year-first date needs a 4-digit
  year. Dotted dates ("3.4.2027") are always day-first (how every locale that writes them
  reads them).
- ``two_digit_year_window``: a two-digit year ("'27", "10/31/74") is the year ending in
  those digits nearest the reference year, and only when that year is at most this many
  years away; otherwise the phrase is unparsable. A 20-year window holds at most one
  candidate, so nothing is silently picked between 1974 and 2074.
- ``zone_abbreviations``: the allow-list of zone abbreviations a clock time may carry
  ("3pm EST"), each to an IANA zone or a fixed offset ("UTC", "Etc/GMT+5"); any other
  zone-like word after a time is a leftover word. The default holds only UTC, GMT and Z,
  the abbreviations that mean one thing everywhere.
- ``next_weekday``: "next Friday" said on a Wednesday is either the coming Friday (two
  days later) or the Friday of next week, and English speakers split on it (ctparse's
  corpus reads the second, this project used to read the first). The two readings
  differ only when the weekday is still ahead in the current week; then
  ``"refuse-when-ambiguous"`` (the default) makes the phrase unparsable, ``"coming"`` or
  ``"following-week"`` settle it for a tenant who says which. "next Monday" said on a
  Wednesday, or "next Friday" said on a Saturday, is the same day under both readings
  and always read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, get_args
from zoneinfo import ZoneInfo

from schemas.commitments import DateOrder, NextWeekday

DEFAULT_ZONE_ABBREVIATIONS: Final[tuple[tuple[str, str], ...]] = (
    ("utc", "UTC"),
    ("gmt", "UTC"),
    ("z", "UTC"),
)


@dataclass(frozen=True)
class ParsingConventions:
    """A tenant's settings for ambiguous phrases (see the module docstring)."""

    date_order: DateOrder = "MDY"
    two_digit_year_window: int = 20
    # (lowercase abbreviation, IANA zone name) pairs: a tuple keeps the dataclass hashable.
    zone_abbreviations: tuple[tuple[str, str], ...] = DEFAULT_ZONE_ABBREVIATIONS
    next_weekday: NextWeekday = "refuse-when-ambiguous"

    def __post_init__(self) -> None:
        if self.date_order not in get_args(DateOrder):
            raise ValueError("date_order must be MDY, DMY or YMD")
        if not 0 <= self.two_digit_year_window <= 49:
            raise ValueError("two_digit_year_window must be within 0..49")
        for abbreviation, zone in self.zone_abbreviations:
            if not abbreviation.isalpha() or abbreviation != abbreviation.lower():
                raise ValueError("zone abbreviations must be lowercase letters")
            try:
                ZoneInfo(zone)
            except (KeyError, ValueError) as error:
                raise ValueError("zone_abbreviations must map to IANA zone names") from error
        if self.next_weekday not in get_args(NextWeekday):
            raise ValueError("next_weekday must be coming, following-week or refuse-when-ambiguous")

    def zone_for(self, abbreviation: str) -> ZoneInfo | None:
        """The zone an allowed abbreviation names, or None when it is not allowed."""
        for known, zone in self.zone_abbreviations:
            if known == abbreviation:
                return ZoneInfo(zone)
        return None


DEFAULT_CONVENTIONS: Final = ParsingConventions()
