"""Consolidation: what a pass marks on the entries, its record, and conflicts.

- memory_entries.corroboration: how many entries a survivor stands for (1 for itself).
- memory_entries.superseded_reason / consolidation_pass: why and by which pass a row was
  marked superseded_by (``merged``: a duplicate; ``superseded``: an older value of the
  same namespace/key slot); undo finds a pass's marks by them.
- The unique namespace/key index covers live rows only: a merged-away row keeps its key
  for audit and undo, and must not block writing that key again.
- consolidation_passes: one row per pass (keyed by the run that made it, so a retried
  activity returns the recorded result and never applies a merge twice).
- memory_conflicts: unkeyed look-alikes that differ in a guarded fact, recorded once.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def _key_index(where: str) -> None:
    op.create_index(
        "ix_entries_ref_key",
        "memory_entries",
        ["memory_ref", "namespace", "key"],
        unique=True,
        postgresql_where=sa.text(where),
    )


def upgrade() -> None:
    op.add_column(
        "memory_entries",
        sa.Column("corroboration", sa.Integer, nullable=False, server_default="1"),
    )
    op.add_column("memory_entries", sa.Column("superseded_reason", sa.Text))
    op.add_column("memory_entries", sa.Column("consolidation_pass", sa.Text))
    op.create_check_constraint(
        "superseded_reason_known",
        "memory_entries",
        "superseded_reason IS NULL OR superseded_reason IN ('merged', 'superseded')",
    )
    op.drop_index("ix_entries_ref_key", table_name="memory_entries")
    _key_index("namespace IS NOT NULL AND key IS NOT NULL AND invalidated_at IS NULL")
    # What was merged into a survivor (the planner's guard, erasure, undo).
    op.create_index(
        "ix_entries_superseded_by",
        "memory_entries",
        ["memory_ref", "superseded_by"],
        postgresql_where=sa.text("superseded_by IS NOT NULL"),
    )
    op.create_table(
        "consolidation_passes",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("pass_id", sa.Text, nullable=False),
        sa.Column("run_key", sa.Text, nullable=False),
        sa.Column("result", JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("undone_at", TS),
        sa.PrimaryKeyConstraint("memory_ref", "pass_id"),
        sa.UniqueConstraint("memory_ref", "run_key", name="uq_consolidation_run"),
    )
    op.create_table(
        "memory_conflicts",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("first_id", sa.Text, nullable=False),
        sa.Column("second_id", sa.Text, nullable=False),
        sa.Column("kinds", ARRAY(sa.Text), nullable=False),
        sa.Column("pass_id", sa.Text, nullable=False),
        sa.Column("detected_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "first_id", "second_id"),
    )
    op.drop_constraint("lineage_kind_known", "memory_lineage", type_="check")
    op.create_check_constraint(
        "lineage_kind_known",
        "memory_lineage",
        "artifact_kind IN ('distilled-entry', 'merged-into')",
    )


def downgrade() -> None:
    op.drop_constraint("lineage_kind_known", "memory_lineage", type_="check")
    op.execute("DELETE FROM memory_lineage WHERE artifact_kind = 'merged-into'")
    op.create_check_constraint(
        "lineage_kind_known", "memory_lineage", "artifact_kind IN ('distilled-entry')"
    )
    op.drop_table("memory_conflicts")
    op.drop_table("consolidation_passes")
    op.drop_index("ix_entries_superseded_by", table_name="memory_entries")
    op.drop_index("ix_entries_ref_key", table_name="memory_entries")
    _key_index("namespace IS NOT NULL AND key IS NOT NULL")
    op.drop_constraint("superseded_reason_known", "memory_entries", type_="check")
    op.drop_column("memory_entries", "consolidation_pass")
    op.drop_column("memory_entries", "superseded_reason")
    op.drop_column("memory_entries", "corroboration")
