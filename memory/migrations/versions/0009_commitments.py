"""Inferred commitments (RFC 0068 §C): the commitments, their occurrence ledger, the
inference watermark per memoryRef and each tenant's time zone.

- commitments: one row per (memoryRef, source entry, normalised condition); the id is a
  hash of those three, so inferring again never creates a second commitment. ``spec``
  holds the parsed condition (derived from the entry's text, so erasure clears it).
- commitment_occurrences: the ledger. Its primary key (commitment_id, occurrence) is the
  fire-once claim: an instant for a time commitment, ``transition:<n>`` for a predicate.
  A row is inserted in the same transaction as the commitment.fired event, before
  anything is dispatched.
- A trigger on memory_entries ends the commitments of an entry that is deleted (forget,
  delete, TTL) or superseded by consolidation, whatever path removes it: one mechanism
  for every removal, like the MEMORY-INDEX counters. A deleted source also clears the
  spec, which is derived content. TTL paths declare themselves with the transaction
  setting ``agent_memory.removal_reason = 'ttl'`` (memory/events/removal_reason.py), so their
  commitments end ``expired`` rather than ``cancelled``.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)

# Set-based over the statement's transition table, run with EXECUTE so it is planned for
# each statement: a plan cached from a one-row delete would stay a nested loop for a
# 100k-row forget later in the same session (the lesson of migration 0008).
_ON_DELETE = """
CREATE OR REPLACE FUNCTION commitments_source_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE $q$
  UPDATE commitments AS c
     SET state = CASE WHEN c.state <> 'armed' THEN c.state
                      WHEN current_setting('agent_memory.removal_reason', true) = 'ttl'
                      THEN 'expired' ELSE 'cancelled' END,
         ended_reason = COALESCE(c.ended_reason,
                   CASE WHEN current_setting('agent_memory.removal_reason', true) = 'ttl'
                        THEN 'source-expired' ELSE 'source-deleted' END),
         spec = NULL,
         next_at = NULL,
         updated_at = now()
    FROM gone
   WHERE c.memory_ref = gone.memory_ref AND c.memory_id = gone.id
  $q$;
  RETURN NULL;
END $$
"""

# Row-level, and only for rows a statement newly marks superseded (a consolidation pass):
# one index probe each. (A statement-level trigger cannot both see its rows and be
# limited to updates of one column.)
_ON_SUPERSEDE = """
CREATE OR REPLACE FUNCTION commitments_source_superseded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE commitments
     SET state = 'cancelled', ended_reason = 'source-superseded', next_at = NULL,
         updated_at = now()
   WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.id AND state = 'armed';
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.create_table(
        "commitments",
        sa.Column("commitment_id", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("memory_id", sa.Text, nullable=False),
        sa.Column("condition", sa.Text, nullable=False),
        sa.Column("spec", JSONB),
        sa.Column("time_zone", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("next_at", TS),
        sa.Column("fire_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("missed_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("predicate_holds", sa.Boolean),
        sa.Column("transitions", sa.Integer, nullable=False, server_default="0"),
        sa.Column("enqueue_run", sa.Boolean, nullable=False),
        sa.Column("armed_at", TS),
        sa.Column("ended_reason", sa.Text),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.CheckConstraint(
            "state IN ('armed', 'fired', 'cancelled', 'expired', 'missed')",
            name="commitment_state_known",
        ),
        sa.CheckConstraint("condition IN ('time', 'predicate')", name="commitment_condition"),
    )
    op.create_index("ix_commitments_ref", "commitments", ["tenant", "memory_ref", "state"])
    op.create_index("ix_commitments_source", "commitments", ["memory_ref", "memory_id"])
    # Commitments whose workflow has not been started yet (arming resumes from here).
    op.create_index(
        "ix_commitments_unarmed",
        "commitments",
        ["memory_ref"],
        postgresql_where=sa.text("state = 'armed' AND armed_at IS NULL"),
    )
    op.create_table(
        "commitment_occurrences",
        sa.Column("commitment_id", sa.Text, nullable=False),
        sa.Column("occurrence", sa.Text, nullable=False),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("due_at", TS),
        sa.Column("fired_at", TS, nullable=False),
        sa.Column("claimed_at", TS, nullable=False),
        sa.Column("event_seq", sa.BigInteger),
        sa.Column("enqueued_run_id", sa.Text),
        sa.PrimaryKeyConstraint("commitment_id", "occurrence"),
        sa.ForeignKeyConstraint(
            ["commitment_id"], ["commitments.commitment_id"], ondelete="CASCADE"
        ),
        sa.CheckConstraint("outcome IN ('fired', 'missed')", name="occurrence_outcome"),
    )
    op.create_table(
        "commitment_watermarks",
        sa.Column("memory_ref", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("scanned_through", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "tenant_settings",
        sa.Column("tenant", sa.Text, primary_key=True),
        sa.Column("time_zone", sa.Text, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.execute(_ON_DELETE)
    op.execute(
        "CREATE TRIGGER commitments_source_deleted AFTER DELETE ON memory_entries "
        "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT "
        "EXECUTE FUNCTION commitments_source_deleted()"
    )
    op.execute(_ON_SUPERSEDE)
    op.execute(
        # Only statements that set superseded_by (a consolidation pass, its undo).
        "CREATE TRIGGER commitments_source_superseded AFTER UPDATE OF superseded_by "
        "ON memory_entries FOR EACH ROW "
        "WHEN (OLD.superseded_by IS NULL AND NEW.superseded_by IS NOT NULL) "
        "EXECUTE FUNCTION commitments_source_superseded()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS commitments_source_superseded ON memory_entries")
    op.execute("DROP TRIGGER IF EXISTS commitments_source_deleted ON memory_entries")
    op.execute("DROP FUNCTION IF EXISTS commitments_source_superseded()")
    op.execute("DROP FUNCTION IF EXISTS commitments_source_deleted()")
    op.drop_table("tenant_settings")
    op.drop_table("commitment_watermarks")
    op.drop_table("commitment_occurrences")
    op.drop_table("commitments")
