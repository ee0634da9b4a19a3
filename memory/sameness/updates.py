"""Whether a later fact updates an earlier one: deterministic rules, no model.

Two texts are about **the same subject** when they share a subject word (a content word
that spells no value and is not a word of change or of the attribute itself:
"standup", "Atlas", "OPS-412", the speaker's "I"/"my"), and the later text's subject
words cover the earlier's (or half of them, when a name or identifier is shared). They
state **the same attribute with another value** when exactly one kind of value differs
(memory/sameness/stated_values.py: a time or date, a status, a priority, a diet, an
address or place, a number, an identifier, or the person holding a role), both texts
stating one; a negation may come and go with it ("no longer vegetarian").

- **supersedes**: the same subject, one kind of value changed, and the later text
  carries a word of change the earlier does not ("now", "moves to", "no longer",
  "instead", "pushed back", "raised to", "correction", "from now on", ...);
- **conflicts**: the same subject and one kind of value changed, without such a word,
  or with the subject only partly covered: the rules cannot tell an update from two
  facts, so both stay, both flagged; for a person, only when a word of role is there
  ("leads", "owner"): "Alice approves refunds" / "Carol approves refunds" are two facts;
- nothing otherwise: two kinds changed (another ticket and another status is another
  ticket), other names or identifiers than the changed value, or nothing shared.

Never a merge: these decisions only link two entries that both stay.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache

import snowballstemmer

from memory.sameness.fact_text import STOPWORDS, FactText, read_fact_text
from memory.sameness.fillers import filler_end
from memory.sameness.stated_values import StatedValues, ValueKind, read_values
from memory.sameness.update_words import CUE, NOT_SUBJECT, OLD_VALUE, ROLE_WORDS, SELF, cue_key

# Past this many content words a text holds several facts; one kind changing among
# them says little about which.
MAX_CONTENT_WORDS = 40
# Shared subject words over all of either's (Jaccard) for the two to be one subject.
MIN_SUBJECT_OVERLAP = 0.5
# A person holding a role is named in at most this many words ("Priya Natarajan").
MAX_NAME_WORDS = 2


class Relation(StrEnum):
    SUPERSEDES = "supersedes"
    CONFLICTS = "conflicts"


_CAPITALISED = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s?$")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")


def _persons(body: str, consumed: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Capitalised words (case-folded): all of them, and those inside a sentence (surely
    names). "Washington's" counts, which the fact reading leaves out."""
    every, inside = set(), set()
    for match in _CAPITALISED.finditer(body):
        word = _POSSESSIVE.sub("", match.group())
        if not word.isalpha() or not word[0].isupper() or (len(word) > 1 and word.isupper()):
            continue  # a number or an identifier ("Q3", "OPS-412"), an acronym, "I"
        folded = word.casefold()
        if folded in consumed or folded in NOT_SUBJECT or folded in SELF or folded in STOPWORDS:
            continue
        every.add(folded)
        before = body[: match.start()]
        if before.strip() and not _SENTENCE_END.search(before):
            inside.add(folded)
    return frozenset(every), frozenset(inside)


@cache
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    # A memoryRef's vocabulary is small beside its entries: most words repeat.
    return str(_stemmer().stemWord(word))


@dataclass(frozen=True)
class UpdateFacts:
    """What update detection reads from one text, once."""

    fact: FactText
    values: StatedValues
    # Stemmed subject words ("@self" for the speaker).
    subject: frozenset[str]
    # Names and identifiers outside any value: who or what the fact is about.
    identity: frozenset[str]
    # Capitalised words that may name a person holding a role (case-folded), and those
    # inside a sentence (surely names).
    persons: frozenset[str]
    names: frozenset[str]
    cues: frozenset[str]
    roles: bool
    long: bool


def readable(content: str) -> str:
    """What an entry says: a JSON object's string values (an OpenIntent ``value`` is
    stored as its canonical JSON, whose keys and braces say nothing about the fact),
    otherwise the content itself."""
    if not content.startswith("{"):
        return content
    try:
        value = json.loads(content)
    except ValueError:
        return content
    strings: list[str] = []

    def collect(item: object) -> None:
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            for inner in item.values():
                collect(inner)
        elif isinstance(item, list):
            for inner in item:
                collect(inner)

    collect(value)
    return ". ".join(strings) if strings else content


def read_update_facts(text: str, fact: FactText | None = None) -> UpdateFacts:
    """``text``: what the entry says (``readable``); ``fact``: its reading, if made."""
    fact = fact or read_fact_text(text)
    # Read on the whole text: an opening "Update:" or "Correction:" is the cue.
    cues = frozenset(cue_key(m.group()) for m in CUE.finditer(text))
    # The values are read without the one it names as replaced ("changed from 4").
    stated = OLD_VALUE.sub(" ", text) if cues else text
    values = read_values(stated, fact if stated == text else read_fact_text(stated))
    body = stated[filler_end(stated) :]
    cue_words = {w for cue in cues for w in re.findall(r"[^\W_]+", cue)}
    words = re.findall(r"[^\W_]+", body.casefold())
    subject = set()
    for word in words:
        if word in SELF:
            subject.add("@self")
        elif (
            word not in NOT_SUBJECT
            and word not in values.consumed
            and word not in cue_words
            and word in fact.word_set
        ):
            subject.add(_stem(word))
    persons, names = _persons(body, values.consumed) if fact.cased else (frozenset(), frozenset())
    identity = (names | values.by_kind.get(ValueKind.IDENTIFIER, frozenset())) - values.consumed
    return UpdateFacts(
        fact=fact,
        values=values,
        subject=frozenset(subject),
        identity=frozenset(identity),
        persons=persons,
        names=names,
        cues=cues,
        roles=not ROLE_WORDS.isdisjoint(words),
        long=len(fact.words) > MAX_CONTENT_WORDS,
    )


@dataclass(frozen=True)
class UpdateVerdict:
    relation: Relation | None
    kinds: tuple[ValueKind, ...] = ()


NO_UPDATE = UpdateVerdict(None)


def _person_values(older: UpdateFacts, newer: UpdateFacts) -> tuple[set[str], set[str]]:
    """The capitalised words each text has and the other does not, inflections aside
    ("Democrats" / "Democratic" name no other person)."""

    def missing(persons: frozenset[str], other: UpdateFacts) -> set[str]:
        stems = {_stem(word) for word in other.fact.word_set}
        return {p for p in persons if p not in other.fact.word_set and _stem(p) not in stems}

    return missing(older.persons, newer), missing(newer.persons, older)


def _differs(old: frozenset[str], new: frozenset[str]) -> bool:
    """Each states a value the other does not: one value replaced by another, not one
    text merely leaving a value out."""
    return bool(old - new) and bool(new - old)


def _numbers_differ(old: frozenset[str], new: frozenset[str]) -> bool:
    """Numbers of one unit ("14 days" / "21 days") differ; a tax rate (%) and an amount
    (¤) are two attributes, not two values."""
    units = {value.split(":", 1)[0] for value in old} & {value.split(":", 1)[0] for value in new}
    return any(
        _differs(
            frozenset(v for v in old if v.startswith(unit + ":")),
            frozenset(v for v in new if v.startswith(unit + ":")),
        )
        for unit in units
    )


def _changed_kinds(older: UpdateFacts, newer: UpdateFacts) -> set[ValueKind]:
    changed = set()
    for kind in set(older.values.by_kind) & set(newer.values.by_kind):
        old, new = older.values.by_kind[kind], newer.values.by_kind[kind]
        if _numbers_differ(old, new) if kind is ValueKind.NUMBER else _differs(old, new):
            changed.add(kind)
    # A person: a capitalised word only one text has, on both sides, one of them surely
    # a name (inside a sentence): "Marco leads Atlas" / "Atlas's lead is now Priya".
    old_only, new_only = _person_values(older, newer)
    if old_only and new_only and (old_only & older.names or new_only & newer.names):
        changed.add(ValueKind.PERSON)
    if older.fact.negations != newer.fact.negations:
        changed.add(ValueKind.NEGATION)
    return changed


def decide(older: UpdateFacts, newer: UpdateFacts) -> UpdateVerdict:
    """The relation of ``newer`` (said later) to ``older``."""
    if older.long or newer.long:
        return NO_UPDATE
    changed = _changed_kinds(older, newer)
    kinds = changed - {ValueKind.NEGATION}
    if len(kinds) > 1 or not changed:
        return NO_UPDATE
    old_only, new_only = _person_values(older, newer)
    person_values = old_only | new_only if ValueKind.PERSON in kinds else set()
    # The value that changed is no part of the subject ("Marco" / "Priya", "U2" / "U3").
    values = {_stem(p) for p in person_values}
    if ValueKind.IDENTIFIER in kinds:
        changed_ids = (
            older.values.by_kind[ValueKind.IDENTIFIER] ^ newer.values.by_kind[ValueKind.IDENTIFIER]
        )
        values |= {_stem(w) for i in changed_ids for w in re.findall(r"[^\W_]+", i)}
    old_subject = older.subject - values
    new_subject = newer.subject - values
    shared = old_subject & new_subject
    if not shared:
        return NO_UPDATE
    # Other names or identifiers than the value that changed: another subject.
    old_identity = older.identity - person_values
    new_identity = newer.identity - person_values
    if ValueKind.IDENTIFIER in kinds:
        old_identity -= older.values.by_kind[ValueKind.IDENTIFIER]
        new_identity -= newer.values.by_kind[ValueKind.IDENTIFIER]
    if old_identity and new_identity and not (old_identity & new_identity):
        return NO_UPDATE
    old_ids = older.values.by_kind.get(ValueKind.IDENTIFIER, frozenset())
    new_ids = newer.values.by_kind.get(ValueKind.IDENTIFIER, frozenset())
    # An identifier both state ("OPS-412") ties two texts to one subject, unless
    # identifiers are the value that changed (a version in a region).
    tied = bool(old_ids & new_ids) and ValueKind.IDENTIFIER not in kinds
    cover = len(shared) / len(old_subject)
    reverse_cover = len(shared) / len(new_subject)
    overlap = len(shared) / len(old_subject | new_subject)
    changes = newer.cues - older.cues
    if not kinds:
        # Only a negation came or went: the word of change must be one of negation ("no
        # longer", "instead", "correction"), not the changed phrase itself ("has not
        # been resolved" / "has been resolved" says the status, not that it changed).
        changes = frozenset(cue for cue in changes if not cue.startswith("has been"))
    if ValueKind.PERSON in kinds:
        if not (older.roles or newer.roles or changes):
            return NO_UPDATE  # the same statement about someone else: another fact
        if max(len(old_only), len(new_only)) > MAX_NAME_WORDS:
            return NO_UPDATE  # several people changed: not one role's new holder
    # One subject: what one text says the subject is, the other says too, and most of
    # what either says is shared: "the Q3 report" / "the Q3 report deadline", not "the
    # growth team" / "the platform team" (each has a word the other lacks) nor "the
    # report" / "Priya reviews the report draft".
    contained = cover == 1 or reverse_cover == 1
    if not (contained and overlap >= MIN_SUBJECT_OVERLAP):
        return NO_UPDATE
    verdict_kinds = tuple(sorted(changed))
    # A supersession also needs all of the earlier subject in the later text, or an
    # identifier both name ("Ticket OPS-412 is open" / "OPS-412 has been resolved").
    if changes and (cover == 1 or tied):
        return UpdateVerdict(Relation.SUPERSEDES, verdict_kinds)
    return UpdateVerdict(Relation.CONFLICTS, verdict_kinds)
