"""The vocabulary of time phrases and the small helpers every stage shares.

Owns the word tables (weekdays, months, numbers, units, ordinals) and the regex
fragments built from them, the default times of day, the ``ParsedTime`` result, and
helpers that need no grammar: ``localize``, ``normalize_text``, ``number_value``,
``weekday_index``, ``ordinal_value``. Imports neither ``time_grammar`` nor
``time_resolution``.

Conventions (tests/memory/test_commitment_parsing.py pins each one):

- Everything is computed on local wall-clock time in ``zone`` (zoneinfo) and then
  localized: a nonexistent local time (spring-forward gap) moves forward by the gap
  (02:30 on a 02:00->03:00 night is 03:30); an ambiguous one (fall-back) takes the first
  occurrence (fold=0).
- No time of day given: 09:00. Parts of day: morning 09:00, noon 12:00, afternoon 15:00,
  evening 18:00, night and "tonight" 20:00; "end of day"/"eod" 17:00.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Final
from zoneinfo import ZoneInfo

from memory.commitment_parsing.text_map import normalize_mapped

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
AFTERNOON_PODS: Final = frozenset({"afternoon", "evening", "night"})


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
WORDLIKE_WEEKDAYS: Final = frozenset({"sat", "sun", "wed"})
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
MONTH_RE: Final = r"(?:" + _alternation(MONTHS) + r")\.?"

_UNITS_WORDS: Final = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS: Final = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS: Final = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
NUMBER_WORDS: Final = {
    **_table("a an one", "two", "three", "four", "five", "six", "seven", start=1),
    **_table("eight", "nine", start=8),
    **{word: value for value, word in enumerate(_TEENS.split(), 10)},
    **_TENS,
    # "twenty-five" and "twenty five": both spellings of every compound to 59.
    **{
        f"{tens}{sep}{unit}": value + index
        for tens, value in _TENS.items()
        for index, unit in enumerate(_UNITS_WORDS, 1)
        for sep in ("-", " ")
    },
    "ninety": 90,
}
NUMBER_RE: Final = r"(?:\d{1,4}|" + _alternation(NUMBER_WORDS) + ")"
# "one" is left out of clock hours: "at one point" is not 13:00.
_HOUR_WORDS: Final = {k: v for k, v in NUMBER_WORDS.items() if 2 <= v <= 12 and len(k) > 2}
HOUR_WORD_RE: Final = _alternation(_HOUR_WORDS)

_UNIT_SPELLINGS: Final = {
    "minutes": "minute minutes min mins",
    "hours": "hour hours hr hrs h",
    "days": "day days d",
    "weeks": "week weeks wk wks",
    "fortnights": "fortnight fortnights",
    "months": "month months",
    "years": "year years yr yrs",
    "decades": "decade decades",
    "centuries": "century centuries",
}
UNITS: Final = {name: unit for unit, row in _UNIT_SPELLINGS.items() for name in row.split()}
UNIT_RE: Final = r"(?:" + _alternation(UNITS) + r")"
MERIDIEM_RE: Final = r"(?:am|pm|a|p)"
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
    """Lowercase, straight apostrophes, "a.m." -> "am", single spaces
    (``text_map.normalize_mapped`` keeps the offsets)."""
    return normalize_mapped(text).text


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
