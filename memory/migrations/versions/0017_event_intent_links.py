"""Lifecycle events linked to the OpenIntent intent of their entry (issue 22, item 9).

- ``memory_events.intent_digest``: on every lifecycle event (memory.created, .updated,
  .deleted, .archived, .evicted, .expired) of an entry whose metadata holds
  ``openintent.scope.intent_id``, a keyed digest of (tenant, intent id)
  (memory/keyed_ids/intent_links.py); NULL on every other event. Never the intent id itself: it is
  free text, and the log carries ids and checksums only.
- ``ix_events_intent`` serves ``GET /api/v1/intents/{intent_id}/events``: the events of
  tenant T linked to digest D after a time, oldest first, read in index order (no sort)
  and no further than the page. Sequences are per memoryRef and an intent spans agents,
  so "oldest first" is (occurred_at, memory_ref, seq), the index's order. Partial: the
  many events of no intent cost it nothing.
- The append-only rule (0012) keeps the link too: the one UPDATE it allows (forget
  redacting a tag) must leave ``intent_digest`` as it was.

Events written before this revision carry no link (their intent ids were never
recorded outside the entries, and no key is at hand here to digest them).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FORGOTTEN_MARKER = "[FORGOTTEN]"


def _append_only(keeps_intent: bool) -> str:
    """0012's rule, with (upgrade) or without (downgrade) the intent link held still."""
    intent = "     AND NEW.intent_digest IS NOT DISTINCT FROM OLD.intent_digest\n"
    return f"""
CREATE OR REPLACE FUNCTION memory_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND current_setting('agent_memory.event_redaction', true) = 'forgotten-tags'
     AND (NEW.memory_ref, NEW.seq, NEW.tenant, NEW.type, NEW.occurred_at)
         = (OLD.memory_ref, OLD.seq, OLD.tenant, OLD.type, OLD.occurred_at)
     AND NEW.dedupe_key IS NOT DISTINCT FROM OLD.dedupe_key
{intent if keeps_intent else ""}     AND jsonb_typeof(OLD.payload -> 'tags') = 'array'
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


def upgrade() -> None:
    # Nullable without a default: a catalog change, no rewrite of the log.
    op.add_column("memory_events", sa.Column("intent_digest", sa.Text))
    op.create_index(
        "ix_events_intent",
        "memory_events",
        ["tenant", "intent_digest", "occurred_at", "memory_ref", "seq"],
        postgresql_where=sa.text("intent_digest IS NOT NULL"),
    )
    op.execute(_append_only(keeps_intent=True))


def downgrade() -> None:
    op.execute(_append_only(keeps_intent=False))
    op.drop_index("ix_events_intent", table_name="memory_events")
    op.drop_column("memory_events", "intent_digest")
