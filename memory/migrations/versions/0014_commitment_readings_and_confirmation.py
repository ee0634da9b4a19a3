"""What inference understood, and commitments that wait for confirmation (issue 21, item 3).

- **A reading per commitment.** ``span_start``/``span_end`` are character offsets into
  the source entry's stored (SR-1 redacted) text of the phrase inference read,
  ``span_sha256`` the first 16 hex digits of that span's SHA-256 (the read side tells an
  entry edited since from one unchanged), ``conventions`` the codes of the conventions
  the reading applied. Content-free: the text stays in the entry. NULL for commitments
  recorded before this revision.
- **Tenant settings** gain ``require_confirmation`` (inferred commitments wait in the
  ``proposed`` state until confirmed), ``date_order`` (how a numeric date such as 04/05
  reads: MDY, DMY or YMD) and ``next_weekday`` (what "next Friday" said on a Wednesday
  means: refused by default, or the coming one, or the one of the following week);
  docs/time-grammar.md.
- **proposed** joins the known states. A proposed commitment is live like an armed one:
  it holds its promise (``uq_commitments_live_promise`` replaces 0011's armed-only index,
  so a promise restated while its first reading waits for confirmation is not recorded
  twice), moves to the survivor when consolidation merges its source, and ends when its
  source is deleted, forgotten, expired or superseded (the 0011 trigger functions, with
  ``state IN ('armed', 'proposed')`` where they said ``state = 'armed'``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE = "state IN ('armed', 'proposed')"

_ON_SUPERSEDE = f"""
CREATE OR REPLACE FUNCTION commitments_source_superseded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.superseded_reason = 'merged' AND NOT EXISTS (
       SELECT 1 FROM commitments
        WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.superseded_by
          AND {_LIVE}) THEN
    UPDATE commitments SET memory_id = NEW.superseded_by, updated_at = now()
     WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.id AND {_LIVE};
  END IF;
  UPDATE commitments
     SET state = 'cancelled', ended_reason = 'source-superseded', next_at = NULL,
         updated_at = now()
   WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.id AND {_LIVE};
  RETURN NULL;
END $$
"""

_ON_DELETE = """
CREATE OR REPLACE FUNCTION commitments_source_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE $q$
  UPDATE commitments AS c
     SET state = CASE WHEN c.state NOT IN ('armed', 'proposed') THEN c.state
                      WHEN current_setting('agent_memory.removal_reason', true) = 'ttl'
                      THEN 'expired' ELSE 'cancelled' END,
         ended_reason = COALESCE(c.ended_reason,
                   CASE WHEN current_setting('agent_memory.removal_reason', true) = 'ttl'
                        THEN 'source-expired' ELSE 'source-deleted' END),
         spec = NULL,
         promise_key = NULL,
         next_at = NULL,
         updated_at = now()
    FROM gone
   WHERE c.memory_ref = gone.memory_ref AND c.memory_id = gone.id
  $q$;
  RETURN NULL;
END $$
"""

_PREVIOUS_ON_SUPERSEDE = _ON_SUPERSEDE.replace(_LIVE, "state = 'armed'")
_PREVIOUS_ON_DELETE = _ON_DELETE.replace(
    "c.state NOT IN ('armed', 'proposed')", "c.state <> 'armed'"
)
_STATES = "'armed', 'fired', 'cancelled', 'expired', 'missed'"


def upgrade() -> None:
    op.add_column("commitments", sa.Column("span_start", sa.Integer))
    op.add_column("commitments", sa.Column("span_end", sa.Integer))
    op.add_column("commitments", sa.Column("span_sha256", sa.Text))
    op.add_column(
        "commitments",
        sa.Column("conventions", ARRAY(sa.Text), nullable=False, server_default="{}"),
    )
    op.create_check_constraint(
        "commitment_span_ordered",
        "commitments",
        "span_start IS NULL OR (span_start >= 0 AND span_end >= span_start)",
    )
    op.add_column(
        "tenant_settings",
        sa.Column("require_confirmation", sa.Boolean, nullable=False, server_default="false"),
    )
    op.add_column(
        "tenant_settings",
        sa.Column("date_order", sa.Text, nullable=False, server_default="MDY"),
    )
    op.create_check_constraint(
        "tenant_date_order_known", "tenant_settings", "date_order IN ('MDY', 'DMY', 'YMD')"
    )
    op.add_column(
        "tenant_settings",
        sa.Column("next_weekday", sa.Text, nullable=False, server_default="refuse-when-ambiguous"),
    )
    op.create_check_constraint(
        "tenant_next_weekday_known",
        "tenant_settings",
        "next_weekday IN ('coming', 'following-week', 'refuse-when-ambiguous')",
    )
    op.drop_constraint("commitment_state_known", "commitments", type_="check")
    op.create_check_constraint(
        "commitment_state_known", "commitments", f"state IN ('proposed', {_STATES})"
    )
    op.create_index(
        "uq_commitments_live_promise",
        "commitments",
        ["memory_ref", "promise_key"],
        unique=True,
        postgresql_where=sa.text(f"{_LIVE} AND promise_key IS NOT NULL"),
    )
    op.drop_index("uq_commitments_armed_promise", table_name="commitments")
    op.execute(_ON_SUPERSEDE)
    op.execute(_ON_DELETE)


def downgrade() -> None:
    # A proposed commitment has no meaning before this revision: it was never armed.
    op.execute(
        "UPDATE commitments SET state = 'cancelled', ended_reason = 'downgraded', "
        "next_at = NULL WHERE state = 'proposed'"
    )
    op.execute(_PREVIOUS_ON_DELETE)
    op.execute(_PREVIOUS_ON_SUPERSEDE)
    op.create_index(
        "uq_commitments_armed_promise",
        "commitments",
        ["memory_ref", "promise_key"],
        unique=True,
        postgresql_where=sa.text("state = 'armed' AND promise_key IS NOT NULL"),
    )
    op.drop_index("uq_commitments_live_promise", table_name="commitments")
    op.drop_constraint("commitment_state_known", "commitments", type_="check")
    op.create_check_constraint("commitment_state_known", "commitments", f"state IN ({_STATES})")
    op.drop_constraint("tenant_next_weekday_known", "tenant_settings", type_="check")
    op.drop_column("tenant_settings", "next_weekday")
    op.drop_constraint("tenant_date_order_known", "tenant_settings", type_="check")
    op.drop_column("tenant_settings", "date_order")
    op.drop_column("tenant_settings", "require_confirmation")
    op.drop_constraint("commitment_span_ordered", "commitments", type_="check")
    op.drop_column("commitments", "conventions")
    op.drop_column("commitments", "span_sha256")
    op.drop_column("commitments", "span_end")
    op.drop_column("commitments", "span_start")
