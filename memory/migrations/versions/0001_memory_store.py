"""Memory store: entries, event log with per-ref sequence, read snapshots.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_table(
        "memory_entries",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("content_sha256", sa.Text, nullable=False),
        sa.Column("tags", ARRAY(sa.Text), nullable=False, server_default="{}"),
        sa.Column("tier", sa.Text, nullable=False),
        sa.Column("namespace", sa.Text),
        sa.Column("key", sa.Text),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("pinned", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("priority", sa.SmallInteger, nullable=False, server_default="1"),
        sa.Column("subject", sa.Text),
        sa.Column("metadata", JSONB, nullable=False, server_default="{}"),
        sa.Column("attribution", JSONB),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("last_accessed_at", TS, nullable=False),
        sa.Column("expires_at", TS),
        sa.Column("distilled_into", sa.Text),
        sa.Column("superseded_by", sa.Text),
        sa.Column("invalidated_at", TS),
        sa.PrimaryKeyConstraint("memory_ref", "id"),
        sa.CheckConstraint("tier IN ('working', 'episodic', 'semantic')", name="tier_known"),
        sa.CheckConstraint("priority BETWEEN 0 AND 2", name="priority_known"),
        sa.CheckConstraint("version >= 1", name="version_positive"),
        sa.CheckConstraint("split_part(memory_ref, '/', 3) = tenant", name="tenant_matches_ref"),
    )
    # Every read filters by (tenant, memory_ref); listing orders by created_at.
    op.create_index(
        "ix_entries_ref_created", "memory_entries", ["tenant", "memory_ref", "created_at", "id"]
    )
    op.create_index("ix_entries_tags", "memory_entries", ["tags"], postgresql_using="gin")
    op.create_index(
        "ix_entries_ref_key",
        "memory_entries",
        ["memory_ref", "namespace", "key"],
        unique=True,
        postgresql_where=sa.text("namespace IS NOT NULL AND key IS NOT NULL"),
    )
    op.create_index(
        "ix_entries_eviction",
        "memory_entries",
        ["memory_ref", "tier", "priority", "last_accessed_at"],
        postgresql_where=sa.text("NOT pinned"),
    )
    op.create_index(
        "ix_entries_expiry",
        "memory_entries",
        ["expires_at"],
        postgresql_where=sa.text("expires_at IS NOT NULL"),
    )
    op.create_index(
        "ix_entries_subject",
        "memory_entries",
        ["tenant", "subject"],
        postgresql_where=sa.text("subject IS NOT NULL"),
    )

    op.create_table(
        "memory_ref_heads",
        sa.Column("memory_ref", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "memory_events",
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column("occurred_at", TS, nullable=False),
        sa.Column("dedupe_key", sa.Text),
        sa.PrimaryKeyConstraint("memory_ref", "seq"),
    )
    # An event with a dedupe key is written at most once per memoryRef: the fire-once
    # and exactly-once-archive guarantees rest on this index, not on Temporal retention.
    op.create_index(
        "ix_events_dedupe",
        "memory_events",
        ["memory_ref", "dedupe_key"],
        unique=True,
        postgresql_where=sa.text("dedupe_key IS NOT NULL"),
    )
    op.create_index("ix_events_type", "memory_events", ["tenant", "type", "occurred_at"])
    # The log is append-only: refuse UPDATE and DELETE at the database level.
    op.execute(
        """
        CREATE FUNCTION memory_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'memory_events is append-only';
        END $$;
        """
    )
    op.execute(
        "CREATE TRIGGER memory_events_no_rewrite BEFORE UPDATE OR DELETE ON memory_events "
        "FOR EACH ROW EXECUTE FUNCTION memory_events_append_only()"
    )

    op.create_table(
        "memory_snapshots",
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("snapshot_id", sa.Text, nullable=False),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("as_of", TS, nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("checksum", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "snapshot_id"),
    )
    op.create_table(
        "memory_snapshot_items",
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("snapshot_id", sa.Text, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("entry_id", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("content_sha256", sa.Text, nullable=False),
        sa.Column("tags", ARRAY(sa.Text), nullable=False),
        sa.Column("tier", sa.Text, nullable=False),
        sa.Column("pinned", sa.Boolean, nullable=False),
        sa.Column("priority", sa.SmallInteger, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "snapshot_id", "position"),
        sa.ForeignKeyConstraint(
            ["memory_ref", "snapshot_id"],
            ["memory_snapshots.memory_ref", "memory_snapshots.snapshot_id"],
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("memory_snapshot_items")
    op.drop_table("memory_snapshots")
    op.execute("DROP TRIGGER memory_events_no_rewrite ON memory_events")
    op.execute("DROP FUNCTION memory_events_append_only()")
    op.drop_table("memory_events")
    op.drop_table("memory_ref_heads")
    op.drop_table("memory_entries")
