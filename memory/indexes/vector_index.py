"""One HNSW index per embedding model: partial on the model, over the vector column cast
to the model's dimension (pgvector indexes fixed-dimension vectors only). Searches use the
same cast and the same predicate (``index_expression``), which is what lets PostgreSQL use
the index. The default model's index is made by migration 0018; any other model's is made
here the first time that model is configured (worker and API start)."""

from __future__ import annotations

import hashlib
from typing import Any

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import cast, text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from memory.embeddings.model import EmbeddingModel
from memory.storage import tables
from memory.storage.tenant_scope import all_tenants

EMBEDDINGS = tables.embeddings


def index_name(model: EmbeddingModel) -> str:
    digest = hashlib.sha256(f"{model.id}|{model.dimensions}".encode()).hexdigest()[:12]
    return f"ix_embeddings_hnsw_{digest}"


def index_expression(model: EmbeddingModel) -> ColumnElement[Any]:
    """The indexed expression: the vector as vector(dimensions)."""
    return cast(EMBEDDINGS.c.embedding, VECTOR(model.dimensions))


async def ensure_vector_index(engine: AsyncEngine, model: EmbeddingModel) -> None:
    """Idempotent. The model id goes into DDL, so it is passed as a literal that
    PostgreSQL quotes, never pasted raw."""
    async with engine.begin() as connection:
        literal = (
            await connection.execute(
                text("SELECT quote_literal(:model)").execution_options(
                    **all_tenants("quotes a model id")
                ),
                {"model": model.id},
            )
        ).scalar_one()
        await connection.exec_driver_sql(
            f"CREATE INDEX IF NOT EXISTS {index_name(model)} ON memory_embeddings USING hnsw "
            f"((embedding::vector({int(model.dimensions)})) vector_cosine_ops) "
            f"WHERE model = {literal}"
        )


async def prepare_vectors(engine: AsyncEngine, model: EmbeddingModel | None) -> None:
    """At process start: the configured model's index exists, and the static model's
    weights are loaded now rather than on the first write."""
    if model is None:
        return
    await ensure_vector_index(engine, model)
    from memory.embeddings.choice import static_embedder
    from memory.embeddings.static_model import MODEL as STATIC_MODEL

    if model == STATIC_MODEL:
        static_embedder().load()
