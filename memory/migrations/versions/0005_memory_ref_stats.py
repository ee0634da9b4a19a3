"""Per-memoryRef entry counts by tier and by tag, kept current by statement-level triggers,
so MEMORY-INDEX.json is refreshed from a few rows instead of a scan of every entry (a
1M-entry ref took 1.1 s per dream to count and histogram).

Counted: rows not superseded (invalidated_at IS NULL). Readers subtract the few rows
that have expired but are not yet collected, which an index finds.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Add (sign 1) or remove (sign -1) the rows of one transition table.
_APPLY = """
INSERT INTO memory_ref_tier_counts AS s (memory_ref, tier, entries)
SELECT memory_ref, tier, {sign} * count(*) FROM {rows}
WHERE invalidated_at IS NULL GROUP BY memory_ref, tier
ON CONFLICT (memory_ref, tier) DO UPDATE SET entries = s.entries + EXCLUDED.entries;
INSERT INTO memory_ref_tag_counts AS t (memory_ref, tag, entries)
SELECT memory_ref, tag, {sign} * count(*) FROM {rows}, unnest(tags) AS tag
WHERE invalidated_at IS NULL GROUP BY memory_ref, tag
ON CONFLICT (memory_ref, tag) DO UPDATE SET entries = t.entries + EXCLUDED.entries;
"""

_FUNCTIONS = {
    "memory_stats_inserted": _APPLY.format(sign=1, rows="added"),
    "memory_stats_deleted": _APPLY.format(sign=-1, rows="removed"),
    # An UPDATE that changes neither tier, tags nor supersession nets out to zero; the
    # WHERE keeps it from touching the counters at all (the claim UPDATE of a dream).
    "memory_stats_updated": """
IF EXISTS (
  SELECT 1 FROM before JOIN after USING (memory_ref, id)
  WHERE before.tier IS DISTINCT FROM after.tier
     OR before.tags IS DISTINCT FROM after.tags
     OR (before.invalidated_at IS NULL) IS DISTINCT FROM (after.invalidated_at IS NULL)
) THEN
"""
    + _APPLY.format(sign=-1, rows="before")
    + _APPLY.format(sign=1, rows="after")
    + "END IF;",
}

_TRIGGERS = {
    "memory_stats_inserted": "AFTER INSERT ON memory_entries REFERENCING NEW TABLE AS added",
    "memory_stats_deleted": "AFTER DELETE ON memory_entries REFERENCING OLD TABLE AS removed",
    "memory_stats_updated": (
        "AFTER UPDATE ON memory_entries REFERENCING OLD TABLE AS before NEW TABLE AS after"
    ),
}


def upgrade() -> None:
    for table, key in (("memory_ref_tier_counts", "tier"), ("memory_ref_tag_counts", "tag")):
        op.create_table(
            table,
            sa.Column("memory_ref", sa.Text, nullable=False),
            sa.Column(key, sa.Text, nullable=False),
            sa.Column("entries", sa.BigInteger, nullable=False),
            sa.PrimaryKeyConstraint("memory_ref", key),
        )
    for name, body in _FUNCTIONS.items():
        op.execute(
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN\n{body}\nRETURN NULL;\nEND $$"
        )
        op.execute(
            f"CREATE TRIGGER {name} {_TRIGGERS[name]} FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
        )
    op.execute(
        "INSERT INTO memory_ref_tier_counts (memory_ref, tier, entries) "
        "SELECT memory_ref, tier, count(*) FROM memory_entries "
        "WHERE invalidated_at IS NULL GROUP BY memory_ref, tier"
    )
    op.execute(
        "INSERT INTO memory_ref_tag_counts (memory_ref, tag, entries) "
        "SELECT memory_ref, tag, count(*) FROM memory_entries, unnest(tags) AS tag "
        "WHERE invalidated_at IS NULL GROUP BY memory_ref, tag"
    )


def downgrade() -> None:
    for name in _FUNCTIONS:
        op.execute(f"DROP TRIGGER {name} ON memory_entries")
        op.execute(f"DROP FUNCTION {name}()")
    op.drop_table("memory_ref_tag_counts")
    op.drop_table("memory_ref_tier_counts")
