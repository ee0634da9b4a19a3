"""A forgotten tag's name leaves the counters and the event log (issue 20, item 3).

- **Tag counters at zero are dropped.** The MEMORY-INDEX counters (0005, 0008) left a row
  at ``entries = 0`` when the last entry carrying a tag was deleted, retagged or
  superseded: the tag's name outlived every entry. The DELETE and UPDATE triggers now
  drop the rows they brought to zero, for the tags of the rows they saw (a statement-level
  DELETE ... USING over the transition table, run with EXECUTE so it is planned for each
  statement: the lesson of 0008). A reader cannot tell a row at zero from no row (the
  index lists tags with a count above zero), and an INSERT ... ON CONFLICT of a
  concurrent writer that meets a deleted row retries as an insert. The rows already at
  zero are dropped here. Tier counters keep their rows: a tier name is no memory.
- **Forget may redact a tag in the event log**, and only that. The log stays append-only
  in meaning: DELETE is still refused, and so is every UPDATE except one that, inside a
  transaction that declared ``agent_memory.event_redaction = 'forgotten-tags'`` (erasure
  does, memory/erasure/forgotten_tags.py), changes nothing of an event but elements of its
  ``tags`` array, each into the marker ``[FORGOTTEN]`` (same length, same order, same
  sequence, type, ids, versions and time).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FORGOTTEN_MARKER = "[FORGOTTEN]"

# Add (sign 1) or remove (sign -1) the rows of one transition table (as in 0008).
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

# The tag rows this statement may have brought to zero.
_DROP_ZEROS = """
EXECUTE $q$
DELETE FROM memory_ref_tag_counts AS t
 USING (SELECT DISTINCT memory_ref, tag FROM {rows}, unnest(tags) AS tag) AS seen
 WHERE t.memory_ref = seen.memory_ref AND t.tag = seen.tag AND t.entries = 0
$q$;
"""

_COUNTED = "memory_ref, tier, tags, invalidated_at IS NULL"
_CHANGED = (
    f"(SELECT {_COUNTED} FROM before EXCEPT ALL SELECT {_COUNTED} FROM after) "
    f"UNION ALL (SELECT {_COUNTED} FROM after EXCEPT ALL SELECT {_COUNTED} FROM before)"
)


def _deleted(drop_zeros: bool) -> str:
    return (
        "CREATE OR REPLACE FUNCTION memory_stats_deleted() RETURNS trigger "
        "LANGUAGE plpgsql AS $$\nBEGIN\n"
        + _APPLY.format(sign=-1, rows="removed")
        + (_DROP_ZEROS.format(rows="removed") if drop_zeros else "")
        + "RETURN NULL;\nEND $$"
    )


def _updated(drop_zeros: bool) -> str:
    return (
        "CREATE OR REPLACE FUNCTION memory_stats_updated() RETURNS trigger "
        "LANGUAGE plpgsql AS $$\nBEGIN\n"
        f"IF EXISTS ({_CHANGED}) THEN\n"
        + _APPLY.format(sign=-1, rows="before")
        + _APPLY.format(sign=1, rows="after")
        + (_DROP_ZEROS.format(rows="before") if drop_zeros else "")
        + "END IF;\nRETURN NULL;\nEND $$"
    )


_APPEND_ONLY = f"""
CREATE OR REPLACE FUNCTION memory_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND current_setting('agent_memory.event_redaction', true) = 'forgotten-tags'
     AND (NEW.memory_ref, NEW.seq, NEW.tenant, NEW.type, NEW.occurred_at)
         = (OLD.memory_ref, OLD.seq, OLD.tenant, OLD.type, OLD.occurred_at)
     AND NEW.dedupe_key IS NOT DISTINCT FROM OLD.dedupe_key
     AND jsonb_typeof(OLD.payload -> 'tags') = 'array'
     AND jsonb_typeof(NEW.payload -> 'tags') = 'array'
     AND (NEW.payload - 'tags') = (OLD.payload - 'tags')
     AND jsonb_array_length(NEW.payload -> 'tags') = jsonb_array_length(OLD.payload -> 'tags')
     AND NOT EXISTS (
       SELECT 1
         FROM jsonb_array_elements(OLD.payload -> 'tags') WITH ORDINALITY AS o(tag, n)
         JOIN jsonb_array_elements(NEW.payload -> 'tags') WITH ORDINALITY AS r(tag, n)
              USING (n)
        WHERE r.tag <> o.tag AND r.tag <> to_jsonb('{FORGOTTEN_MARKER}'::text))
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'memory_events is append-only';
END $$
"""

_APPEND_ONLY_0001 = """
CREATE OR REPLACE FUNCTION memory_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'memory_events is append-only';
END $$
"""


def upgrade() -> None:
    op.execute(_deleted(drop_zeros=True))
    op.execute(_updated(drop_zeros=True))
    op.execute("DELETE FROM memory_ref_tag_counts WHERE entries = 0")
    op.execute(_APPEND_ONLY)


def downgrade() -> None:
    op.execute(_APPEND_ONLY_0001)
    op.execute(_updated(drop_zeros=False))
    op.execute(_deleted(drop_zeros=False))
