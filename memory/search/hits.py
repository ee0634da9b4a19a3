"""What each leg of a search returns for one candidate: its id, the leg's measure (a BM25
score, higher is better; a cosine distance, lower is better) and when the entry was
written, so that equal fused scores put the newer entry first."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class LegHit(NamedTuple):
    id: str
    value: float
    created_at: datetime
