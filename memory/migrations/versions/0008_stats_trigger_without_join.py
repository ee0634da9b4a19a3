"""The MEMORY-INDEX counters' UPDATE trigger without a join of its transition tables.

0005 decided whether an UPDATE touched the counters with
``EXISTS (SELECT 1 FROM before JOIN after USING (memory_ref, id) WHERE ...)``. PL/pgSQL
caches that query's plan per session: planned first for a one-row update, it stays a
nested loop, and a later UPDATE of 100k rows in the same session (a consolidation pass
marking its merged rows, a benchmark setting write times) compared every old row with
every new one: minutes instead of milliseconds. The counters depend only on the multiset
of (memory_ref, tier, tags, live) before and after, so the check is now a set difference
of those, linear whatever the plan, and exact (an update that moves a tag from one row to
another nets out and skips the counters, as it should).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_APPLY = """
INSERT INTO memory_ref_tier_counts AS t (memory_ref, tier, entries)
SELECT memory_ref, tier, {sign} * count(*) FROM {rows} WHERE invalidated_at IS NULL
GROUP BY memory_ref, tier
ON CONFLICT (memory_ref, tier) DO UPDATE SET entries = t.entries + EXCLUDED.entries;
INSERT INTO memory_ref_tag_counts AS t (memory_ref, tag, entries)
SELECT memory_ref, tag, {sign} * count(*) FROM {rows}, unnest(tags) AS tag
WHERE invalidated_at IS NULL GROUP BY memory_ref, tag
ON CONFLICT (memory_ref, tag) DO UPDATE SET entries = t.entries + EXCLUDED.entries;
"""


def _function(changed: str) -> str:
    return (
        "CREATE OR REPLACE FUNCTION memory_stats_updated() RETURNS trigger "
        "LANGUAGE plpgsql AS $$\nBEGIN\n"
        f"IF EXISTS ({changed}) THEN\n"
        + _APPLY.format(sign=-1, rows="before")
        + _APPLY.format(sign=1, rows="after")
        + "END IF;\nRETURN NULL;\nEND $$"
    )


_COUNTED = "memory_ref, tier, tags, invalidated_at IS NULL"


def upgrade() -> None:
    op.execute(
        _function(
            f"(SELECT {_COUNTED} FROM before EXCEPT ALL SELECT {_COUNTED} FROM after) "
            f"UNION ALL (SELECT {_COUNTED} FROM after EXCEPT ALL SELECT {_COUNTED} FROM before)"
        )
    )


def downgrade() -> None:
    op.execute(
        _function(
            "SELECT 1 FROM before JOIN after USING (memory_ref, id) "
            "WHERE before.tier IS DISTINCT FROM after.tier "
            "OR before.tags IS DISTINCT FROM after.tags "
            "OR (before.invalidated_at IS NULL) IS DISTINCT FROM (after.invalidated_at IS NULL)"
        )
    )
