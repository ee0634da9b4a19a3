""" "when <condition>" -> PredicateSpec: commitments that wait for something to happen.

Conventions:

- Explicit forms name the predicate exactly:
  "when tag <t> exists" -> ``memory.tag_exists {tag: t}``,
  "when key <k> exists" -> ``memory.key_exists {key: k}``,
  "when key <k> is <v>" -> ``memory.key_has_value {key: k, value: v}``
  (an optional "the" before tag/key, optional quotes around the values; tag, key and
  value keep their spelling).
- Any other clause introduced by "when", "once", "as soon as" or "after" waits for a
  tag named after the clause: lowercased, the stopwords below removed, every run of
  other characters turned into "-", at most 64 characters ("the contract is signed" ->
  ``contract-signed``; "the SOC2 report is filed" -> ``soc2-report-filed``). An agent
  (or a person) marks the event by tagging an entry with that slug. An empty slug is no
  condition.
- The clause runs to the end of its sentence: to the first of , ; : ! ? or a full stop
  followed by a space or the end, or to " then ".
- Not an introduction: "once a week"/"once every"/"once per"/"once more"/"once again"
  (frequencies and adverbs), "after next" ("Friday after next" is a day), "when"/"once"
  right after a verb that asks a question
  ("ask when the invoice is due", "find out when", "check when"), and any introduction
  whose clause opens with a time ("after 3 days", "when it's 5pm", "once tomorrow"):
  the caller reads those as times.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from schemas.commitment_spec import PredicateSpec

MAX_SLUG: Final = 64
STOPWORDS: Final = frozenset(
    {
        *("the", "a", "an", "is", "are", "was", "were", "gets", "get", "has", "have"),
        *("been", "be", "becomes", "our", "my", "their", "it's", "its", "finally"),
    }
)

INTRO_PATTERN: Final = re.compile(
    r"\b(?:as\s+soon\s+as|when(?:ever)?|once|after)\b(?!\s+(?:a|per|every|each|more|again|"
    r"in\s+a\s+while|next)\b)",
    re.IGNORECASE,
)
# Verbs after which "when ..." is a question to ask, not a condition to wait for.
_QUESTION_VERBS: Final = frozenset(
    {
        *("ask", "asking", "know", "find", "out", "figure", "see", "check", "wonder"),
        *("decide", "confirm", "learn", "tell", "clarify", "verify", "and", "about"),
    }
)
_CLAUSE_END: Final = re.compile(r"[,;:!?]|\.(?:\s|$)|\s+then\s+", re.IGNORECASE)
_VALUE: Final = r"""(?P<q>["'`]?)(?P<{name}>[^\s"'`]+)(?P=q)"""
_EXPLICIT: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (
        re.compile(
            r"^(?:the\s+)?tag\s+" + _VALUE.format(name="tag") + r"\s+(?:exists|is\s+added)$",
            re.IGNORECASE,
        ),
        "memory.tag_exists",
    ),
    (
        re.compile(
            r"^(?:the\s+)?key\s+" + _VALUE.format(name="key") + r"\s+exists$", re.IGNORECASE
        ),
        "memory.key_exists",
    ),
    (
        re.compile(
            r"^(?:the\s+)?key\s+"
            + _VALUE.format(name="key")
            + r"\s+(?:is|equals|=)\s+(?P<qv>[\"'`]?)(?P<value>.+?)(?P=qv)$",
            re.IGNORECASE,
        ),
        "memory.key_has_value",
    ),
)


@dataclass(frozen=True)
class Clause:
    """A condition clause found in text: where it starts (the introducing word) and
    what it says."""

    start: int
    end: int
    intro: str
    text: str


def find_clause(text: str, *, is_time: Callable[[str], bool]) -> Clause | None:
    """The first "when/once/as soon as/after <clause>" in ``text``; ``is_time`` tells
    whether a clause opens with a time ("after 3 days"), which is not a condition."""
    for intro in INTRO_PATTERN.finditer(text):
        before = text[: intro.start()].split()
        if before and before[-1].casefold().strip(",") in _QUESTION_VERBS:
            continue
        rest_start = intro.end()
        end_match = _CLAUSE_END.search(text, rest_start)
        end = end_match.start() if end_match else len(text)
        clause = text[rest_start:end].strip()
        if not clause:
            continue
        word = re.sub(r"\s+", " ", intro.group(0).casefold())
        if is_time(text[intro.start() : end]):  # "after 3 days" (with its intro word)
            continue
        return Clause(intro.start(), end, word, clause)
    return None


def slug(clause: str) -> str:
    """The tag a free-form condition waits for: "the contract is signed" -> contract-signed."""
    words = []
    for raw in clause.casefold().replace("\u2019", "'").split():
        word = raw.strip('.,;:!?"()[]{}')
        if word and word not in STOPWORDS:
            words.append(word)
    joined = re.sub(r"[^a-z0-9]+", "-", " ".join(words)).strip("-")
    return joined[:MAX_SLUG].rstrip("-")


def is_explicit(clause: str) -> bool:
    """Does ``clause`` name its predicate exactly ("tag <t> exists", "key <k> is <v>")?"""
    text = clause.strip().rstrip(".")
    return any(pattern.match(text) for pattern, _ in _EXPLICIT)


def predicate_for_clause(clause: str) -> PredicateSpec | None:
    """The predicate a condition clause names (explicit forms first), or None."""
    text = clause.strip().rstrip(".")
    for pattern, predicate in _EXPLICIT:
        found = pattern.match(text)
        if found is None:
            continue
        args = {
            name: found.group(name)
            for name in ("tag", "key", "value")
            if name in pattern.groupindex and found.group(name)
        }
        return PredicateSpec(predicate=predicate, args=args)
    tag = slug(text)
    if not tag:
        return None
    return PredicateSpec(predicate="memory.tag_exists", args={"tag": tag})


def parse_condition(text: str, *, is_time: Callable[[str], bool]) -> PredicateSpec | None:
    """The predicate the first condition clause of ``text`` names, or None."""
    clause = find_clause(text, is_time=is_time)
    return None if clause is None else predicate_for_clause(clause.text)
