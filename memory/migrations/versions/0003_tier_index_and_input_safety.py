"""Tier indexes: a capped-tier write counts and evicts within its own tier, reading a
number of rows bounded by the tier's capacity (or the eviction itself), never the ref.

Capacity (memory/entries/capacity.py) counts the entries of one (memoryRef, tier) and picks its
eviction victims on every write to a capped tier, under the tier lock. Before this
revision both read every entry of the memoryRef (an episodic put took 87-109 ms next to
100k semantic entries, against 4 ms for a semantic put):

- ix_entries_ref_tier (tenant, memory_ref, tier, expires_at) serves the count (an
  index-only scan of the tier) and finds the tier's expired entries, which are evicted
  first, by a range scan on expires_at.
- ix_entries_eviction gains ``id``, the last eviction tie-break, so the index order is
  exactly the eviction order and picking the next victims reads only as many rows as it
  evicts. Without ``id``, entries written in one batch share (priority,
  last_accessed_at) and the pick sorted the whole batch.

Input safety (NUL, unpaired surrogates, non-finite numbers in metadata) is enforced by the
wire models and the store before any statement runs, so it needs no schema change.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _eviction_index(columns: list[str]) -> None:
    op.create_index(
        "ix_entries_eviction",
        "memory_entries",
        columns,
        postgresql_where=sa.text("NOT pinned"),
    )


def upgrade() -> None:
    op.create_index(
        "ix_entries_ref_tier", "memory_entries", ["tenant", "memory_ref", "tier", "expires_at"]
    )
    op.drop_index("ix_entries_eviction", table_name="memory_entries")
    _eviction_index(["memory_ref", "tier", "priority", "last_accessed_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_entries_eviction", table_name="memory_entries")
    _eviction_index(["memory_ref", "tier", "priority", "last_accessed_at"])
    op.drop_index("ix_entries_ref_tier", table_name="memory_entries")
