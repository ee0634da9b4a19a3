"""Which pairs of a memoryRef's entries the update rules look at, never all pairs.

An update shares a subject word with what it updates and states a value of the same kind
(memory/sameness/updates.py), so entries are indexed under (subject word, kind of value)
keys: "standup" with a time, "@self" with a diet. A key held by more than
MAX_KEY_ENTRIES entries says little about which of them an entry updates (a template,
or a word every fact has), so it proposes nothing; an entry meets at most
MAX_UPDATE_CANDIDATES others, those sharing the most keys with it. A negated entry ("I
no longer eat meat") also meets entries sharing a subject word with no value, which is
how a negation comes and goes. Linear in the entries for a bounded key size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memory.sameness.updates import UpdateFacts

MAX_KEY_ENTRIES = 64
MAX_UPDATE_CANDIDATES = 8
_PLAIN = ""
_PERSON = "person"


def _typed_keys(facts: UpdateFacts) -> set[tuple[str, str]]:
    kinds = [str(kind) for kind in facts.values.by_kind]
    if facts.persons:
        kinds.append(_PERSON)
    return {(word, kind) for word in facts.subject for kind in kinds}


def update_candidates(
    facts: Sequence[UpdateFacts | None],
    alive: Sequence[int],
    recency: Sequence[tuple[object, ...]],
) -> list[tuple[int, int]]:
    """(older, newer) position pairs by ``recency`` (larger is said later), sorted."""
    index: dict[tuple[str, str], list[int]] = {}
    keys_of: dict[int, set[tuple[str, str]]] = {}
    for i in alive:
        fact = facts[i]
        if fact is None or fact.long or not fact.subject:
            continue
        keys = _typed_keys(fact) | {(word, _PLAIN) for word in fact.subject}
        keys_of[i] = keys
        for key in keys:
            index.setdefault(key, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for i, keys in keys_of.items():
        fact = facts[i]
        assert fact is not None
        asked = keys if fact.fact.negations else {k for k in keys if k[1] != _PLAIN}
        counts: Counter[int] = Counter()
        for key in asked:
            members = index[key]
            if len(members) <= MAX_KEY_ENTRIES:
                counts.update(members)
        counts.pop(i, None)
        best = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        for j, _ in best[:MAX_UPDATE_CANDIDATES]:
            pairs.add((i, j) if (recency[i], i) < (recency[j], j) else (j, i))
    return sorted(pairs)
