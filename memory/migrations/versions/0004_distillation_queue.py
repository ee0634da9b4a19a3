"""The distillation queue index: undistilled transactional entries of a memoryRef in rank
order (pinned, priority, newest, id), so a dream reads its best candidates page by page
without scanning the backlog; consumed entries leave the index. And distill_cost: the
tokens an entry alone needs, recorded when a run found it larger than its budget, so
runs with smaller budgets pass over it instead of failing on it every night.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory_entries", sa.Column("distill_cost", sa.Integer, nullable=True))
    op.create_index(
        "ix_entries_distill_queue",
        "memory_entries",
        ["tenant", "memory_ref", "pinned", "priority", "created_at", "id"],
        postgresql_where=sa.text(
            "distilled_into IS NULL AND invalidated_at IS NULL AND tier IN ('working', 'episodic')"
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_entries_distill_queue", table_name="memory_entries")
    op.drop_column("memory_entries", "distill_cost")
