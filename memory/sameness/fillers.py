"""Opening discourse fillers: "Per the latest update, ", "FYI: ", "Note that ".

A restatement often opens with a phrase that announces the fact without being part of
it. Such a phrase is stripped from the words a duplicate is compared on, and only then:
it is a closed list, matched only at the start of the text, and only when followed by a
comma, a colon or a dash (or, for the leads such as "note that", by the fact itself).
"Per the contract, ..." or "As of March, ..." are not on the list: their words stay and
the two texts stay apart. The guard still reads numbers, dates, negations and names from
the whole text, so nothing a filler could hide escapes it.
"""

from __future__ import annotations

import re

# Phrases that end with a comma, colon or dash: "FYI: ", "As of now, ", "Reminder - ".
_PUNCTUATED = [
    "fyi", "btw", "nb", "note", "quick note", "side note", "update", "quick update",
    "reminder", "quick reminder", "friendly reminder", "just a reminder", "a reminder",
    "remember", "heads up", "as of now", "as mentioned", "as mentioned before",
    "as mentioned earlier", "as discussed", "as noted", "for the record", "for reference",
    "to recap", "recap", "also", "per the latest update", "per the last update",
    "just so you know", "for your information",
]  # fmt: skip
# Leads that run into the fact: "Note that Acme prefers email".
_LEADS = [
    "note that", "please note that", "remember that", "please remember that",
    "just a reminder that", "a reminder that", "keep in mind that", "please keep in mind that",
    "just so you know", "fyi",
]  # fmt: skip


def _alternatives(phrases: list[str]) -> str:
    # Longest first, so "as mentioned before" wins over "as mentioned".
    ordered = sorted(phrases, key=len, reverse=True)
    return "|".join(r"\s+".join(map(re.escape, phrase.split())) for phrase in ordered)


# A colon or a dash only counts with a space after it: "Update-to-date" is a word and
# "FYI:Acme" one token (fact_text's tokens never start inside the filler's end).
_SEPARATOR = r"\s*(?:,|[:\-\u2013\u2014]+(?=\s))\s*"
_FILLER = re.compile(
    rf"\s*(?:(?:{_alternatives(_PUNCTUATED)}){_SEPARATOR}|(?:{_alternatives(_LEADS)})\s+)",
    re.IGNORECASE,
)
# "FYI: as of now, ..." : a few fillers in a row, never more.
_MAX_FILLERS = 3


def filler_end(text: str) -> int:
    """Where the text's content starts once its opening fillers are set aside (0 when
    it opens with none, or when nothing but fillers would be left)."""
    end = 0
    for _ in range(_MAX_FILLERS):
        match = _FILLER.match(text, end)
        if match is None or match.end() == end:
            break
        end = match.end()
    return end if any(ch.isalnum() for ch in text[end:]) else 0
