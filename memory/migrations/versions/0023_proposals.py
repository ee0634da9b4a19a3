"""Proposals (openwop RFC 0096, reviewable learning).

A dream that finds a request recurring on a cadence records a proposal: an inert
automation a reviewer may apply (memory/proposals/). One row per proposal, keyed by
tenant and id; ``ix_proposals_routine`` finds the proposals whose routine shares an
entry with a new one (GIN over the entry ids), which is how a dream recognises a
routine it proposed before and sets ``duplicateOf`` instead of proposing it again.
``proposal_watermarks`` holds how far each memoryRef's last synthesis read, so a night
with no new request reads nothing more (memory/proposals/sightings.py).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "proposals",
        sa.Column("tenant", sa.Text, primary_key=True),
        sa.Column("proposal_id", sa.Text, primary_key=True),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("rationale", sa.Text),
        sa.Column("artifact", JSONB, nullable=False),
        sa.Column("artifact_sha256", sa.Text, nullable=False),
        sa.Column("source_run_ids", ARRAY(sa.Text), nullable=False),
        sa.Column("source_entry_ids", ARRAY(sa.Text), nullable=False, server_default="{}"),
        sa.Column("schedule_key", sa.Text),
        sa.Column("duplicate_of", sa.Text),
        sa.Column("owner", JSONB, nullable=False),
        sa.Column("activation", JSONB),
        sa.Column("reason", sa.Text),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "state IN ('draft', 'revised', 'applied', 'rejected', 'archived')",
            name="ck_proposals_state",
        ),
    )
    op.create_index("ix_proposals_ref", "proposals", ["tenant", "memory_ref", "created_at"])
    op.create_table(
        "proposal_watermarks",
        sa.Column("memory_ref", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("seen_through", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_proposals_routine", "proposals", ["source_entry_ids"], postgresql_using="gin"
    )


def downgrade() -> None:
    op.drop_table("proposal_watermarks")
    op.drop_table("proposals")
