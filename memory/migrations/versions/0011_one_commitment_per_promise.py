"""One armed commitment per promise in a memoryRef.

- commitments.promise_key: a hash of the promise (the entry's normalised text and the
  normalised condition, memory/commitments/scan.py: promise_key); NULL for commitments
  inferred before this revision.
- uq_commitments_armed_promise: at most one ARMED commitment per (memoryRef, promise), so
  one promise stated in several live entries is armed once, whichever order inference
  reads them in; a cancelled or ended one no longer counts.
- The supersede trigger keeps a merged promise instead of dropping it: when
  consolidation merges an entry into a survivor that holds no armed commitment, the
  merged entry's armed commitments move to the survivor (same commitment id, so its
  running workflow stays the one that fires); otherwise they are cancelled as before.
  An entry superseded by a newer value of its key (reason "superseded") says something
  different, so its commitments are cancelled, never moved.
- The delete trigger clears promise_key with spec: a hash of forgotten text is still
  derived from it.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ON_SUPERSEDE = """
CREATE OR REPLACE FUNCTION commitments_source_superseded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.superseded_reason = 'merged' AND NOT EXISTS (
       SELECT 1 FROM commitments
        WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.superseded_by
          AND state = 'armed') THEN
    UPDATE commitments SET memory_id = NEW.superseded_by, updated_at = now()
     WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.id AND state = 'armed';
  END IF;
  UPDATE commitments
     SET state = 'cancelled', ended_reason = 'source-superseded', next_at = NULL,
         updated_at = now()
   WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.id AND state = 'armed';
  RETURN NULL;
END $$
"""

# As in 0009, plus promise_key cleared with the spec.
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
         promise_key = NULL,
         next_at = NULL,
         updated_at = now()
    FROM gone
   WHERE c.memory_ref = gone.memory_ref AND c.memory_id = gone.id
  $q$;
  RETURN NULL;
END $$
"""

_PREVIOUS_ON_DELETE = _ON_DELETE.replace("         promise_key = NULL,\n", "")

_PREVIOUS_ON_SUPERSEDE = """
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
    op.add_column("commitments", sa.Column("promise_key", sa.Text))
    op.create_index(
        "uq_commitments_armed_promise",
        "commitments",
        ["memory_ref", "promise_key"],
        unique=True,
        postgresql_where=sa.text("state = 'armed' AND promise_key IS NOT NULL"),
    )
    op.execute(_ON_SUPERSEDE)
    op.execute(_ON_DELETE)


def downgrade() -> None:
    op.execute(_PREVIOUS_ON_DELETE)
    op.execute(_PREVIOUS_ON_SUPERSEDE)
    op.drop_index("uq_commitments_armed_promise", table_name="commitments")
    op.drop_column("commitments", "promise_key")
