"""Commitment inference reads only what changed (issue 24, item 3): an index that serves
its watermark.

Inference reads the entries of one memoryRef updated since its watermark, oldest first
(memory/commitments/scan.py). Without an index on updated_at the planner reads every
live entry of the memoryRef to find the few new ones, so a nightly dream of an idle 1M-entry
memory cost half a second before parsing a single line. ``ix_entries_ref_updated``
(tenant, memory_ref, updated_at, id) answers the range and the order (updated_at, id)
directly.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_entries_ref_updated",
        "memory_entries",
        ["tenant", "memory_ref", "updated_at", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_entries_ref_updated", table_name="memory_entries")
