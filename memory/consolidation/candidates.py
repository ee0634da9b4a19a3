"""Candidate pairs, never all pairs: entries with the same normal form, then MinHash/LSH
(datasketch) over the word trigrams of one entry per normal form.

Deterministic for a given set of entries: fixed MinHash seed, sorted ids, and a per-entry
cap that keeps the most similar candidates by estimated Jaccard (ties by position), so a
template-heavy corpus ("Order #1 shipped", "Order #2 shipped", ...) costs a bounded
number of checks per entry instead of every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from datasketch import MinHash, MinHashLSH

from memory.consolidation.fact_text import FactText, shingles

NUM_PERM = 64
# Estimated Jaccard of word trigrams at which two entries become candidates. Typo'd and
# reworded duplicates score 0.7 and above; the verification (conflict_guard.py) decides.
LSH_THRESHOLD = 0.5
MAX_CANDIDATES_PER_ENTRY = 50
SEED = 1


def signatures(facts: Sequence[FactText]) -> list[MinHash | None]:
    """One MinHash per entry (None for an entry without content words)."""
    sets = [sorted(shingles(fact)) for fact in facts]
    present = [i for i, s in enumerate(sets) if s]
    hashes = MinHash.bulk([sets[i] for i in present], num_perm=NUM_PERM, seed=SEED)
    out: list[MinHash | None] = [None] * len(facts)
    for i, minhash in zip(present, hashes, strict=True):
        out[i] = minhash
    return out


def exact_groups(facts: Sequence[FactText], alive: Sequence[int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i in alive:
        groups.setdefault(facts[i].normal, []).append(i)
    return groups


def candidate_pairs(
    facts: Sequence[FactText],
    minhashes: Sequence[MinHash | None],
    alive: Sequence[int],
    progress: Callable[[int], None] = lambda done: None,
) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, among ``alive`` positions: every pair within a normal form,
    and LSH candidates between the first entries of different normal forms."""
    pairs: set[tuple[int, int]] = set()
    representatives: list[int] = []
    for members in exact_groups(facts, alive).values():
        first = members[0]
        representatives.append(first)
        pairs.update((min(first, m), max(first, m)) for m in members[1:])
    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    indexed = [i for i in sorted(representatives) if minhashes[i] is not None]
    with lsh.insertion_session(buffer_size=50_000) as session:
        for i in indexed:
            session.insert(i, minhashes[i], check_duplication=False)
    for done, i in enumerate(indexed, 1):
        mine = minhashes[i]
        assert mine is not None
        found = [j for j in lsh.query(mine) if j > i]
        if len(found) > MAX_CANDIDATES_PER_ENTRY:
            found.sort(key=lambda j: (-mine.jaccard(_present(minhashes[j])), j))
            found = found[:MAX_CANDIDATES_PER_ENTRY]
        pairs.update((i, j) for j in found)
        if done % 5000 == 0:
            progress(done)
    return sorted(pairs)


def _present(minhash: MinHash | None) -> MinHash:
    assert minhash is not None  # only entries with a signature are indexed
    return minhash
