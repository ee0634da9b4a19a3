"""Term postings for BM25 ranking (issue 38): one row per (entry, term) of an entry's
full-text terms, with the term's frequency in the entry and the entry's length in terms.

The terms are exactly the entry's ``search_terms`` (``to_tsvector('english', content)``:
stemmed, stop words dropped), unnested in SQL by the one writer of entry content
(memory/entries/content.py -> memory/indexes/terms.py) in the transaction that writes
the content. The foreign key deletes an entry's postings with it: forget, TTL and erasure reach
them.

BM25 also needs how many entries hold each term and the memoryRef's entry count and
length in terms. Counting them per query would read every posting of a common word (a
speaker's name is in every turn), so statement-level triggers on memory_terms keep them,
as migration 0005 keeps the tier and tag counts: ``memory_term_counts`` (memoryRef, term
-> entries) and ``memory_ref_term_totals`` (memoryRef -> entries, terms). A count that
reaches zero is deleted, so no row names a term no entry holds any more: a forget
reaches the statistics too. Rows are added in key order, so two writers lock them in the
same order.

``ix_terms_ranked`` orders one term's postings of one memoryRef by what they add to a
BM25 score (more occurrences first, then shorter entries), so the ranking reads only the
best few hundred of a common term; ``ix_terms_entry`` serves the foreign key, a rewrite's
delete of one entry's postings and the exact scoring of the candidates.

The GIN index over ``search_terms`` (migration 0018) goes: the ranking no longer matches
the tsvector (``@@``), so every write maintained an index no read used.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FUNCTIONS = {
    "memory_terms_added": """
INSERT INTO memory_term_counts AS c (memory_ref, term, entries)
SELECT memory_ref, term, count(*) FROM added GROUP BY memory_ref, term ORDER BY memory_ref, term
ON CONFLICT (memory_ref, term) DO UPDATE SET entries = c.entries + EXCLUDED.entries;
INSERT INTO memory_ref_term_totals AS t (memory_ref, entries, terms)
SELECT memory_ref, count(DISTINCT entry_id), sum(frequency) FROM added
GROUP BY memory_ref ORDER BY memory_ref
ON CONFLICT (memory_ref) DO UPDATE
SET entries = t.entries + EXCLUDED.entries, terms = t.terms + EXCLUDED.terms;""",
    "memory_terms_removed": """
UPDATE memory_term_counts AS c SET entries = c.entries - gone.entries
FROM (SELECT memory_ref, term, count(*) AS entries FROM removed GROUP BY memory_ref, term) AS gone
WHERE c.memory_ref = gone.memory_ref AND c.term = gone.term;
DELETE FROM memory_term_counts AS c
USING (SELECT DISTINCT memory_ref, term FROM removed) AS gone
WHERE c.memory_ref = gone.memory_ref AND c.term = gone.term AND c.entries <= 0;
UPDATE memory_ref_term_totals AS t
SET entries = t.entries - gone.entries, terms = t.terms - gone.terms
FROM (SELECT memory_ref, count(DISTINCT entry_id) AS entries, sum(frequency) AS terms
      FROM removed GROUP BY memory_ref) AS gone
WHERE t.memory_ref = gone.memory_ref;
DELETE FROM memory_ref_term_totals AS t
USING (SELECT DISTINCT memory_ref FROM removed) AS gone
WHERE t.memory_ref = gone.memory_ref AND t.entries <= 0;""",
}
_TRIGGERS = {
    "memory_terms_added": "AFTER INSERT ON memory_terms REFERENCING NEW TABLE AS added",
    "memory_terms_removed": "AFTER DELETE ON memory_terms REFERENCING OLD TABLE AS removed",
}


def upgrade() -> None:
    op.drop_index("ix_entries_search_terms", table_name="memory_entries")
    op.execute(
        """
CREATE TABLE memory_terms (
  memory_ref text NOT NULL,
  term text NOT NULL,
  entry_id text NOT NULL,
  tenant text NOT NULL,
  frequency integer NOT NULL CHECK (frequency > 0),
  entry_terms integer NOT NULL CHECK (entry_terms > 0),
  FOREIGN KEY (memory_ref, entry_id) REFERENCES memory_entries (memory_ref, id)
    ON DELETE CASCADE
)"""
    )
    op.execute(
        "CREATE UNIQUE INDEX ix_terms_ranked ON memory_terms"
        " (memory_ref, term, frequency DESC, entry_terms, entry_id)"
    )
    op.execute("CREATE INDEX ix_terms_entry ON memory_terms (memory_ref, entry_id, term)")
    op.execute(
        """
CREATE TABLE memory_term_counts (
  memory_ref text NOT NULL,
  term text NOT NULL,
  entries bigint NOT NULL,
  PRIMARY KEY (memory_ref, term)
)"""
    )
    op.execute(
        """
CREATE TABLE memory_ref_term_totals (
  memory_ref text PRIMARY KEY,
  entries bigint NOT NULL,
  terms bigint NOT NULL
)"""
    )
    for name, body in _FUNCTIONS.items():
        op.execute(
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN\n{body}\nRETURN NULL;\nEND $$"
        )
        op.execute(
            f"CREATE TRIGGER {name} {_TRIGGERS[name]} FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
        )
    # Frozen copy of memory/indexes/terms.py's derivation, over every stored entry (the
    # triggers count what it inserts).
    op.execute(
        """
INSERT INTO memory_terms (memory_ref, term, entry_id, tenant, frequency, entry_terms)
SELECT e.memory_ref, t.lexeme, e.id, e.tenant, coalesce(array_length(t.positions, 1), 1),
       sum(coalesce(array_length(t.positions, 1), 1)) OVER (PARTITION BY e.memory_ref, e.id)
FROM memory_entries e CROSS JOIN LATERAL unnest(e.search_terms) AS t"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE memory_terms")
    for name in _FUNCTIONS:
        op.execute(f"DROP FUNCTION {name}()")
    op.execute("DROP TABLE memory_term_counts")
    op.execute("DROP TABLE memory_ref_term_totals")
    op.create_index(
        "ix_entries_search_terms", "memory_entries", ["search_terms"], postgresql_using="gin"
    )
