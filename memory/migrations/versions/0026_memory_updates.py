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


def downgrade() -> None:
    op.drop_table("memory_updates")
