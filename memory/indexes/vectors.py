"""Vectors of entries: computed from the content as stored (after the SR-1 chokepoint),
written in the transaction of the write they describe, and caught up in pages for
entries that have none under the configured model (written while an endpoint was down,
or before a model change).

A vector counts only while its ``content_sha256`` is the entry's current one, so an edit
made by any path (consolidation re-redacting a survivor, an update) can never leave a
search reading the old text's vector; the catch-up replaces it. Vectors are deleted with
their entry by the foreign key (forget, TTL, erasure, delete).

Embedding never holds a transaction open: texts are embedded first, then written. A
failure of the model loses no write: the entry is stored without a vector and the
catch-up embeds it later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import Text, bindparam, cast, exists, select, tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.embeddings.model import Embedder, EmbeddingModel, EmbeddingUnavailable, Vectors
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.tenant_scope import all_tenants

ENTRIES, EMBEDDINGS = tables.entries, tables.embeddings
_COLUMNS = (
    "tenant",
    "memory_ref",
    "entry_id",
    "model",
    "dimensions",
    "content_sha256",
    "embedded_at",
)
log = logging.getLogger("agent_memory.embeddings")

# The vector goes as pgvector's text form, formatted here ('.9g': every float32 round
# trips exactly) at about twice the speed of pgvector's own formatter.
_INSERT = insert(EMBEDDINGS).values(
    {
        **{name: bindparam(name) for name in _COLUMNS},
        "embedding": cast(bindparam("embedding", type_=Text()), VECTOR()),
    }
)
_UPSERT = _INSERT.on_conflict_do_update(
    index_elements=[EMBEDDINGS.c.memory_ref, EMBEDDINGS.c.entry_id, EMBEDDINGS.c.model],
    set_={
        name: _INSERT.excluded[name]
        for name in ("dimensions", "content_sha256", "embedding", "embedded_at")
    },
)


@dataclass(frozen=True)
class CatchUpPage:
    """One page of the catch-up: how many entries got a vector, and where the next page
    starts (``None``: nothing is left after this page)."""

    embedded: int
    after: tuple[str, str] | None


class EntryVectors:
    def __init__(self, db: Database, embedder: Embedder | None) -> None:
        self.db = db
        self.embedder = embedder

    @property
    def model(self) -> EmbeddingModel | None:
        return self.embedder.model if self.embedder else None

    async def compute(self, contents: Sequence[str]) -> Vectors | None:
        """Vectors for ``contents`` (already redacted), or None when there is no model or
        it failed: the write goes on and the catch-up embeds it later."""
        if self.embedder is None or not contents:
            return None
        try:
            return await self.embedder.embed(contents)
        except EmbeddingUnavailable as error:
            log.warning("writing %d entries without vectors: %s", len(contents), error)
            return None

    async def compute_strict(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, or EmbeddingUnavailable (a search's query: nothing to
        fall back on but the caller's own choice)."""
        if self.embedder is None:
            raise EmbeddingUnavailable("no embedding model is configured")
        return await self.embedder.embed(texts)

    async def store(
        self,
        connection: AsyncConnection,
        rows: Sequence[dict[str, Any]],
        vectors: Iterable[Any] | None,
        now: datetime,
    ) -> None:
        """Insert or replace the vectors of ``rows`` (dicts with tenant, memory_ref, id,
        content_sha256), inside the caller's transaction."""
        model = self.model
        if model is None or vectors is None or not rows:
            return
        values = [
            {
                "tenant": row["tenant"],
                "memory_ref": row["memory_ref"],
                "entry_id": row["id"],
                "model": model.id,
                "dimensions": model.dimensions,
                "content_sha256": row["content_sha256"],
                "embedding": vector_text(vector),
                "embedded_at": now,
            }
            for row, vector in zip(rows, vectors, strict=True)
        ]
        # One statement, compiled once and cached: the rows go as executemany, which the
        # driver batches (a multi-VALUES statement built per call cost a fresh compile,
        # most of a put's added time).
        await connection.execute(_UPSERT, values)

    async def catch_up(self, after: tuple[str, str] | None, batch_size: int) -> CatchUpPage:
        """Embed up to ``batch_size`` live entries, of every tenant, that have no current
        vector under the configured model, in (memoryRef, id) order after ``after``."""
        model = self.model
        if model is None:
            return CatchUpPage(0, None)
        has_vector = exists().where(
            EMBEDDINGS.c.memory_ref == ENTRIES.c.memory_ref,
            EMBEDDINGS.c.entry_id == ENTRIES.c.id,
            EMBEDDINGS.c.model == model.id,
            EMBEDDINGS.c.content_sha256 == ENTRIES.c.content_sha256,
        )
        page = (
            select(
                ENTRIES.c.tenant,
                ENTRIES.c.memory_ref,
                ENTRIES.c.id,
                ENTRIES.c.content,
                ENTRIES.c.content_sha256,
            )
            .where(ENTRIES.c.invalidated_at.is_(None), ~has_vector)
            .order_by(ENTRIES.c.memory_ref, ENTRIES.c.id)
            .limit(batch_size)
            .execution_options(**all_tenants("embedding catch-up of every memoryRef"))
        )
        if after is not None:
            page = page.where(tuple_(ENTRIES.c.memory_ref, ENTRIES.c.id) > tuple_(*after))
        async with self.db.reading() as connection:
            rows = [dict(row._mapping) for row in (await connection.execute(page)).all()]
        if not rows:
            return CatchUpPage(0, None)
        vectors = await self.compute([row["content"] for row in rows])
        if vectors is None:
            raise EmbeddingUnavailable("the embedding model is unavailable")
        async with self.db.writing() as connection:
            # Held until commit: an entry forgotten or edited meanwhile is skipped (its
            # checksum no longer matches), and one forgotten after waits for this insert
            # and then takes its vector along.
            keys = [(row["memory_ref"], row["id"], row["content_sha256"]) for row in rows]
            still = (
                select(ENTRIES.c.memory_ref, ENTRIES.c.id)
                .where(
                    tuple_(ENTRIES.c.memory_ref, ENTRIES.c.id, ENTRIES.c.content_sha256).in_(keys)
                )
                .with_for_update(key_share=True)
                .execution_options(**all_tenants("embedding catch-up of every memoryRef"))
            )
            current = {tuple(key) for key in (await connection.execute(still)).all()}
            kept = [
                (row, vector)
                for row, vector in zip(rows, vectors, strict=True)
                if (row["memory_ref"], row["id"]) in current
            ]
            if kept:
                await self.store(
                    connection, [row for row, _ in kept], [v for _, v in kept], self.db.now()
                )
        last = rows[-1]
        more = len(rows) == batch_size
        return CatchUpPage(len(kept), (last["memory_ref"], last["id"]) if more else None)

    async def retire_other_models(self, batch_size: int) -> int:
        """Delete up to ``batch_size`` vectors of models other than the configured one
        (after a model change has been caught up). Returns how many went."""
        model = self.model
        if model is None:
            return 0
        victims = (
            select(EMBEDDINGS.c.memory_ref, EMBEDDINGS.c.entry_id, EMBEDDINGS.c.model)
            .where(EMBEDDINGS.c.model != model.id)
            .limit(batch_size)
        )
        gone = (
            EMBEDDINGS.delete()
            .where(
                tuple_(EMBEDDINGS.c.memory_ref, EMBEDDINGS.c.entry_id, EMBEDDINGS.c.model).in_(
                    victims
                )
            )
            .execution_options(**all_tenants("retiring another model's vectors"))
        )
        async with self.db.writing() as connection:
            return (await connection.execute(gone)).rowcount


def vector_text(vector: Any) -> str:
    return "[" + ",".join(map("{:.9g}".format, vector.tolist())) + "]"
