"""The fleet's commitment horizon finds deferred commitments across every memoryRef.

A fleet dream arms its agents' commitments and leaves the ones due beyond ARM_HORIZON in
the store (armed, not started). A per-agent dream hands them to the memoryRef's own
CommitmentHorizonWorkflow; a fleet dream hands a whole batch to one horizon run for the
fleet, whose pass asks: which memoryRefs have a time commitment, armed and not started,
due before the horizon's end, and what is the earliest one left? This partial index
answers both by a range scan on the instant, carrying tenant and memoryRef so the scan
needs no heap visit per row.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFERRED = "state = 'armed' AND armed_at IS NULL AND condition = 'time'"


def upgrade() -> None:
    op.create_index(
        "ix_commitments_deferred_due",
        "commitments",
        ["next_at"],
        postgresql_where=sa.text(DEFERRED),
        postgresql_include=["tenant", "memory_ref"],
    )


def downgrade() -> None:
    op.drop_index("ix_commitments_deferred_due", table_name="commitments")
