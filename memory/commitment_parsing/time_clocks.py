"""Scanning rules for times of day ("at 4", "17:00", "noon", "in the evening") and zone
abbreviations after a time ("17:00 UTC"), run after the date rules of ``time_grammar``
and the spoken clocks of ``time_spoken`` ("quarter past 9", "three am").

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


@_rule(r"(?<![\d.:])(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?(?!\d|:\d)")
def _clock_colon(match: re.Match[str], ctx: ScanContext) -> bool:
    # Seconds are kept ("12:00:05"), so the instant is the one written.
    text, seconds = match.group("h"), match.group("s")
    padded = text.startswith("0")
    ctx.scan.clocks.append(
        Clock(int(text), int(match.group("m")), None, padded=padded, second=int(seconds or 0))
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


# Zone abbreviations are ambiguous (IST, CST) and do not say which side of DST: only the
# tenant's allow-list (ParsingConventions.zone_abbreviations) is read; a known
# abbreviation outside it is refused, any other word after the time is a leftover.
_KNOWN_ZONES: Final = frozenset(
    {
        *("cet", "cest", "eet", "eest", "wet", "west", "bst", "est", "edt", "cst", "cdt"),
        *("mst", "mdt", "pst", "pdt", "akst", "akdt", "hst", "ist", "jst", "kst", "sgt"),
        *("hkt", "aest", "aedt", "acst", "acdt", "awst", "nzst", "nzdt", "utc", "gmt", "z"),
        *("et", "ct", "mt", "pt"),
    }
)


@_rule(
    r"(?:(?<=\d)|(?<=\d[ap]m)|(?<=\d [ap]m)|(?<=noon)|(?<=midnight))\s?"
    r"(?P<zone>[a-z]{1,5})\b"
)
def _zone(match: re.Match[str], ctx: ScanContext) -> bool:
    abbreviation = match.group("zone")
    zone = ctx.settings.zone_for(abbreviation)
    if zone is not None:
        if ctx.scan.zone is not None and ctx.scan.zone_code != abbreviation:
            ctx.scan.refuse("unresolvable-time")  # two zones
        ctx.scan.zone, ctx.scan.zone_code = zone, abbreviation
        return True
    if abbreviation in _KNOWN_ZONES:
        ctx.scan.refuse("unknown-zone-abbreviation")
        return True
    return False
