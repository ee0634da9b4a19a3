"""Scanning rules for spoken clock times: minutes before or after an hour ("a quarter past
3pm", "twenty after 3pm", "half past 3 pm", "15 to noon", "ten to five"), spelled hours
("three am", "at three thirty pm", "seven fifteen in the morning") and a bare hour
before a part of day ("8 this evening", "6 tonight").

``SPOKEN_RULES`` runs before the other clock rules of ``time_clocks`` (which would read
"3pm" alone and leave "a quarter past" over). The hour keeps its am/pm (or "noon",
"midnight"), so "15 to noon" is 11:45 and "a quarter to midnight" 23:45; without one the
hour follows ``Clock.resolve`` (1-6 afternoon; a part of day decides when there is one).
"""

from __future__ import annotations

import re
from typing import Final

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_pieces import Clock, Handler, ScanContext
from memory.commitment_parsing.time_words import NUMBER_WORDS, number_value

SPOKEN_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = SPOKEN_RULES.register

_HOUR_WORDS: Final = {word: value for word, value in NUMBER_WORDS.items() if 1 <= value <= 12}
_HOUR_WORDS.pop("a")
_HOUR_WORDS.pop("an")
_HOUR_WORD_RE: Final = "|".join(sorted(_HOUR_WORDS, key=len, reverse=True))
_MINUTE_WORDS: Final = {w: v for w, v in NUMBER_WORDS.items() if 1 <= v <= 59 and len(w) > 2}
_MINUTE_WORD_RE: Final = "|".join(sorted(_MINUTE_WORDS, key=len, reverse=True))
_HOUR_RE: Final = r"(?P<h>\d{1,2}|" + _HOUR_WORD_RE + r"|noon|midday|midnight)"
_MERIDIEM_RE: Final = r"(?:\s?(?P<mer>am|pm|a|p)\b)?"


def _hour_clock(match: re.Match[str], minute: int) -> Clock | None:
    """The clock ``minute`` minutes into the matched hour, or None when out of range."""
    hour_text = match.group("h")
    meridiem = match.group("mer")
    if hour_text in ("noon", "midday", "midnight"):
        if meridiem:
            return None
        return Clock(12 if hour_text != "midnight" else 0, minute, None, padded=True)
    hour = number_value(hour_text)
    if hour is None or not 0 <= hour <= 23 or (meridiem and not 1 <= hour <= 12):
        return None
    return Clock(hour, minute, meridiem[0] + "m" if meridiem else None, padded=hour > 12)


def _minutes(text: str) -> int | None:
    text = re.sub(r"\s+minutes?$", "", text.strip())
    if text in ("quarter", "a quarter"):
        return 15
    if text == "half":
        return 30
    return number_value(text) if text.isdigit() else _MINUTE_WORDS.get(text)


@_rule(
    r"\b(?P<m>(?:a\s+)?quarter|half|\d{1,2}(?:\s+minutes?)?|(?:"
    + _MINUTE_WORD_RE
    + r")(?:\s+minutes?)?)\s+(?P<dir>past|after|to|before|till|til|of)\s+"
    + _HOUR_RE
    + _MERIDIEM_RE
)
def _minutes_around_hour(match: re.Match[str], ctx: ScanContext) -> bool:
    minutes = _minutes(match.group("m"))
    if minutes is None or not 1 <= minutes <= 59:
        return False
    before = match.group("dir") in ("to", "before", "till", "til", "of")
    if before and (minutes > 30 or match.group("m") == "half"):
        return False  # "half to 3" is not English; "40 to 3" is not a time
    if match.group("dir") == "after" and match.group("m").isdigit() and not match.group("mer"):
        return False  # "15 after 3" reads as a duration as often as a time
    anchor = _hour_clock(match, 0)
    if anchor is None:
        return False
    if not before:
        ctx.scan.clocks.append(Clock(anchor.hour, minutes, anchor.meridiem, anchor.padded))
        return True
    # Minutes before the hour: the previous hour, keeping am/pm ("10 to 1pm" is 12:50 pm).
    hour = anchor.hour - 1
    if anchor.meridiem is None and anchor.padded:  # noon / midnight
        ctx.scan.clocks.append(Clock((anchor.hour - 1) % 24, 60 - minutes, None, padded=True))
        return True
    if hour == 0 and anchor.meridiem is None:
        hour = 12
    if anchor.meridiem is not None and hour == 11 and anchor.hour == 12:
        flipped = "am" if anchor.meridiem == "pm" else "pm"  # "10 to 12pm" is 11:50 am
        ctx.scan.clocks.append(Clock(11, 60 - minutes, flipped, padded=False))
        return True
    ctx.scan.clocks.append(Clock(hour or 12, 60 - minutes, anchor.meridiem, anchor.padded))
    return True


@_rule(
    r"\b(?P<h>"
    + _HOUR_WORD_RE
    + r")(?:\s+(?P<min>o'?\s?(?P<oh>"
    + "|".join(w for w in _MINUTE_WORDS if _MINUTE_WORDS[w] < 10)
    + r")|"
    + _MINUTE_WORD_RE
    + r"))?\s?(?P<mer>am|pm)\b"
)
def _spelled_with_meridiem(match: re.Match[str], ctx: ScanContext) -> bool:
    minute_text = match.group("min")
    minute = 0
    if minute_text:
        word = match.group("oh") or minute_text
        if word not in _MINUTE_WORDS:
            return False
        minute = _MINUTE_WORDS[word]
    hour = _HOUR_WORDS[match.group("h")]
    ctx.scan.clocks.append(Clock(hour, minute, match.group("mer"), padded=False))
    return True


@_rule(
    r"\b(?:at|@|around|about)\s+(?P<h>"
    + _HOUR_WORD_RE
    + r")\s+(?P<min>"
    + "|".join(w for w in _MINUTE_WORDS if _MINUTE_WORDS[w] >= 10)
    + r")\b(?!\s+(?:minutes?|mins?|hours?|days?|weeks?|people|percent)\b)"
)
def _spelled_hour_minute(match: re.Match[str], ctx: ScanContext) -> bool:
    # "at three thirty", "at seven forty-five": the minute word makes it a clock time.
    hour = _HOUR_WORDS[match.group("h")]
    minute = _MINUTE_WORDS[match.group("min")]
    ctx.scan.clocks.append(Clock(hour, minute, None, padded=False))
    return True


@_rule(
    r"(?<![\d:./-])\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?=\s+(?:(?:this|today|tomorrow|tmrw|"
    r"in\s+the)\s+(?:morning|afternoon|evening)|tonight|at\s+night)\b)"
)
def _hour_before_part_of_day(match: re.Match[str], ctx: ScanContext) -> bool:
    # "8 this evening", "6 tonight": the part of day, read by its own rule, sets am/pm.
    text = match.group("h")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m") or 0), None, padded=text.startswith("0"))
    )
    return True
