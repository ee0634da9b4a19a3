"""Restatements among texts seen one at a time: for each new text, an earlier text it
restates, by consolidation's own rules, so a dream spends its budget on a fact once
(memory/distillation/packing.py) the way a consolidation pass would merge it.

Candidates come from the offline static model's vectors of the case-folded texts (a
re-cased copy has the same vector), at least CANDIDATE_COSINE apart (lower than the
paraphrase stage's: a typo changes a word's sub-word tokens, "shellfish" / "shelfish"
scores 0.78), the closest MAX_CHECKED first; each is verified by the conflict guard and
the lexical verifier (conflict_guard.compare) and, when ``with_paraphrases`` is on, by
the paraphrase rule (paraphrase.py). Deterministic: the same texts in the same order
give the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.embeddings.model import Vectors
from memory.embeddings.static_model import MODEL
from memory.sameness.conflict_guard import compare
from memory.sameness.fact_text import FactText
from memory.sameness.paraphrase import paraphrases, sentence_vectors

CANDIDATE_COSINE = 0.6
# Closest earlier texts verified per new text: restatements sit at the top.
MAX_CHECKED = 8


def restates(a: FactText, b: FactText, *, with_paraphrases: bool) -> bool:
    if compare(a, b).duplicate:
        return True
    return with_paraphrases and paraphrases(a, b)


class Restatements:
    def __init__(self, *, with_paraphrases: bool) -> None:
        self.with_paraphrases = with_paraphrases
        self._facts: list[FactText] = []
        self._matrix = np.zeros((64, MODEL.dimensions), dtype=np.float32)

    @staticmethod
    def vectors(texts: Sequence[str]) -> Vectors:
        """One vector per text, for find() and add(): a page at a time is cheapest."""
        return sentence_vectors([text.casefold() for text in texts])

    def find(self, fact: FactText, vector: Vectors) -> int | None:
        """The position (in add() order) of an earlier text that ``fact`` restates."""
        count = len(self._facts)
        if count == 0:
            return None
        scores = self._matrix[:count] @ vector
        close = np.flatnonzero(scores >= CANDIDATE_COSINE)
        if len(close) == 0:
            return None
        ranked = close[np.lexsort((close, -scores[close]))][:MAX_CHECKED]
        for position in ranked:
            if restates(fact, self._facts[position], with_paraphrases=self.with_paraphrases):
                return int(position)
        return None

    def add(self, fact: FactText, vector: Vectors) -> int:
        count = len(self._facts)
        if count == len(self._matrix):
            grown = np.zeros((2 * count, self._matrix.shape[1]), dtype=np.float32)
            grown[:count] = self._matrix
            self._matrix = grown
        self._matrix[count] = vector
        self._facts.append(fact)
        return count
