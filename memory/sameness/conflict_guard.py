"""The decision for one candidate pair: duplicate, conflict or different.

A duplicate is the same fact restated: every content word of each text has an equal (or,
in texts of three or more content words, a one-typo) counterpart in the other, and the
guarded facts are identical and in the same order. Anything else is never merged:
- a conflict: the texts say the same thing except for a number, amount, identifier,
  date, negation or name ("the trial lasts 14 days" / "... 21 days"); recorded, and
  resolved only by supersession when both carry the same namespace/key slot;
- different: unrelated, or one says more than the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memory.sameness.fact_text import NEGATION_COMPANIONS, FactText
from memory.sameness.typos import typo_close

# Minimum content words before a typo is forgiven: in a two-word text one changed
# letter may be the whole fact ("cat"/"car"), so there only a misspelling that is no
# English word is; in a one-word text none.
TYPO_MIN_WORDS = 3
SHORT_TYPO_MIN_WORDS = 2
SHORT_TEXT_TYPO_LETTERS = 5


class ConflictKind(StrEnum):
    NUMBER = "number"
    AMOUNT = "amount"
    IDENTIFIER = "identifier"
    DATE = "date"
    NEGATION = "negation"
    NAME = "name"


@dataclass(frozen=True)
class Verdict:
    duplicate: bool
    conflicts: tuple[ConflictKind, ...] = ()

    @property
    def conflict(self) -> bool:
        return bool(self.conflicts)


DUPLICATE = Verdict(duplicate=True)
DIFFERENT = Verdict(duplicate=False)


def conflict_kinds(a: FactText, b: FactText) -> tuple[ConflictKind, ...]:
    """Which guarded facts differ. Empty: the two may be merged as far as facts go."""
    kinds: list[ConflictKind] = []
    if a.numbers != b.numbers:
        kinds.append(ConflictKind.AMOUNT if a.currencies or b.currencies else ConflictKind.NUMBER)
    elif a.currencies != b.currencies:
        kinds.append(ConflictKind.AMOUNT)
    if a.identifiers != b.identifiers:
        kinds.append(ConflictKind.IDENTIFIER)
    if a.dates != b.dates:
        kinds.append(ConflictKind.DATE)
    if a.negations != b.negations:
        kinds.append(ConflictKind.NEGATION)
    if not _same_names(a, b):
        kinds.append(ConflictKind.NAME)
    return tuple(kinds)


def _same_names(a: FactText, b: FactText) -> bool:
    """The same names, in the same order ("Alice pays Bob" is not "Bob pays Alice").
    A sentence-initial capital may be a name or not, so a name inside one text must be
    capitalised somewhere in the other; a text without case information must contain the
    other's names among its words."""
    if not (a.cased and b.cased):
        return set(a.names) <= b.word_set and set(b.names) <= a.word_set
    if not (set(a.names) <= set(b.capitalised) and set(b.names) <= set(a.capitalised)):
        return False
    common = set(a.capitalised) & set(b.capitalised)
    return [w for w in a.capitalised if w in common] == [w for w in b.capitalised if w in common]


def _may_be_typo(
    word: str, candidate: str, a: FactText, b: FactText, *, non_words_only: bool = False
) -> bool:
    """``candidate`` (of b) may be ``word`` (of a) misspelt. Never for a name: a word
    capitalised inside a sentence of a cased text, or capitalised on both sides ("Sara"
    / "Sarah"); never for a part of an identifier ("eu" of eu-west-1). A capital at the
    start of a sentence may be a name or not: it may match a lower-case typo only when
    the two are not both English words ("Rotate" / "rtoate", not "Sarah" / "sara")."""
    if word in a.names or candidate in b.names:
        return False
    # A Title Case text's capitals may each be a name: one is forgiven a typo only when
    # the other text writes its counterpart in lower case (so it is no name there).
    if word in a.title_words and candidate not in b.lower_words:
        return False
    if candidate in b.title_words and word not in a.lower_words:
        return False
    initial = (word in a.capitalised) + (candidate in b.capitalised)
    if initial == 2:
        return False
    if word in a.identifier_words or candidate in b.identifier_words:
        return False
    if non_words_only and max(len(word), len(candidate)) < SHORT_TEXT_TYPO_LETTERS:
        return False
    return typo_close(word, candidate, words_differ=non_words_only or initial == 1)


def _covered(
    a: FactText, b: FactText, ignore: frozenset[str], typos: bool, non_words_only: bool
) -> bool:
    """Every word of a (outside ``ignore``) is in b, or one typo off a word of b that
    may be misspelt (not a name, not part of an identifier)."""
    words, other = a.word_set - ignore, b.word_set - ignore
    missing = words - other
    if not missing:
        return True
    if not typos:
        return False
    unmatched = other - words
    return all(
        any(
            _may_be_typo(word, candidate, a, b, non_words_only=non_words_only)
            for candidate in unmatched
        )
        for word in missing
    )


def aligned(a: FactText, b: FactText, ignore: frozenset[str] = frozenset()) -> bool:
    """Every content word of each text (outside ``ignore``) is in the other, exactly or
    with one typo."""
    if not (a.word_set - ignore) and not (b.word_set - ignore):
        return a.normal == b.normal
    fewest = min(len(a.word_set), len(b.word_set))
    # In a text of two content words a typo is forgiven only in a word of five letters
    # or more and only when it is no English word ("A panda is climing"), never between
    # two words ("cat" / "car") nor in a short one ("plan" / "plam").
    typos = fewest >= SHORT_TYPO_MIN_WORDS
    non_words_only = fewest < TYPO_MIN_WORDS
    return _covered(a, b, ignore, typos, non_words_only) and _covered(
        b, a, ignore, typos, non_words_only
    )


def other_name(a: FactText, b: FactText) -> bool:
    """The same sentence about someone else: the only words that differ are
    capitalised on both sides ("Alice approves refunds" / "Carol approves refunds"),
    where a sentence-initial name escapes the guard's name reading."""
    only_a, only_b = a.word_set - b.word_set, b.word_set - a.word_set
    return bool(only_a and only_b) and only_a <= set(a.capitalised) and only_b <= set(b.capitalised)


def same_order(a: FactText, b: FactText) -> bool:
    """The words both texts share come in the same order, or one phrase moved to the
    other end of a clause ("for urgent requests, X prefers Y" / "X prefers Y for urgent
    requests"): two adjacent runs swapped. Anything else reorders the fact itself
    ("prefers email over Slack" / "prefers Slack over email"). Read once with each shared
    word at its first place, and once with every occurrence (a moved phrase that repeats
    a word, "walking around his pen with his mother", moves that word's first place)."""
    common = a.word_set & b.word_set
    x = list(dict.fromkeys(w for w in a.words if w in common))
    y = list(dict.fromkeys(w for w in b.words if w in common))
    if _swapped_runs(x, y):
        return True
    every_x = [w for w in a.words if w in common]
    every_y = [w for w in b.words if w in common]
    return len(every_x) != len(x) and _swapped_runs(every_x, every_y)


def _swapped_runs(x: list[str], y: list[str]) -> bool:
    """``y`` is ``x``, or ``x`` with two adjacent runs swapped."""
    if x == y:
        return True
    if sorted(x) != sorted(y):
        return False
    start = next(i for i, (p, q) in enumerate(zip(x, y, strict=True)) if p != q)
    end = len(x)
    while x[end - 1] == y[end - 1]:
        end -= 1
    return any(x[split:end] + x[start:split] == y[start:end] for split in range(start + 1, end))


def compare(a: FactText, b: FactText) -> Verdict:
    kinds = conflict_kinds(a, b)
    if not kinds:
        if aligned(a, b) and same_order(a, b):
            return DUPLICATE
        return Verdict(False, (ConflictKind.NAME,)) if other_name(a, b) else DIFFERENT
    if ConflictKind.NAME in kinds and len(kinds) > 1:
        # Other names and other values: a statement about someone else, not a rival
        # value of the same fact ("Acme's trial lasts 14 days" / "Globex's ... 30 days").
        return DIFFERENT
    ignore = a.fact_words | b.fact_words
    if ConflictKind.NEGATION in kinds:
        ignore |= NEGATION_COMPANIONS
    if aligned(a, b, ignore):
        return Verdict(duplicate=False, conflicts=kinds)
    return DIFFERENT
