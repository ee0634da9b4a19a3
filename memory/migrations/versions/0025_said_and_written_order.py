"""When and by whom entries were said, and the order they were written in (issue 38).

``memory_entries.said_at`` and ``said_by``: the writer's ``metadata.saidAt`` and
``metadata.saidBy`` read at the write boundary (memory/entries/said.py); a null
``said_at`` means said when written (``created_at``). Existing entries keep nulls: their
metadata was never checked. Both are search filters.

``memory_entries.written_order``: from one sequence, so the entries written just before
and after an entry can be found through an index. Search reads an entry's neighbours
said in the same sitting as its context (memory/search/context.py): in a conversation
the answer is the turn after the question, and only the question holds the words an
agent asks with.

Rows written by one statement take the sequence in the order the statement lists them
(the batch of a put_many). Existing entries are numbered by when they were written, then
by id; the sequence starts after them.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE memory_entries ADD COLUMN said_at timestamptz")
    op.execute("ALTER TABLE memory_entries ADD COLUMN said_by text")
    op.execute("CREATE SEQUENCE memory_entries_written_order")
    op.execute("ALTER TABLE memory_entries ADD COLUMN written_order bigint")
    op.execute(
        """
UPDATE memory_entries AS e SET written_order = numbered.n
FROM (SELECT memory_ref, id, row_number() OVER (ORDER BY created_at, id) AS n
      FROM memory_entries) AS numbered
WHERE e.memory_ref = numbered.memory_ref AND e.id = numbered.id"""
    )
    op.execute(
        "SELECT setval('memory_entries_written_order',"
        " coalesce((SELECT max(written_order) FROM memory_entries), 0) + 1, false)"
    )
    op.execute(
        "ALTER TABLE memory_entries ALTER COLUMN written_order"
        " SET DEFAULT nextval('memory_entries_written_order'),"
        " ALTER COLUMN written_order SET NOT NULL"
    )
    op.execute("ALTER SEQUENCE memory_entries_written_order OWNED BY memory_entries.written_order")
    op.execute(
        "CREATE UNIQUE INDEX ix_entries_written_order ON memory_entries (memory_ref, written_order)"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE memory_entries DROP COLUMN written_order")
    op.execute("ALTER TABLE memory_entries DROP COLUMN said_at")
    op.execute("ALTER TABLE memory_entries DROP COLUMN said_by")
