"""Semantic memory (issue 23): full-text terms on every entry and one vector per entry
and embedding model.

- ``memory_entries.search_terms``: ``to_tsvector('english', content)``, a stored
  generated column, so no write path can forget it and an edit or a forget changes it
  with the row. GIN-indexed for the full-text leg of hybrid search. Stored rather than an
  expression index because ranking reads it for every match (an expression index would
  re-parse each matching text per query).
- ``memory_embeddings``: the vector of an entry's (already SR-1 redacted) content under
  one model, with the model's id, its dimension count and the content checksum it was
  computed from. A vector whose checksum is not the entry's current one is stale and never
  used (the re-embed workflow replaces it). The foreign key deletes vectors with their
  entry: forget, TTL, erasure and every other delete reach them.
- One HNSW index per model, partial on the model and over the column cast to the model's
  dimension (pgvector indexes only fixed-dimension vectors; the column holds any
  dimension so a model change needs no schema change). The default model's index is made
  here; another model's is made by memory/indexes/vector_index.py when it is first
  used, with the same name rule.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import TSVECTOR

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of memory/indexes/vector_index.py's rule for the default model.
DEFAULT_MODEL = "wordllama/l2_supercat-256"
DEFAULT_DIMENSIONS = 256
DEFAULT_INDEX = "ix_embeddings_hnsw_8b9b918b80b3"


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.add_column(
        "memory_entries",
        sa.Column(
            "search_terms",
            TSVECTOR,
            sa.Computed("to_tsvector('english'::regconfig, content)", persisted=True),
            nullable=True,
        ),
    )
    op.create_index(
        "ix_entries_search_terms",
        "memory_entries",
        ["search_terms"],
        postgresql_using="gin",
    )
    op.execute(
        """
CREATE TABLE memory_embeddings (
  tenant text NOT NULL,
  memory_ref text NOT NULL,
  entry_id text NOT NULL,
  model text NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions BETWEEN 1 AND 16000),
  content_sha256 text NOT NULL,
  embedding vector NOT NULL,
  embedded_at timestamptz NOT NULL,
  PRIMARY KEY (memory_ref, entry_id, model),
  FOREIGN KEY (memory_ref, entry_id) REFERENCES memory_entries (memory_ref, id)
    ON DELETE CASCADE
)"""
    )
    op.execute(
        f"CREATE INDEX {DEFAULT_INDEX} ON memory_embeddings USING hnsw "
        f"((embedding::vector({DEFAULT_DIMENSIONS})) vector_cosine_ops) "
        f"WHERE model = '{DEFAULT_MODEL}'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE memory_embeddings")
    op.drop_index("ix_entries_search_terms", table_name="memory_entries")
    op.drop_column("memory_entries", "search_terms")
