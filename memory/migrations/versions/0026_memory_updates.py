"""Facts that changed: which entry a later one supersedes (issue 39).

``memory_updates``: one row per (older, newer) pair of one memoryRef where the newer
entry states the same subject's same attribute with another value, found by a
consolidation pass's update rules (memory/sameness/updates.py) or stated by the writer
(``supersedes`` on create). Both entries stay live; reads rank the newer first and mark
the older (``supersededBy``). ``basis`` says who decided (``rule``, ``stated``,
``judge``), ``kinds`` which kind of value changed, ``pass_id`` the pass that recorded it
(null when stated at write time). Rows hold ids only, never content; a row whose entry
is no longer live is not read, and one whose entry's content is rewritten is deleted by
the one writer of content (memory/entries/content.py): the link was read from the old
text. Conflicts the rules could not settle go to ``memory_conflicts``, as before.

A promise held by an entry a later one supersedes ends with it, as for supersession by
key (migration 0014's trigger): its live commitment is cancelled (``source-updated``)
when the link is recorded, so "remind me Friday" updated to "remind me Saturday instead"
fires once, from the newer entry's commitment. An entry deleted by any path (forget,
TTL, delete, eviction) takes its links along (a statement trigger over the deleted
rows), so no link names an entry that is gone.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)

_ON_UPDATE_LINK = """
CREATE FUNCTION commitments_source_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE commitments
     SET state = 'cancelled', ended_reason = 'source-updated', next_at = NULL,
         updated_at = now()
   WHERE memory_ref = NEW.memory_ref AND memory_id = NEW.older_id
     AND state IN ('armed', 'proposed');
  RETURN NULL;
END $$
"""


_ON_ENTRIES_DELETED = """
CREATE FUNCTION update_links_of_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_updates AS u USING gone
   WHERE u.memory_ref = gone.memory_ref AND (u.older_id = gone.id OR u.newer_id = gone.id);
  DELETE FROM memory_conflicts AS c USING gone
   WHERE c.memory_ref = gone.memory_ref AND (c.first_id = gone.id OR c.second_id = gone.id);
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.create_table(
        "memory_updates",
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("memory_ref", sa.Text, nullable=False),
        sa.Column("older_id", sa.Text, nullable=False),
        sa.Column("newer_id", sa.Text, nullable=False),
        sa.Column("basis", sa.Text, nullable=False),
        sa.Column("kinds", ARRAY(sa.Text), nullable=False),
        sa.Column("pass_id", sa.Text),
        sa.Column("recorded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("memory_ref", "older_id", "newer_id"),
        sa.CheckConstraint("basis IN ('rule', 'stated', 'judge')", name="update_basis_known"),
        sa.CheckConstraint("older_id <> newer_id", name="update_not_self"),
    )
    op.create_index("ix_updates_newer", "memory_updates", ["memory_ref", "newer_id"])
    op.create_index(
        "ix_updates_pass",
        "memory_updates",
        ["memory_ref", "pass_id"],
        postgresql_where=sa.text("pass_id IS NOT NULL"),
    )
    op.execute(_ON_UPDATE_LINK)
    op.execute(
        "CREATE TRIGGER commitments_source_updated AFTER INSERT ON memory_updates "
        "FOR EACH ROW EXECUTE FUNCTION commitments_source_updated()"
    )
    # A deleted entry's conflicts are found by either side.
    op.create_index("ix_conflicts_second", "memory_conflicts", ["memory_ref", "second_id"])
    op.execute(_ON_ENTRIES_DELETED)
    op.execute(
        "CREATE TRIGGER update_links_of_deleted AFTER DELETE ON memory_entries "
        "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT "
        "EXECUTE FUNCTION update_links_of_deleted()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS update_links_of_deleted ON memory_entries")
    op.execute("DROP FUNCTION IF EXISTS update_links_of_deleted()")
    op.drop_index("ix_conflicts_second", "memory_conflicts")
    op.drop_table("memory_updates")
    op.execute("DROP FUNCTION IF EXISTS commitments_source_updated()")
