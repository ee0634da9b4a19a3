"""Is a memory entry a standing intention, and which part of it says when?

An entry is a candidate when it is tagged ``commitment`` or ``intention`` (any case), or
when it contains a trigger phrase: "remind me", "remind us", "follow up", "follow-up",
"check back", "check in" (whole words, any case). The condition part is the text after
the first trigger phrase ("remind me in 5 days to send the invoice" -> "in 5 days to
send the invoice"); a tagged entry without a trigger phrase is all condition.

``TRIGGER_SQL_PATTERN`` is the same test as a PostgreSQL regular expression (ARE syntax,
for ``content ~* :pattern``), so the store can skip rows that cannot be candidates before
Python parses them. Tag candidates must be selected separately (by tag), since the
pattern only looks at the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

INTENTION_TAGS: Final = frozenset({"commitment", "intention"})

# Whitespace between the words may be any run (line breaks included); "follow-up" and
# "follow up" are both common spellings.
TRIGGER_PATTERN: Final = re.compile(
    r"\b(?:remind\s+(?:me|us)|follow(?:\s+|-)up|check\s+(?:back|in))\b",
    re.IGNORECASE,
)

# PostgreSQL's ARE spells word boundaries \m (start) and \M (end); \s is supported.
# Kept next to TRIGGER_PATTERN so the two cannot drift apart unnoticed
# (tests/memory/test_commitment_parsing.py checks they accept the same samples).
TRIGGER_SQL_PATTERN: Final = r"\m(remind\s+(me|us)|follow(\s+|-)up|check\s+(back|in))\M"

# What separates a trigger phrase from its condition: "Remind me: tomorrow", "follow up -
# next week".
_LEADING_PUNCTUATION: Final = " \t\r\n:;,-\u2013\u2014"


def is_tagged_intention(tags: Sequence[str]) -> bool:
    return any(tag.strip().casefold() in INTENTION_TAGS for tag in tags)


Span = tuple[int, int]


def locate_intention(text: str, tags: Sequence[str]) -> tuple[Span, Span] | None:
    """``(lead, condition)`` of a candidate entry as offsets into ``text``, or None when
    it is not one (``split_intention`` gives the strings)."""
    match = TRIGGER_PATTERN.search(text)
    if match is not None:
        lead = text[: match.start()].rstrip(" \t\r\n").rstrip(_LEADING_PUNCTUATION)
        lead_start = len(lead) - len(lead.lstrip())
        rest = text[match.end() :]
        start = match.end() + len(rest) - len(rest.lstrip(_LEADING_PUNCTUATION))
        end = len(text.rstrip())
        return (lead_start, len(lead)), (start, max(start, end))
    if is_tagged_intention(tags):
        start = len(text) - len(text.lstrip())
        return (0, 0), (start, max(start, len(text.rstrip())))
    return None


def split_intention(text: str, tags: Sequence[str]) -> tuple[str, str] | None:
    """``(lead, condition)`` of a candidate entry, or None when it is not one.

    ``lead`` is the text before the trigger phrase ("Next Monday: follow up with Dana"
    says when before the trigger); empty for a tagged entry without a trigger phrase.
    """
    found = locate_intention(text, tags)
    if found is None:
        return None
    (lead_start, lead_end), (start, end) = found
    return text[lead_start:lead_end], text[start:end]


def extract_intention(text: str, tags: Sequence[str]) -> str | None:
    """The condition part of a standing intention, or None when the entry is not one.

    The result may be empty ("... please follow up."): a commitment that says nothing
    about when, which inference reports as unparsable rather than dropping.
    """
    parts = split_intention(text, tags)
    return None if parts is None else parts[1]
