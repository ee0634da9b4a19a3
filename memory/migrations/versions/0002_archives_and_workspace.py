"""Distillation archives (immutable, addressed by checksum), committed runs, and workspace files
(MEMORY-INDEX.json and friends, one row per monotonic version).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "memory_archives",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("checksum", sa.Text, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("run_key", sa.Text, nullable=False),
        sa.Column("output_id", sa.Text, nullable=False),
        sa.Column("source_count", sa.Integer, nullable=False),
        sa.Column("token_budget", sa.Integer, nullable=False),
        sa.Column("tokens_used", sa.Integer, nullable=False),
        sa.Column("byte_size", sa.Integer, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "checksum"),
    )
    op.create_index("ix_archives_expiry", "memory_archives", ["expires_at"])
    # Archives are immutable: the body and checksum can never be rewritten in place.
    op.execute(
        """
        CREATE FUNCTION memory_archives_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'memory_archives rows are immutable';
        END $$;
        """
    )
    op.execute(
        "CREATE TRIGGER memory_archives_no_update BEFORE UPDATE ON memory_archives "
        "FOR EACH ROW EXECUTE FUNCTION memory_archives_immutable()"
    )
    # One row per committed distillation run: the idempotency key for retries and
    # duplicate triggers, holding the run's content-free result.
    op.create_table(
        "distillation_runs",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("run_key", sa.Text, nullable=False),
        sa.Column("result", JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "run_key"),
    )
    op.create_table(
        "workspace_files",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("sha256", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "path", "version"),
        sa.CheckConstraint("version >= 1", name="workspace_version_positive"),
    )
    op.create_index(
        "ix_entries_undistilled",
        "memory_entries",
        ["memory_ref", "tier"],
        postgresql_where=sa.text("distilled_into IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_entries_undistilled", table_name="memory_entries")
    op.drop_table("workspace_files")
    op.drop_table("distillation_runs")
    op.execute("DROP TRIGGER memory_archives_no_update ON memory_archives")
    op.execute("DROP FUNCTION memory_archives_immutable()")
    op.drop_table("memory_archives")
