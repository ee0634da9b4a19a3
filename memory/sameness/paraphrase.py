"""Paraphrases: the same fact in other words ("Acme buys from Globex" / "Acme purchases
from Globex"), proposed by sentence vectors and accepted only word for word.

Candidates: pairs of texts in one guard block (equal numbers, identifiers, dates,
amounts, negations: consolidation's blocks) whose sentence vectors under the offline
static model are at least CANDIDATE_COSINE apart, at most PARAPHRASE_NEIGHBOURS per
text (numpy over unit vectors, in chunks, so a block of 100k costs matrix products, not
Python loops).

Acceptance (``paraphrases``), every clause required:
- the conflict guard finds nothing (numbers, amounts, dates, identifiers, negations,
  names in order) and the texts are not the same statement about other names;
- the words both texts share come in the same order (consolidation's order rule:
  "prefers email over Slack" is not "prefers Slack over email", whose vectors are equal);
- the words only one text has pair off one to one with words only the other has, each
  pair at least SYNONYM_COSINE apart as single words under the same model, at most
  MAX_SUBSTITUTIONS of them. Measured on the model: synonyms score 0.66-0.82 ("start" /
  "begin" 0.82, "buy" / "purchase" 0.79, "big" / "large" 0.74, "car" / "automobile"
  0.67), antonyms and co-hyponyms 0.4 at most ("start" / "stop" -0.04, "always" /
  "never" 0.16, "likes" / "hates" 0.06, "east" / "west" 0.31, "more" / "less" 0.39). A
  text that says more ("Bob likes tea and coffee") has a word with no counterpart and is
  never a paraphrase of the shorter one.

A static model averages word vectors; the word alignment, not the sentence score,
decides, so what the model cannot tell apart in a sentence (order, negation) is decided
by the rules above.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from memory.embeddings.choice import static_embedder
from memory.embeddings.model import Vectors
from memory.sameness.candidates import block_key
from memory.sameness.conflict_guard import conflict_kinds, other_name, same_order
from memory.sameness.fact_text import FactText

# Off until it merges nothing it should not on the public test half (docs/performance.md
# "Consolidation on public data"); consolidation and the distiller read this one default.
PARAPHRASES_BY_DEFAULT = False
CANDIDATE_COSINE = 0.80
SYNONYM_COSINE = 0.60
MAX_SUBSTITUTIONS = 3
PARAPHRASE_NEIGHBOURS = 10
# Rows per matrix product when looking for neighbours (bounds memory: rows x block).
CHUNK_ROWS = 1024


@lru_cache(maxsize=65_536)
def _word_vector(word: str) -> Vectors:
    return static_embedder().embed_now([word])[0]


def _word_cosine(x: str, y: str) -> float:
    return float(_word_vector(x) @ _word_vector(y))


def synonym_aligned(a: FactText, b: FactText) -> bool:
    """The words only one text has pair off, one to one, with near-synonyms of the
    other's (greedy by cosine, ties by the words themselves: deterministic)."""
    only_a = sorted(a.word_set - b.word_set)
    only_b = sorted(b.word_set - a.word_set)
    if len(only_a) != len(only_b) or len(only_a) > MAX_SUBSTITUTIONS:
        return False
    pairs = sorted(
        ((-_word_cosine(x, y), x, y) for x in only_a for y in only_b),
    )
    used_a: set[str] = set()
    used_b: set[str] = set()
    for negative_cosine, x, y in pairs:
        if x in used_a or y in used_b:
            continue
        if -negative_cosine < SYNONYM_COSINE:
            return False
        used_a.add(x)
        used_b.add(y)
    return len(used_a) == len(only_a)


def paraphrases(a: FactText, b: FactText) -> bool:
    """``a`` restates ``b`` in other words (see the module doc). Exact and lexical
    duplicates are consolidation's other stages; this is only what they miss."""
    if not (a.word_set and b.word_set) or a.word_set == b.word_set:
        return False
    if conflict_kinds(a, b) or other_name(a, b):
        return False
    return same_order(a, b) and synonym_aligned(a, b)


def sentence_vectors(texts: Sequence[str]) -> Vectors:
    return static_embedder().embed_now(texts)


def neighbour_pairs(block: Sequence[int], vectors: Vectors) -> Iterator[tuple[int, int]]:
    """Pairs (i, j), i < j, of positions in ``block`` whose rows of ``vectors`` are at
    least CANDIDATE_COSINE apart, at most PARAPHRASE_NEIGHBOURS per position."""
    if len(block) < 2:
        return
    positions = np.asarray(sorted(block))
    matrix = vectors[positions]
    for start in range(0, len(positions), CHUNK_ROWS):
        scores = matrix[start : start + CHUNK_ROWS] @ matrix.T
        for offset, row in enumerate(scores):
            me = start + offset
            row[: me + 1] = -1.0  # each pair once, never with itself
            close = np.flatnonzero(row >= CANDIDATE_COSINE)
            if len(close) > PARAPHRASE_NEIGHBOURS:
                order = np.lexsort((close, -row[close]))
                close = close[order[:PARAPHRASE_NEIGHBOURS]]
            for other in close:
                yield int(positions[me]), int(positions[other])


def paraphrase_pairs(
    facts: Sequence[FactText], vectors: Vectors, alive: Sequence[int]
) -> list[tuple[int, int]]:
    """Paraphrase candidates among ``alive``: neighbours within each guard block (two
    entries of different blocks differ in a guarded fact and are never merged)."""
    blocks: dict[object, list[int]] = {}
    for i in sorted(alive):
        if facts[i].word_set:
            blocks.setdefault((block_key(facts[i]), facts[i].names), []).append(i)
    return sorted({pair for block in blocks.values() for pair in neighbour_pairs(block, vectors)})
