"""Full coverage: where a time phrase starts and ends, and whether every word of it was read.

The scanning rules mark the characters they consumed. ``regions`` turns that mask into
the time phrases of a text and refuses (``leftover=True``) when a word inside one was not
read; a reading is never built from part of a phrase ("in 1/2 hour" read as "January 2",
"at three am" as 15:00). The rule, over tokens (runs of letters/digits, or one
punctuation mark):

- A region starts at a consumed token, taking in the prepositions just before it ("at",
  "on", "by", "the", ...), and runs while tokens are consumed or are fillers followed by
  more consumed tokens ("Tuesday, May 8th at 5pm").
- It ends at a boundary: the end of the text; punctuation that ends a clause (":" ";"
  "." "!" "?" "(" ")" quotes, a dash); a task introducer ("to", "that", "about", "with",
  "for", "so", "re", "regarding", "because", "please", ...), a modal verb ("would",
  "could", ...) or a preposition/comma not followed by more time ("in 3 weeks on the
  renewal quote"); or a verb that opens the task ("every Friday send the report", a
  closed list below).
- A range joiner ("-", "to", "through", ...) between the region and a loose time word
  ("June 12-14", "12 to 14 June") is a leftover: one instant cannot hold a span.
- Any other word where a region would continue is a leftover: the phrase is refused.
  So is a partly consumed token, and a number or time word right before a region
  ("3 tomorrow", "half noon"): a task never ends in a loose time word.

Task words may come before the time only when they open with an introducer, a verb or
a subject pronoun ("to call Dana at 3pm", "with Dana on Friday", "send the deck on
Friday", "I'm available tomorrow"; otherwise a
word before the phrase is a leftover: "the following Friday", "12-14 June"), after it
("in 5 days to renew the domain") or both; a text may hold more than one region ("tomorrow to call
Dana at 3pm"): the resolver reads their pieces together, so two regions that disagree
are refused as a conflict. The same rule applies to recurrences (the recurrence
recognizer's match counts as consumed) and to a condition clause that opens with a time
("after 3 days").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory.commitment_parsing.time_words import MONTHS, NUMBER_WORDS, UNITS, WEEKDAYS

_TOKEN: Final = re.compile(r"\w+|[^\w\s]")

# May sit inside a phrase, between two consumed tokens or before the first one.
_FILLERS: Final = frozenset(
    {
        *("at", "on", "in", "by", "the", "of", "around", "about", "approximately", "approx"),
        *("this", "from", "until", "till", "before", "after", "between", "and", ",", "@"),
        *("latest", "earliest", "or", "roughly", "it", "is", "'", "s"),
    }
)
# Words that open the task or end the phrase: a region may stop right before them.
_INTRODUCERS: Final = frozenset(
    {
        *("to", "that", "about", "with", "for", "so", "re", "regarding", "because", "as"),
        *("on", "and", "then", "if", "or", "please", "pls", "again", "also", "too", "i"),
        *("we", "you", "he", "she", "they", "it", "my", "our", "your", "his", "her"),
        *("their", "need", "needs", "must", "should", "will", "can", "while", "but"),
        *("via", "in", "at", "by", ",", "'", "s", "is", "from", "before", "after"),
        *("would", "could", "might", "shall"),  # "tomorrow would work best for me"
    }
)
_CLAUSE_END: Final = frozenset({":", ";", ".", "!", "?", "(", ")", '"', "-", "\u2013", "\u2014"})
# Verbs that open a task without "to" ("every Friday send the weekly report"). Closed on
# purpose: no word that is also time vocabulary ("second", "march", "may", "sat").
_TASK_VERBS: Final = frozenset(
    {
        *("send", "call", "email", "text", "ping", "message", "ask", "tell"),
        *("check", "review", "pay", "book", "buy", "order", "submit", "file", "renew"),
        *("prepare", "prep", "schedule", "cancel", "update", "write", "read", "finish"),
        *("clean", "water", "take", "bring", "pick", "make", "do", "reply", "respond"),
        *("sign", "confirm", "meet", "go", "leave", "visit", "contact", "invite", "share"),
        *("post", "publish", "deploy", "run", "fix", "test", "plan", "draft", "print"),
        *("return", "collect", "register", "apply", "chase", "feed", "walk", "join"),
        *("attend", "present", "upload", "install", "restart", "ship", "push", "merge"),
        *("rotate", "archive", "delete", "remove", "move", "log", "note", "look", "start"),
        *("stop", "stretch", "drink", "eat", "wake", "get", "grab", "put", "see", "talk"),
    }
)
# Time vocabulary that must not be left loose next to a region ("3 tomorrow").
_TIME_WORDS: Final = frozenset(
    {
        *NUMBER_WORDS,
        *UNITS,
        *MONTHS,
        *(name for name in WEEKDAYS if len(name) > 3),
        *("am", "pm", "half", "quarter", "past", "noon", "midnight", "morning", "evening"),
        *("afternoon", "night", "tonight", "o", "clock", "oclock", "next", "last", "ago"),
        *("first", "second", "third", "fourth", "fifth", "following", "late", "early"),
        *("mid", "end", "beginning", "start", "every", "each", "later", "sharp", "ish"),
        *("previous", "coming", "upcoming", "week", "weekend", "fortnight", "decade"),
    }
)
# Words a task may open with when it comes before the time ("to call Dana at 3pm",
# "with Dana on Friday"): without one, words before a time phrase are leftovers.
# A subject pronoun opens a clause too ("I'm available tomorrow", "im available ...").
_TASK_OPENERS: Final = frozenset(
    {
        *("to", "that", "about", "with", "for", "re", "regarding", "on", "if", "so"),
        *("i", "im", "we", "you", "he", "she", "they"),
    }
)
# Words that join the two ends of a range ("June 12-14", "12 to 14 June"): a time word
# on the other side of one means the phrase names a span, which one instant cannot hold.
_RANGE_JOINERS: Final = frozenset({"-", "\u2013", "to", "through", "thru", "till", "until"})
_ORDINAL: Final = re.compile(r"\d+(?:st|nd|rd|th)")


@dataclass(frozen=True)
class Coverage:
    """The time regions of a text (normalized offsets) and whether a word was left over."""

    regions: tuple[tuple[int, int], ...]
    leftover: bool

    @property
    def span(self) -> tuple[int, int] | None:
        if not self.regions:
            return None
        return self.regions[0][0], self.regions[-1][1]


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    word: str
    state: int  # 0 free, 1 partly consumed, 2 consumed
    spaced: bool  # preceded by a space (or the start)


def _tokens(text: str, taken: bytes | bytearray) -> list[_Token]:
    found = []
    for match in _TOKEN.finditer(text):
        marks = taken[match.start() : match.end()]
        state = 2 if all(marks) else (1 if any(marks) else 0)
        spaced = match.start() == 0 or text[match.start() - 1] == " "
        found.append(_Token(match.start(), match.end(), match.group(0), state, spaced))
    return found


def _is_time_word(word: str) -> bool:
    return word.isdigit() or word in _TIME_WORDS or bool(_ORDINAL.fullmatch(word))


def _loose_lead(tokens: list[_Token], first: int) -> bool:
    """Are the words before the first region (index ``first``) a leftover? They may be
    fillers only, or a task that opens with an introducer or a verb."""
    words = [t for t in tokens[:first] if t.state != 0 or t.word not in _FILLERS]
    if not words:
        return False
    opener = tokens[0].word
    return not (opener in _TASK_OPENERS or opener in _TASK_VERBS)


def _range_before(tokens: list[_Token], start: int, floor: int) -> bool:
    """Is the region starting at ``start`` the far end of a range ("12-14 June")?"""
    if start - 2 < floor:
        return False
    joiner, end = tokens[start - 1], tokens[start - 2]
    return joiner.word in _RANGE_JOINERS and end.state == 0 and _is_time_word(end.word)


def _range_after(tokens: list[_Token], index: int) -> bool:
    """Does a range joiner and a loose time word follow at ``index`` ("June 12 - 14")?"""
    if index + 1 >= len(tokens):
        return False
    joiner, end = tokens[index], tokens[index + 1]
    return joiner.word in _RANGE_JOINERS and end.state == 0 and _is_time_word(end.word)


def _next_anchor(tokens: list[_Token], index: int) -> int | None:
    """The first consumed token at or after ``index`` reached over fillers only."""
    while index < len(tokens):
        token = tokens[index]
        if token.state == 2:
            return index
        if token.state == 1 or token.word not in _FILLERS:
            return None
        index += 1
    return None


def _ends_here(tokens: list[_Token], index: int) -> bool:
    """May a region end right before ``tokens[index]``?"""
    if index >= len(tokens):
        return True
    token = tokens[index]
    word = token.word
    if word in ("-", "\u2013") and not token.spaced:
        return False  # "next week-ish": a hyphen inside a word ends nothing
    if word in _CLAUSE_END or word in _TASK_VERBS:
        return True
    if word in _INTRODUCERS:
        # "on the renewal", ", then": fine; "at 3 tomorrow" would have been an anchor.
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        return following is None or not _is_time_word(following.word) or word == "to"
    return False


def regions(text: str, taken: bytes | bytearray) -> Coverage:
    """The time regions of ``text`` given the consumed-character mask ``taken``."""
    tokens = _tokens(text, taken)
    found: list[tuple[int, int]] = []
    leftover = False
    index = 0
    floor = 0  # a region never reaches back into the previous one
    while index < len(tokens):
        token = tokens[index]
        if token.state == 1:
            leftover = True
            index += 1
            continue
        if token.state == 0:
            index += 1
            continue
        start = index
        while start > floor and tokens[start - 1].state == 0 and tokens[start - 1].word in _FILLERS:
            start -= 1
        before = tokens[start - 1] if start > floor else None
        if before is not None and before.state == 0 and _is_time_word(before.word):
            leftover = True  # "3 tomorrow": a loose time word next to the phrase
        if _range_before(tokens, start, floor):
            leftover = True
        last = index
        cursor = index + 1
        while cursor < len(tokens):
            if tokens[cursor].state == 2:
                last = cursor
                cursor += 1
                continue
            anchor = _next_anchor(tokens, cursor)
            if anchor is not None:
                last = anchor
                cursor = anchor + 1
                continue
            if not _ends_here(tokens, cursor) or _range_after(tokens, cursor):
                leftover = True
            break
        if not found and _loose_lead(tokens, start):
            leftover = True  # "the following Friday", "12-14 June": a word dropped
        found.append((tokens[start].start, tokens[last].end))
        floor = last + 1
        index = last + 1
    return Coverage(tuple(found), leftover)
