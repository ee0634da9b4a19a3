"""When two different words are one typo apart: the lexical verifier's only tolerance.

A content word of four letters or more may differ from its counterpart by one
Damerau-Levenshtein edit (substitution, insertion, deletion or a swap of adjacent
letters, at any position, the first letter included); from nine letters by two. Never in
shorter words ("cat"/"car"), never in words with digits (numbers, identifiers).

Where a real word is likely to sit one edit from another real word that says something
else, the pair must not be two English words: in four-letter words ("east"/"west",
"left"/"lift", "more"/"mode", "good"/"gold") and for a two-edit difference ("ascending"
/ "descending", "inclusive" / "exclusive", "encrypted" / "decrypted"). A real typo
("lpan", "emial") is not a word. One edit in a word of five to eight letters is forgiven
between two words as before: a typo there makes another word often enough ("stores" /
"sores", "tracking" / "tacking") that refusing would lose real duplicates.

The English word list is pyspellchecker's (about 160,000 words with their inflections,
shipped inside its wheel, no download): a larger list only makes a typo less likely to be
forgiven, never more.
"""

from __future__ import annotations

from functools import cache

from rapidfuzz.distance import DamerauLevenshtein
from spellchecker import SpellChecker

# Shortest word in which one edit is forgiven; in shorter ones one letter is the word.
MIN_TYPO_LENGTH = 4
# From this length two edits are forgiven ("accomodation" / "acommodation").
TWO_TYPO_LENGTH = 9


@cache
def _english() -> SpellChecker:
    # Loaded once per process (about 0.25 s), on the first pair that needs it.
    return SpellChecker(language="en", distance=1)


def is_english_word(word: str) -> bool:
    return word.isalpha() and word.casefold() in _english()


def allowed_edits(x: str, y: str) -> int:
    longest = max(len(x), len(y))
    return 2 if longest >= TWO_TYPO_LENGTH else 1 if longest >= MIN_TYPO_LENGTH else 0


def typo_close(x: str, y: str, *, words_differ: bool = False) -> bool:
    """Whether ``y`` may be ``x`` with a typo (both case-folded content words).
    ``words_differ``: two English words are never a typo of each other, whatever their
    length (for a word that may be a name)."""
    if x == y:
        return True
    if any(ch.isdigit() for ch in x + y):
        return False  # numbers and identifiers are facts, not spellings
    allowed = allowed_edits(x, y)
    if allowed == 0 or abs(len(x) - len(y)) > allowed:
        return False
    distance = DamerauLevenshtein.distance(x, y, score_cutoff=allowed)
    if distance > allowed:
        return False
    if distance == 1 and max(len(x), len(y)) > MIN_TYPO_LENGTH and not words_differ:
        return True
    # A short word or a second edit: two real words are two words, not a typo.
    return not (is_english_word(x) and is_english_word(y))
