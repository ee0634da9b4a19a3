"""Vectors of entries, a derived index of their content: computed from the content as
stored (after the SR-1 chokepoint), written or dropped by the one writer of entry
content (memory/entries/content.py) in the transaction that writes the content, and
caught up in pages for entries that have none under the configured model (written while
an endpoint was down, rewritten inside a transaction, or before a model change).

A vector is stored only for the content it was computed from: ``ComputedVectors`` are
keyed by the content's checksum, and the writer deletes every other vector of an entry
whose content it changes. So no row of memory_embeddings is ever a copy of text an
entry no longer says (forget, TTL and SR-1 rewrites reach vectors too), and a search
that joins on the checksum can never read an old text's vector. Vectors are deleted with
their entry by the foreign key (forget, TTL, erasure, delete).

Embedding never holds a transaction open: texts are embedded first, then written. A
failure of the model loses no write: the entry is stored without a vector and the
catch-up embeds it later.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import Select, Text, any_, bindparam, cast, delete, exists, select, tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.embeddings.model import Embedder, EmbeddingModel, EmbeddingUnavailable, Vectors
from memory.indexes.content_checksum import content_checksum
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.sql_arrays import texts as bound_texts
from memory.storage.tenant_scope import all_tenants, scoped
from schemas.memory_ref import MemoryRef

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
class ComputedVectors:
    """Vectors computed (outside any transaction) for contents as they will be stored,
    keyed by each content's sha256: the writer stores one only on an entry whose
    content has exactly that checksum, so a vector can never land beside other text."""

    model: EmbeddingModel
    by_checksum: dict[str, Any]


# An entry's vectors of any model whose checksum is not the entry's current one: copies
# of text the entry no longer says.
_STALE = EMBEDDINGS.c.content_sha256 != (
    select(ENTRIES.c.content_sha256)
    .where(ENTRIES.c.memory_ref == EMBEDDINGS.c.memory_ref, ENTRIES.c.id == EMBEDDINGS.c.entry_id)
    .scalar_subquery()
)


async def store_vectors(
    connection: AsyncConnection,
    rows: Sequence[Mapping[str, Any]],
    computed: ComputedVectors | None,
    now: datetime,
) -> None:
    """Insert or replace the vectors of ``rows`` (mappings with tenant, memory_ref, id,
    content_sha256) that ``computed`` holds for their exact content, inside the
    caller's transaction."""
    if computed is None:
        return
    model = computed.model
    values = [
        {
            "tenant": row["tenant"],
            "memory_ref": row["memory_ref"],
            "entry_id": row["id"],
            "model": model.id,
            "dimensions": model.dimensions,
            "content_sha256": row["content_sha256"],
            "embedding": vector_text(computed.by_checksum[row["content_sha256"]]),
            "embedded_at": now,
        }
        for row in rows
        if row["content_sha256"] in computed.by_checksum
    ]
    if values:
        # One statement, compiled once and cached: the rows go as executemany, which the
        # driver batches (a multi-VALUES statement built per call cost a fresh compile,
        # most of a put's added time).
        await connection.execute(_UPSERT, values)


async def drop_stale_vectors(
    connection: AsyncConnection, ref: MemoryRef, entry_ids: Sequence[str]
) -> None:
    """Delete the vectors of ``entry_ids`` (any model) computed from content they no
    longer hold, inside the transaction that changed it."""
    if entry_ids:
        await connection.execute(
            delete(EMBEDDINGS).where(
                scoped(EMBEDDINGS, ref),
                EMBEDDINGS.c.entry_id == any_(bound_texts("stale_ids", sorted(set(entry_ids)))),
                _STALE,
            )
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

    async def compute(self, contents: Sequence[str]) -> ComputedVectors | None:
        """Vectors for ``contents`` (already redacted, as they will be stored), or None
        when there is no model or it failed: the write goes on and the catch-up embeds
        it later."""
        if self.embedder is None or not contents:
            return None
        unique = list(dict.fromkeys(contents))
        try:
            vectors = await self.embedder.embed(unique)
        except EmbeddingUnavailable as error:
            log.warning("writing %d entries without vectors: %s", len(contents), error)
            return None
        return ComputedVectors(
            self.embedder.model,
            {content_checksum(c): v for c, v in zip(unique, vectors, strict=True)},
        )

    async def compute_strict(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, or EmbeddingUnavailable (a search's query: nothing to
        fall back on but the caller's own choice)."""
        if self.embedder is None:
            raise EmbeddingUnavailable("no embedding model is configured")
        return await self.embedder.embed(texts)

    async def catch_up(self, after: tuple[str, str] | None, batch_size: int) -> CatchUpPage:
        """Embed up to ``batch_size`` live entries, of every tenant, that have no current
        vector under the configured model, in (memoryRef, id) order after ``after``."""
        model = self.model
        if model is None:
            return CatchUpPage(0, None)
        page = (
            _missing(model)
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
        embedded = await self._embed_and_store(rows)
        last = rows[-1]
        more = len(rows) == batch_size
        return CatchUpPage(embedded, (last["memory_ref"], last["id"]) if more else None)

    async def catch_up_entries(self, ref: MemoryRef, entry_ids: Sequence[str]) -> int:
        """Embed those of ``entry_ids`` that have no current vector, right after the
        transaction that rewrote them inside (erasure, consolidation) committed; best
        effort: with the model down they wait for the catch-up. Returns how many."""
        model = self.model
        if model is None or not entry_ids:
            return 0
        missing = _missing(model).where(
            scoped(ENTRIES, ref), ENTRIES.c.id == any_(bound_texts("ids", sorted(entry_ids)))
        )
        async with self.db.reading() as connection:
            rows = [dict(row._mapping) for row in (await connection.execute(missing)).all()]
        if not rows:
            return 0
        try:
            return await self._embed_and_store(rows)
        except EmbeddingUnavailable:
            return 0

    async def _embed_and_store(self, rows: list[dict[str, Any]]) -> int:
        computed = await self.compute([row["content"] for row in rows])
        if computed is None:
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
                .execution_options(**all_tenants("embedding catch-up of rows read scoped"))
            )
            current = {tuple(key) for key in (await connection.execute(still)).all()}
            kept = [row for row in rows if (row["memory_ref"], row["id"]) in current]
            await store_vectors(connection, kept, computed, self.db.now())
        return len(kept)

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


def _missing(model: EmbeddingModel) -> Select[Any]:
    """Live entries without a vector of ``model`` for their current content."""
    has_vector = exists().where(
        EMBEDDINGS.c.memory_ref == ENTRIES.c.memory_ref,
        EMBEDDINGS.c.entry_id == ENTRIES.c.id,
        EMBEDDINGS.c.model == model.id,
        EMBEDDINGS.c.content_sha256 == ENTRIES.c.content_sha256,
    )
    return select(
        ENTRIES.c.tenant,
        ENTRIES.c.memory_ref,
        ENTRIES.c.id,
        ENTRIES.c.content,
        ENTRIES.c.content_sha256,
    ).where(ENTRIES.c.invalidated_at.is_(None), ~has_vector)


def vector_text(vector: Any) -> str:
    return "[" + ",".join(map("{:.9g}".format, vector.tolist())) + "]"
