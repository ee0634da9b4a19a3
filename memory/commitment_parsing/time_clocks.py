"""Scanning rules for times of day ("at 4", "17:00", "quarter past 9", "noon", "in the
evening") and time zones ("UTC", "PST"), run after the date rules of ``time_grammar``.

``CLOCK_RULES`` is their ordered registry; ``time_grammar.scan`` runs it after its own.
The conventions for an hour without am/pm are ``Clock.resolve``'s (time_pieces).
"""

from __future__ import annotations

import re
from typing import Final

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_pieces import Clock, Handler, ScanContext
from memory.commitment_parsing.time_words import HOUR_WORD_RE, MERIDIEM_RE, UNIT_RE, number_value

CLOCK_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = CLOCK_RULES.register


_CLOCK_TEXT: Final = r"\d{1,2}(?::\d{2})?(?:\s?(?:am|pm))?"


@_rule(r"\b(?:at|@)\s+(?P<first>" + _CLOCK_TEXT + r")\s+and\s+(?P<second>" + _CLOCK_TEXT + r")\b")
def _two_clocks(match: re.Match[str], ctx: ScanContext) -> bool:
    # "at 9 and 17": two times (a conflict for one instant, two hours for a series).
    for group in ("first", "second"):
        found = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s?(am|pm)?", match.group(group))
        assert found is not None
        hour, minute, meridiem = found.group(1), found.group(2), found.group(3)
        padded = hour.startswith("0") or (minute is not None and len(hour) == 2)
        ctx.scan.clocks.append(Clock(int(hour), int(minute or 0), meridiem, padded=padded))
    return True


@_rule(r"\b(?P<h>\d{1,2})[:.](?P<m>\d{2})\s?(?P<mer>" + MERIDIEM_RE + r")\b")
def _clock_with_meridiem(match: re.Match[str], ctx: ScanContext) -> bool:
    meridiem = match.group("mer")
    ctx.scan.clocks.append(
        Clock(int(match.group("h")), int(match.group("m")), meridiem[0] + "m", padded=False)
    )
    return True


@_rule(r"(?<![\d.:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])")
def _clock_colon(match: re.Match[str], ctx: ScanContext) -> bool:
    text = match.group("h")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m")), None, padded=text.startswith("0"))
    )
    return True


@_rule(r"\b(?:at|@|around|about)\s+(?:around\s+|about\s+)?(?P<h>\d{1,2})\.(?P<m>\d{2})\b")
def _clock_dotted(match: re.Match[str], ctx: ScanContext) -> bool:
    # "at 7.25": only after "at", where it cannot be an amount.
    text = match.group("h")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m")), None, padded=text.startswith("0"))
    )
    return True


@_rule(r"\b(?P<h>\d{1,2})\s?(?P<mer>am|pm)\b|\b(?P<h2>\d{1,2})(?P<mer2>a|p)\b")
def _hour_with_meridiem(match: re.Match[str], ctx: ScanContext) -> bool:
    hour = match.group("h") or match.group("h2")
    meridiem = (match.group("mer") or match.group("mer2"))[0] + "m"
    ctx.scan.clocks.append(Clock(int(hour), 0, meridiem, padded=False))
    return True


@_rule(r"(?<!in )(?<!for )(?<!within )\b(?P<h>\d{1,2})h(?P<m>\d{2})?\b")
def _hour_h(match: re.Match[str], ctx: ScanContext) -> bool:
    # "8h", "20h", "8h00": a European clock time. "in 2h" is a duration (taken earlier).
    text = match.group("h")
    ctx.scan.clocks.append(Clock(int(text), int(match.group("m") or 0), None, padded=True))
    return True


@_rule(
    r"\b(?:a\s+)?quarter\s+(?P<dir>past|after|to|before)\s+(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\b"
)
def _quarter(match: re.Match[str], ctx: ScanContext) -> bool:
    hour = number_value(match.group("h"))
    if hour is None or not 1 <= hour <= 12:
        return False
    if match.group("dir") in ("to", "before"):
        ctx.scan.clocks.append(Clock(hour - 1 if hour > 1 else 12, 45, None, padded=False))
    else:
        ctx.scan.clocks.append(Clock(hour, 15, None, padded=False))
    return True


@_rule(r"\bhalf\s+past\s+(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\b")
def _half_past(match: re.Match[str], ctx: ScanContext) -> bool:
    hour = number_value(match.group("h"))
    if hour is None or not 1 <= hour <= 12:
        return False
    ctx.scan.clocks.append(Clock(hour, 30, None, padded=False))
    return True


@_rule(
    r"\b(?:(?:at|@|around|about|by)\s+(?:around\s+|about\s+)?)?"
    r"(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")\s*o'?\s?clock\b"
)
def _oclock(match: re.Match[str], ctx: ScanContext) -> bool:
    hour = number_value(match.group("h"))
    if hour is None:
        return False
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=False))
    return True


@_rule(
    r"\b(?:at|@|around|about)\s+(?:around\s+|about\s+)?(?P<h>\d{1,2}|" + HOUR_WORD_RE + r")"
    r"(?![\d:.%/]|\s*(?:st|nd|rd|th|" + UNIT_RE + r"|people|percent)\b)"
)
def _at_hour(match: re.Match[str], ctx: ScanContext) -> bool:
    text = match.group("h")
    hour = number_value(text)
    if hour is None:
        return False
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=text.startswith("0") or hour > 12))
    return True


@_rule(r"\b(?:(?:at|by)\s+)?(?P<name>noon|midday|midnight)\b")
def _noon(match: re.Match[str], ctx: ScanContext) -> bool:
    hour = 0 if match.group("name") == "midnight" else 12
    ctx.scan.clocks.append(Clock(hour, 0, None, padded=True))
    return True


@_rule(r"\bin\s+the\s+(?P<pod>morning|afternoon|evening)\b|\bat\s+night\b")
def _pod_modifier(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.parts_of_day.append(match.group("pod") or "night")
    return True


@_rule(r"\b(?:utc|gmt)\b")
def _utc(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.utc_said = True
    return True


# Zone abbreviations are ambiguous (IST, CST) and do not say which side of DST: a clock
# time next to one is refused rather than read in the entry's zone.
@_rule(
    r"\b(?:cet|cest|eet|eest|wet|west|bst|est|edt|cst|cdt|mst|mdt|pst|pdt|akst|akdt|hst"
    r"|ist|jst|kst|sgt|hkt|aest|aedt|acst|acdt|awst|nzst|nzdt)\b"
)
def _other_zone(match: re.Match[str], ctx: ScanContext) -> bool:
    ctx.scan.other_zone_said = True
    return True
