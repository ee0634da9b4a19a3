"""The re-embed workflow's activities: give entries that lack one a vector of the
configured model, page by page, and retire other models' vectors afterwards
(memory/indexes/vectors.py does the work)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.boundary import content_free
from activities.contracts import CATCH_UP_VECTORS, RETIRE_VECTORS
from activities.heartbeat import progress
from memory.store import PostgresMemoryStore
from runtime.product_metrics import ProductMetrics
from schemas.embeddings import (
    CatchUpVectorsRequest,
    CatchUpVectorsResult,
    EmbeddingCursor,
    RetireVectorsRequest,
    RetireVectorsResult,
)


class EmbeddingActivities:
    def __init__(self, store: PostgresMemoryStore) -> None:
        self.store = store

    def all(self) -> list[Callable[..., Any]]:
        return [self.catch_up_vectors, self.retire_vectors]

    @activity.defn(name=CATCH_UP_VECTORS.name)
    @content_free
    async def catch_up_vectors(self, request: CatchUpVectorsRequest) -> CatchUpVectorsResult:
        vectors = self.store.vectors
        model = vectors.model
        after = (request.after.memory_ref, request.after.entry_id) if request.after else None
        embedded = 0
        beat = progress()
        metrics = ProductMetrics.in_activity()
        for _ in range(request.max_pages):
            page = await vectors.catch_up(after, request.batch_size)
            embedded += page.embedded
            metrics.embedded(page.embedded)
            after = page.after
            beat({"embedded": embedded, "memoryRef": after[0] if after else None})
            if after is None:
                break
        return CatchUpVectorsResult(
            model=model.id if model else None,
            embedded=embedded,
            after=EmbeddingCursor(memory_ref=after[0], entry_id=after[1]) if after else None,
            done=after is None,
        )

    @activity.defn(name=RETIRE_VECTORS.name)
    @content_free
    async def retire_vectors(self, request: RetireVectorsRequest) -> RetireVectorsResult:
        model = self.store.vectors.model
        retired = await self.store.vectors.retire_other_models(request.batch_size)
        return RetireVectorsResult(model=model.id if model else None, retired=retired)
