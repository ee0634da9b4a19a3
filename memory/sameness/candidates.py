"""Candidate pairs, never all pairs.

Duplicates: entries with the same normal form; then, within each *block* of entries
whose guarded facts are equal (numbers, identifiers, dates, currencies, negations: two
entries differing in one can never be duplicates), MinHash/LSH (datasketch) over the word
trigrams of one entry per normal form. Small blocks are compared pair by pair; LSH keeps
at most MAX_CANDIDATES_PER_ENTRY per entry, the most similar by estimated Jaccard, so a
template-heavy corpus ("Order #1 shipped", "Order #2 shipped", ...) costs a bounded
number of checks per entry.

Conflicts: entries whose words are the same once the guarded facts are set aside (the
same sentence frame) about the same names and whose values differ; groups of more than
MAX_FRAME entries are a template, not a dispute, and are skipped.

Deterministic for a given set of entries: fixed MinHash seed, positions in id order.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from itertools import combinations
from typing import TYPE_CHECKING

import numpy

from memory.sameness.fact_text import NEGATION_COMPANIONS, FactText, shingles

if TYPE_CHECKING:
    from datasketch import MinHash

# datasketch is imported where a pass uses it, not with this module: it loads scipy
# (0.3 s), which every process that imports the store (memoryctl, the API, a worker)
# would otherwise pay at start for the few that run a consolidation pass.

NUM_PERM = 64
# Estimated Jaccard of word trigrams at which two entries become candidates. Reworded,
# re-ordered, re-cased and re-spaced duplicates score 1.0 (fillers carry no trigrams), a
# typo'd one mostly 0.7 and above; the verification (conflict_guard.py) decides.
LSH_THRESHOLD = 0.6
MAX_CANDIDATES_PER_ENTRY = 50
# Blocks up to this size are compared pair by pair (cheaper than building an index).
SMALL_BLOCK = 8
MAX_FRAME = 32
SEED = 1


@cache
def _lsh_params() -> tuple[int, int]:
    """Bands and rows for the threshold, computed once (datasketch integrates for them on
    every index it builds otherwise)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    return (lsh.b, lsh.r)


BlockKey = tuple[object, ...]


def signatures(facts: Sequence[FactText]) -> list[MinHash | None]:
    """One MinHash per entry (None for an entry without content words)."""
    from datasketch import MinHash

    sets = [sorted(shingles(fact)) for fact in facts]
    present = [i for i, s in enumerate(sets) if s]
    # CRC-32 (C, deterministic in every process) instead of datasketch's SHA-1 default:
    # hashing the shingles was the bulk of the signature time.
    hashes = MinHash.bulk(
        [sets[i] for i in present], num_perm=NUM_PERM, seed=SEED, hashfunc=zlib.crc32
    )
    out: list[MinHash | None] = [None] * len(facts)
    for i, minhash in zip(present, hashes, strict=True):
        out[i] = minhash
    return out


def block_key(fact: FactText) -> BlockKey:
    return (fact.numbers, fact.identifiers, fact.dates, fact.currencies, fact.negations)


def candidate_pairs(
    facts: Sequence[FactText],
    minhashes: Sequence[MinHash | None],
    alive: Sequence[int],
    progress: Callable[[int], None] = lambda done: None,
) -> list[tuple[int, int]]:
    """Duplicate candidates (i, j), i < j, among ``alive`` positions."""
    pairs: set[tuple[int, int]] = set()
    # Same normal form, same guarded facts and names: duplicates of the first, for sure
    # ("$3,940" and "£3,940" share a normal form and are no such group).
    groups: dict[tuple[object, ...], list[int]] = {}
    for i in sorted(alive):
        key = (facts[i].normal, block_key(facts[i]), facts[i].capitalised)
        groups.setdefault(key, []).append(i)
    blocks: dict[BlockKey, list[int]] = {}
    for members in groups.values():
        first = members[0]
        pairs.update((first, m) for m in members[1:])
        blocks.setdefault(block_key(facts[first]), []).append(first)
    done = 0
    for block in blocks.values():
        if len(block) <= SMALL_BLOCK:
            pairs.update(combinations(block, 2))
        else:
            pairs.update(_lsh_pairs(block, minhashes))
        done += len(block)
        if done >= 5000:
            progress(done)
            done = 0
    return sorted(pairs)


def _lsh_pairs(
    block: Sequence[int], minhashes: Sequence[MinHash | None]
) -> Iterator[tuple[int, int]]:
    indexed = [i for i in block if minhashes[i] is not None]
    from datasketch import MinHashLSH

    lsh = MinHashLSH(num_perm=NUM_PERM, params=_lsh_params())
    with lsh.insertion_session(buffer_size=50_000) as session:
        for i in indexed:
            session.insert(i, minhashes[i], check_duplication=False)
    # The block's signatures as one matrix, built once: ranking a long candidate list
    # picks its rows in C instead of stacking them anew for every entry (a template
    # block of thousands made that quadratic in Python).
    signatures_of = (
        HashMatrix(indexed, minhashes) if len(indexed) > MAX_CANDIDATES_PER_ENTRY else None
    )
    for i in indexed:
        mine = _present(minhashes[i])
        found = [j for j in lsh.query(mine) if j > i]
        if signatures_of is not None and len(found) > MAX_CANDIDATES_PER_ENTRY:
            found = signatures_of.most_similar(mine, sorted(found))
        yield from ((i, j) for j in found)


def conflict_pairs(
    facts: Sequence[FactText], alive: Sequence[int], recency: Sequence[tuple[object, ...]]
) -> list[tuple[int, int]]:
    """Look-alikes to verify as conflicts: the same sentence frame (the words without the
    guarded facts) about the same names, with other values ("the trial lasts 14 days" /
    "... 21 days"). Each is paired with the newest of its group (``recency``: larger is
    newer), the value most likely current, so a dispute of k entries is k - 1 records,
    not every pair. The same statement about other names ("Alice approves refunds" /
    "Carol approves refunds") is never merged either, but it is another fact, not a
    dispute. A group larger than MAX_FRAME is a template ("Order N shipped"): skipped."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i in sorted(alive):
        frame = _frame(facts[i])
        if frame:
            groups.setdefault((frame, facts[i].capitalised), []).append(i)
    pairs: list[tuple[int, int]] = []
    for members in groups.values():
        if 1 < len(members) <= MAX_FRAME:
            newest = max(members, key=lambda i: (recency[i], i))
            pairs += [
                (min(i, newest), max(i, newest))
                for i in members
                if block_key(facts[i]) != block_key(facts[newest])
            ]
    return sorted(pairs)


class HashMatrix:
    """The MinHash values of a block's entries, one row per entry position."""

    def __init__(self, positions: Sequence[int], minhashes: Sequence[MinHash | None]) -> None:
        self.row_of = numpy.full(max(positions) + 1, -1, dtype=numpy.int64)
        self.row_of[numpy.asarray(positions)] = numpy.arange(len(positions))
        self.values = numpy.vstack([_present(minhashes[i]).hashvalues for i in positions])

    def most_similar(self, mine: MinHash, found: list[int]) -> list[int]:
        """The MAX_CANDIDATES_PER_ENTRY candidates with the highest estimated Jaccard
        (share of equal MinHash values), ties by position."""
        positions = numpy.asarray(found)
        rows = self.values[self.row_of[positions]]
        similarity = (rows == mine.hashvalues).sum(axis=1)
        order = numpy.lexsort((positions, -similarity))
        return [found[k] for k in order[:MAX_CANDIDATES_PER_ENTRY]]


def _frame(fact: FactText) -> frozenset[str]:
    """The words of a statement without its guarded facts, negation and its auxiliaries,
    and a plural or third-person "s" ("wants" / "does not want" share a frame)."""
    words = fact.word_set - fact.fact_words - NEGATION_COMPANIONS
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def _present(minhash: MinHash | None) -> MinHash:
    assert minhash is not None  # only entries with a signature are indexed
    return minhash
