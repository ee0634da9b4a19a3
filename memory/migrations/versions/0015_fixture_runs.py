"""openwop runs of the conformance fixtures (issue 22, item 3): the run's state and its
event log.

- ``fixture_runs``: one row per ``POST /v1/runs``, owned by the key's tenant. ``variables``
  holds what the fixture's node set, with every memory entry it names as a reference
  (``{"$entry": {"memoryRef", "id"}}``) read through the store when the run is read:
  no entry text is copied here, so forget, TTL and erasure leave none behind.
- ``fixture_run_events``: the run's events in order (``memory.written`` and the run's
  own lifecycle), ids only.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "fixture_runs",
        sa.Column("run_id", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("fixture", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("variables", JSONB, nullable=False),
        sa.Column("error", JSONB),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'completed', 'failed', 'cancelled')",
            name="fixture_run_status_known",
        ),
    )
    op.create_index("ix_fixture_runs_tenant", "fixture_runs", ["tenant", "created_at"])
    op.create_table(
        "fixture_run_events",
        sa.Column(
            "run_id",
            sa.Text,
            sa.ForeignKey("fixture_runs.run_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column("occurred_at", TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("fixture_run_events")
    op.drop_index("ix_fixture_runs_tenant", table_name="fixture_runs")
    op.drop_table("fixture_runs")
