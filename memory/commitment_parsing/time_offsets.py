"""Offsets from when an entry was said: amounts of a unit, whole or fractional, and the
phrasings that carry them without "in" ("30 minutes", "now + 1 hour", "+2 years").

``OFFSET_RE`` is one offset ("2 hours and 30 minutes", "1.5 days", "0,5 hours", "2h30m");
``record_offset`` turns its text into a ``Relative`` on the scan, or refuses.
``OFFSET_RULES`` (run by ``time_grammar.scan`` after its date rules) reads:

- "now + 30 minutes", "now+1hour": an explicit offset from now, anywhere;
- a bare offset as the whole time phrase ("remind me 30 minutes", "+2 years", "a wk"),
  only at the start of the text and only when the text ends there or a task follows
  ("30 minutes to check the oven"): "30 minutes before the meeting" and "to stretch 30
  minutes" (a duration of the task) are not offsets, so they are not read
  ("bare-duration-is-offset").

Fractions are exact or refused (docs/time-grammar.md):

- a decimal point or a decimal comma with one or two digits ("1.5", "0,5"; "1,500" is a
  thousands separator or a decimal, so it is not an amount);
- a fraction of a minute, hour, day, week or fortnight is elapsed time at 60 s, 3,600 s,
  24 h, 7 x 24 h and 14 x 24 h ("in 1.5 days" is 36 hours later, across DST too:
  "fractional-days-are-24-hours"), and must come to whole seconds;
- a fraction of a year, decade or century must be a whole number of months ("1.5 years"
  is 18 months: "fractional-years-are-months"); a fraction of a month is refused, since
  months differ in length.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final

from memory.commitment_parsing.patterns import PatternRegistry
from memory.commitment_parsing.time_pieces import Handler, Relative, ScanContext
from memory.commitment_parsing.time_words import NUMBER_RE, UNIT_RE, UNITS, number_value

# Digits may touch their unit ("5min", "1.5h"); a number word may not ("an d" is not "and").
_DECIMAL: Final = r"\d{1,4}(?:[.,]\d{1,2}(?![\d,.]))?"
_AMOUNT: Final = r"(?:a\s+couple\s+of\s+|" + _DECIMAL + r"\s*|(?:" + NUMBER_RE + r")\s+)"
_COMPACT: Final = r"\d{1,3}h\s?\d{1,2}m(?:in)?"  # "2h30m": hours and minutes in one token
_PART: Final = r"(?:" + _COMPACT + r"|" + _AMOUNT + UNIT_RE + r")\b"
_PARTS: Final = re.compile(
    r"\b(?:(?P<h>\d{1,3})h\s?(?P<m>\d{1,2})m(?:in)?"
    r"|(?P<n>" + _AMOUNT + r")(?P<u>" + UNIT_RE + r"))\b"
)
OFFSET_RE: Final = _PART + r"(?:(?:\s*,\s*|\s+)(?:and\s+)?" + _PART + r")*"

_SECONDS: Final = {"minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}
_SECONDS_MORE: Final = {"fortnights": 1209600}
_MONTHS_IN: Final = {"years": 12, "decades": 120, "centuries": 1200}
# What may follow a bare offset: the end, punctuation that ends the phrase, or a task.
_TASK_AFTER: Final = r"(?=\s*$|\s*[,:;.!?]|\s+(?:to|that|about|so|please|re|regarding)\b)"

OFFSET_RULES: PatternRegistry[Handler] = PatternRegistry()
_rule = OFFSET_RULES.register


def _amount(text: str) -> Fraction | None:
    text = text.strip()
    if text.startswith("a couple"):
        return Fraction(2)
    if text[:1].isdigit():
        return Fraction(text.replace(",", "."))
    value = number_value(text)
    return Fraction(value) if value is not None else None


def _exact_parts(amount: Fraction, unit: str) -> tuple[tuple[int, str], ...] | None:
    """(amount, unit) in whole numbers: itself, or elapsed seconds or months for a
    fraction; None when a fraction cannot be made exact."""
    if amount.denominator == 1:
        return ((int(amount), unit),)
    seconds = {**_SECONDS, **_SECONDS_MORE}.get(unit)
    if seconds is not None:
        total = amount * seconds
        return ((int(total), "seconds"),) if total.denominator == 1 else None
    months = _MONTHS_IN.get(unit)
    if months is not None:
        total = amount * months
        return ((int(total), "months"),) if total.denominator == 1 else None
    return None  # a fraction of a month: months differ in length


def record_offset(text: str, ctx: ScanContext) -> bool:
    """Record the offset ``text`` (an ``OFFSET_RE`` match) on the scan; always consumes."""
    parts: list[tuple[int, str]] = []
    for part in _PARTS.finditer(text):
        if part.group("h") is not None:
            parts.extend([(int(part.group("h")), "hours"), (int(part.group("m")), "minutes")])
            continue
        amount = _amount(part.group("n"))
        unit = UNITS[part.group("u")]
        exact = None if amount is None or amount > 1000 else _exact_parts(amount, unit)
        if exact is None:
            ctx.scan.refuse("unresolvable-time")
            return True
        if amount is not None and amount.denominator != 1:
            code = "years-are-months" if unit in _MONTHS_IN else "days-are-24-hours"
            if unit in ("days", "weeks", "fortnights") or unit in _MONTHS_IN:
                ctx.scan.conventions.append(f"fractional-{code}")
        parts.extend(exact)
    if not parts or any(count <= 0 for count, _ in parts):
        ctx.scan.refuse("unresolvable-time")
        return True
    (count, unit), *more = parts
    ctx.scan.relatives.append(Relative(count, unit, tuple(more)))
    return True


@_rule(r"\bnow\s*\+\s*(?P<offset>" + OFFSET_RE + r")")
def _now_plus(match: re.Match[str], ctx: ScanContext) -> bool:
    # "now + 30 minutes", "now + 1hour": said outright, read wherever it stands.
    return record_offset(match.group("offset"), ctx)


@_rule(r"^(?P<plus>\+\s*)?(?P<offset>" + OFFSET_RE + r")" + _TASK_AFTER)
def _bare_offset(match: re.Match[str], ctx: ScanContext) -> bool:
    # "remind me 30 minutes", "+2 years": the offset is the whole time phrase.
    ctx.scan.conventions.append("bare-duration-is-offset")
    return record_offset(match.group("offset"), ctx)
