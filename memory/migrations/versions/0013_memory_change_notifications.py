"""Change notifications for predicate watches (issue 21, item 4).

A predicate watch ("follow up when the contract is signed") used to evaluate every 60 s:
1,440 workflow tasks per watch per day with nothing changing. Now the store tells the
watches when a memoryRef changed, from one place no write path can forget:

- **memory_ref_changes**: one row per memoryRef with a ``change_seq`` that every
  statement changing what a predicate can read bumps (put, update, delete, forget, TTL
  expiry, consolidation, raw SQL alike), in the writing transaction. Reads that only
  touch bookkeeping (``last_accessed_at`` on a get, distillation's ``distilled_into`` /
  ``distill_cost``) bump nothing: an UPDATE counts only when the multiset of visible
  columns differs (a set difference of the transition tables, linear whatever the plan,
  as in 0008). Writers of one memoryRef already serialise on memory_ref_heads, so the
  counter row adds no new wait for them.
- The same statement-level triggers ``pg_notify('agent_memory_changed', <memoryRef>)``:
  delivered only when the transaction commits, once per memoryRef per transaction
  (PostgreSQL folds identical payloads), to the worker's listener, which signals the
  watches of that memoryRef (runtime/change_listener.py).
- **commitments.seen_change_seq**: the ``change_seq`` the watch's last evaluation read
  before it evaluated; NULL while no watch waits on it (never evaluated, or ended). A
  watch with ``seen_change_seq < change_seq`` missed a change: the listener's safety
  sweep finds exactly those through ``ix_commitments_watching`` and signals them, so a
  lost notification is late, never lost.
- A predicate commitment that stops being armed while its watch waits (cancelled in the
  store, its source removed) notifies too, so the watch wakes, finds it ended and
  finishes instead of waiting for a change that will never matter.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHANNEL = "agent_memory_changed"

# Bump each memoryRef of {rows} once, in ref order (two statements over the same refs
# lock their counters in the same order), and notify it.
_BUMP = f"""
DECLARE
  changed_ref text;
BEGIN
  FOR changed_ref IN
    INSERT INTO memory_ref_changes AS m (memory_ref, tenant, change_seq, changed_at)
    SELECT memory_ref, min(tenant), 1, now() FROM {{rows}}
     GROUP BY memory_ref ORDER BY memory_ref
    ON CONFLICT (memory_ref)
    DO UPDATE SET change_seq = m.change_seq + 1, changed_at = now()
    RETURNING m.memory_ref
  LOOP
    PERFORM pg_notify('{CHANNEL}', changed_ref);
  END LOOP;
  RETURN NULL;
END
"""

# What a predicate can read of an entry. Not here: last_accessed_at (every get touches
# it), distilled_into and distill_cost (distillation's bookkeeping), updated_at and
# created_at (a real change moves version too), superseded_reason and consolidation_pass
# (they move with superseded_by), content (content_sha256 stands for it, cheaper).
_VISIBLE = (
    "memory_ref, tenant, id, version, content_sha256, tags, tier, namespace, key, pinned, "
    "priority, subject, metadata, attribution, expires_at, invalidated_at, superseded_by, "
    "corroboration"
)
_UPDATED_ROWS = (
    f"((SELECT {_VISIBLE} FROM after EXCEPT ALL SELECT {_VISIBLE} FROM before) "
    f"UNION ALL (SELECT {_VISIBLE} FROM before EXCEPT ALL SELECT {_VISIBLE} FROM after)) "
    "AS visible"
)

_FUNCTIONS = {
    "memory_change_written": _BUMP.format(rows="changed"),
    "memory_change_updated": _BUMP.format(rows=_UPDATED_ROWS),
}

_TRIGGERS = {
    "memory_change_inserted": (
        "AFTER INSERT ON memory_entries REFERENCING NEW TABLE AS changed",
        "memory_change_written",
    ),
    "memory_change_deleted": (
        "AFTER DELETE ON memory_entries REFERENCING OLD TABLE AS changed",
        "memory_change_written",
    ),
    "memory_change_updated": (
        "AFTER UPDATE ON memory_entries REFERENCING OLD TABLE AS before NEW TABLE AS after",
        "memory_change_updated",
    ),
}

# Row-level and rare: a predicate commitment whose watch waits leaves the armed state.
_ENDED = f"""
CREATE FUNCTION predicate_watch_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('{CHANNEL}', NEW.memory_ref);
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.create_table(
        "memory_ref_changes",
        sa.Column("memory_ref", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("change_seq", sa.BigInteger, nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("commitments", sa.Column("seen_change_seq", sa.BigInteger))
    # The watches that wait on a notification: the sweep's scan and the listener's
    # look-up of a memoryRef's watches.
    op.create_index(
        "ix_commitments_watching",
        "commitments",
        ["memory_ref"],
        postgresql_where=sa.text("condition = 'predicate' AND seen_change_seq IS NOT NULL"),
    )
    for name, body in _FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n{body}$$")
    for name, (when, function) in _TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {when} FOR EACH STATEMENT EXECUTE FUNCTION {function}()")
    op.execute(_ENDED)
    op.execute(
        "CREATE TRIGGER predicate_watch_ended AFTER UPDATE OF state ON commitments "
        "FOR EACH ROW WHEN (OLD.state = 'armed' AND NEW.state <> 'armed' "
        "AND NEW.condition = 'predicate' AND NEW.seen_change_seq IS NOT NULL) "
        "EXECUTE FUNCTION predicate_watch_ended()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER predicate_watch_ended ON commitments")
    op.execute("DROP FUNCTION predicate_watch_ended()")
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER {name} ON memory_entries")
    for name in _FUNCTIONS:
        op.execute(f"DROP FUNCTION {name}()")
    op.drop_index("ix_commitments_watching", table_name="commitments")
    op.drop_column("commitments", "seen_change_seq")
    op.drop_table("memory_ref_changes")
