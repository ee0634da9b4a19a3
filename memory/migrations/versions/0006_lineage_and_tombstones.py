"""Lineage (which entries every derived artifact holds text of) and archive tombstones
(what replaced an archive that an erasure rewrote or removed).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "memory_lineage",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("source_id", sa.Text, nullable=False),
        sa.Column("artifact_kind", sa.Text, nullable=False),
        sa.Column("artifact_id", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "source_id", "artifact_kind", "artifact_id"),
        # Archives are found from their distilled entry (memory_archives.output_id), whose
        # id survives rewrites; an archive's checksum does not.
        sa.CheckConstraint("artifact_kind IN ('distilled-entry')", name="lineage_kind_known"),
    )
    op.create_index(
        "ix_lineage_artifact", "memory_lineage", ["memory_ref", "artifact_kind", "artifact_id"]
    )
    op.create_table(
        "memory_archive_tombstones",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("checksum", sa.Text, nullable=False),
        sa.Column("successor_checksum", sa.Text),
        sa.Column("reason", sa.Text, nullable=False),
        # sha256 of each item (RFC 8785 bytes) the original held, and of those erased:
        # what a verifier can still check once the original bytes are gone.
        sa.Column("item_sha256", ARRAY(sa.Text), nullable=False),
        sa.Column("erased_item_sha256", ARRAY(sa.Text), nullable=False),
        sa.Column("erased_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "checksum"),
    )
    op.create_index("ix_archives_output", "memory_archives", ["memory_ref", "output_id"])
    # Lineage of what earlier distillations wrote, from the archives' own source lists.
    op.execute(
        "INSERT INTO memory_lineage (tenant, memory_ref, source_id, artifact_kind, "
        "artifact_id) SELECT DISTINCT a.tenant, a.memory_ref, s ->> 'id', 'distilled-entry', "
        "a.output_id FROM memory_archives a, "
        "jsonb_array_elements(convert_from(a.body, 'UTF8')::jsonb -> 'sources') AS s "
        "ON CONFLICT DO NOTHING"
    )


def downgrade() -> None:
    op.drop_index("ix_archives_output", table_name="memory_archives")
    op.drop_table("memory_archive_tombstones")
    op.drop_index("ix_lineage_artifact", table_name="memory_lineage")
    op.drop_table("memory_lineage")
