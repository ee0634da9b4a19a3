"""What each leg of a search returns for one candidate: its id, the leg's measure (a BM25
score, higher is better; a cosine distance, lower is better) and when the entry was
written, so that equal fused scores put the newer entry first; and what the ranking
makes of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


class LegHit(NamedTuple):
    id: str
    value: float
    created_at: datetime


@dataclass(frozen=True)
class Ranked:
    """One entry of a search's ranking: its score, its rank in each leg that found it
    (None: that leg did not; both None: found as a neighbour of a hit) and when it was
    written (equal scores: newer first)."""

    id: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    created_at: datetime


def best_first(ranked: list[Ranked]) -> list[Ranked]:
    """Highest score first; equal scores: the newer entry first (a fact restated later
    is likelier current), then by id so the order is deterministic."""
    ranked.sort(key=lambda hit: hit.id)
    ranked.sort(key=lambda hit: hit.created_at, reverse=True)
    ranked.sort(key=lambda hit: hit.score, reverse=True)
    return ranked
