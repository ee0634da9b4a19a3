"""Fleet dreams find the memoryRefs with work through one index (issue 24, item 1).

A fleet of agents is mostly idle on any night. ``FleetDreamWorkflow`` must not spend a
workflow, an activity or a per-ref query on an agent with nothing new, so the work is
kept where the writes already go:

- **memory_ref_changes.work_seq**: bumped by the same statement-level triggers that bump
  ``change_seq`` (migration 0013), except in transactions that declare themselves
  maintenance (``agent_memory.maintenance = 'on'``, set by memory/fleet/maintenance_writes.py
  for distillation, consolidation, inference, arming and garbage collection). A dream's
  own writes (the distilled entry, supersessions, TTL deletes) are therefore not new
  work, and a ref the dream left with nothing to do drops out.
- **memory_ref_changes.dreamed_seq**: the ``work_seq`` a fleet dream read before it
  worked on the ref, recorded when every step finished with nothing left (a budget that
  deferred entries leaves the ref due). A user write that lands while the dream runs
  moves ``work_seq`` past it, so that write is never lost.
- **ix_ref_changes_dream_due**: a partial index holding exactly the refs with
  ``work_seq > dreamed_seq``; a fleet page is a range scan of it, whatever the number of
  idle refs.
- Refs whose entries fall due for TTL erasure are found through ix_entries_expiry
  (migration 0001) without any write: their erasure must still reach the derived copies.

Every ref that exists when this migration runs is due once: rows are created for refs
that have not changed since 0013 (from memory_ref_heads) and every row gets work_seq 1.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""

import importlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What counts as a visible change and the channel stay exactly as 0013 defined them.
_CHANGE_FEED = importlib.import_module(
    "memory.migrations.versions.0013_memory_change_notifications"
)

_BUMP = f"""
DECLARE
  changed_ref text;
  new_work bigint := CASE
    WHEN current_setting('agent_memory.maintenance', true) = 'on' THEN 0 ELSE 1 END;
BEGIN
  FOR changed_ref IN
    INSERT INTO memory_ref_changes AS m (memory_ref, tenant, change_seq, changed_at, work_seq)
    SELECT memory_ref, min(tenant), 1, now(), new_work FROM {{rows}}
     GROUP BY memory_ref ORDER BY memory_ref
    ON CONFLICT (memory_ref)
    DO UPDATE SET change_seq = m.change_seq + 1, changed_at = now(),
                  work_seq = m.work_seq + new_work
    RETURNING m.memory_ref
  LOOP
    PERFORM pg_notify('{_CHANGE_FEED.CHANNEL}', changed_ref);
  END LOOP;
  RETURN NULL;
END
"""

_FUNCTIONS = {
    "memory_change_written": "changed",
    "memory_change_updated": _CHANGE_FEED._UPDATED_ROWS,
}


def _replace_functions(body: str) -> None:
    for name, rows in _FUNCTIONS.items():
        op.execute(
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"{body.format(rows=rows)}$$"
        )


def upgrade() -> None:
    op.add_column(
        "memory_ref_changes",
        sa.Column("work_seq", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.add_column(
        "memory_ref_changes",
        sa.Column("dreamed_seq", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.execute("UPDATE memory_ref_changes SET work_seq = 1")
    op.execute(
        "INSERT INTO memory_ref_changes (memory_ref, tenant, change_seq, changed_at, work_seq) "
        "SELECT memory_ref, tenant, 0, now(), 1 FROM memory_ref_heads "
        "ON CONFLICT (memory_ref) DO NOTHING"
    )
    op.create_index(
        "ix_ref_changes_dream_due",
        "memory_ref_changes",
        ["tenant", "memory_ref"],
        postgresql_where=sa.text("work_seq > dreamed_seq"),
    )
    _replace_functions(_BUMP)


def downgrade() -> None:
    _replace_functions(_CHANGE_FEED._BUMP)
    op.drop_index("ix_ref_changes_dream_due", table_name="memory_ref_changes")
    op.drop_column("memory_ref_changes", "dreamed_seq")
    op.drop_column("memory_ref_changes", "work_seq")
