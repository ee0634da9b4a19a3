"""Normalized text that remembers where each character came from.

The grammar reads a normalized copy of an entry (lowercase, straight apostrophes, "a.m."
-> "am", single spaces), but ``Inferred.span`` must point into the ORIGINAL text. A
``MappedText`` keeps, for every normalized character, the index of the original character
it came from, so a span found in the normalized text maps back exactly (casefolding that
lengthens a character, such as "ß" -> "ss", maps both letters to the one original).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

_MERIDIEM: Final = re.compile(r"\b([ap])\.\s?m\b\.?")
_SPACES: Final = re.compile(r"\s+")
_QUOTES: Final = {"\u2019": "'", "\u2018": "'"}


@dataclass(frozen=True)
class MappedText:
    text: str
    origin: tuple[int, ...]  # origin[i]: index in the original of text[i]
    original_length: int

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original offsets of the normalized characters ``[start, end)``."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else self.original_length
            return at, at
        return self.origin[start], self.origin[end - 1] + 1

    def shifted(self, offset: int, total: int) -> MappedText:
        """The same map for text cut out of a longer one at ``offset``."""
        return MappedText(self.text, tuple(i + offset for i in self.origin), total)


def _sub(
    pattern: re.Pattern[str],
    replace: Callable[[re.Match[str]], str],
    text: str,
    origin: list[int],
) -> tuple[str, list[int]]:
    """``pattern.sub`` that keeps ``origin`` aligned."""
    out: list[str] = []
    mapped: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(text[last : match.start()])
        mapped.extend(origin[last : match.start()])
        new = replace(match)
        out.append(new)
        # The first character maps to the start of what it replaces, the last to its
        # end, so a span ending on "pm" still covers all of "p.m.".
        ends = [origin[match.start()]] * len(new)
        if len(new) > 1:
            ends[-1] = origin[match.end() - 1]
        mapped.extend(ends)
        last = match.end()
    out.append(text[last:])
    mapped.extend(origin[last:])
    return "".join(out), mapped


def normalize_mapped(text: str) -> MappedText:
    """Lowercase, straight apostrophes, "a.m." -> "am", single spaces, stripped."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = _QUOTES.get(char) or char.casefold()
        chars.append(folded)
        origin.extend([index] * len(folded))
    joined = "".join(chars)
    joined, origin = _sub(_MERIDIEM, lambda m: m.group(1) + "m", joined, origin)
    joined, origin = _sub(_SPACES, lambda m: " ", joined, origin)
    stripped = joined.strip()
    lead = len(joined) - len(joined.lstrip())
    return MappedText(stripped, tuple(origin[lead : lead + len(stripped)]), len(text))
