"""SQLAlchemy Core table definitions for queries. The schema itself is owned by the
Alembic migrations in memory/migrations/ (these mirror them; a test checks they agree).
"""

from __future__ import annotations

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Computed,
    DateTime,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR

metadata = MetaData()

entries = Table(
    "memory_entries",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("id", Text, primary_key=True),
    Column("content", Text, nullable=False),
    Column("content_sha256", Text, nullable=False),
    Column("tags", ARRAY(Text), nullable=False),
    Column("tier", Text, nullable=False),
    Column("namespace", Text),
    Column("key", Text),
    Column("version", Integer, nullable=False),
    Column("pinned", Boolean, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    Column("subject", Text),
    Column("metadata", JSONB, nullable=False),
    Column("attribution", JSONB),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("last_accessed_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True)),
    Column("distilled_into", Text),
    # Tokens this entry alone needs to be distilled, set when a run found it larger than
    # its budget; runs with smaller budgets skip it (cleared when the content changes).
    Column("distill_cost", Integer),
    Column("superseded_by", Text),
    Column("invalidated_at", DateTime(timezone=True)),
    # Consolidation (migration 0007): how many entries a survivor stands for, and why
    # and by which pass a row was marked superseded_by.
    Column("corroboration", Integer, nullable=False, server_default="1"),
    Column("superseded_reason", Text),
    Column("consolidation_pass", Text),
    # Migration 0018: the full-text terms of the content, kept by PostgreSQL itself.
    Column(
        "search_terms",
        TSVECTOR,
        Computed("to_tsvector('english'::regconfig, content)", persisted=True),
    ),
    # Migration 0025: when and by whom the content was said (metadata.saidAt and saidBy,
    # memory/entries/said.py; said_at null: when it was written) and the order entries
    # were written in, from one sequence; search reads an entry's neighbours as context
    # (memory/search/context.py).
    Column("said_at", DateTime(timezone=True)),
    Column("said_by", Text),
    Column(
        "written_order",
        BigInteger,
        server_default=text("nextval('memory_entries_written_order')"),
        nullable=False,
    ),
)

# Every column of an entry a read returns: the derived search terms are for the
# full-text index only, and would double the bytes of every whole-row read; the written
# order is the store's own bookkeeping, never part of an entry.
entry_columns = tuple(
    column
    for column in entries.c
    if column.name not in ("search_terms", "said_at", "said_by", "written_order")
)

# Migration 0018: one vector per entry and embedding model (memory/embeddings/).
embeddings = Table(
    "memory_embeddings",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("entry_id", Text, primary_key=True),
    Column("model", Text, primary_key=True),
    Column("dimensions", Integer, nullable=False),
    Column("content_sha256", Text, nullable=False),
    Column("embedding", VECTOR(), nullable=False),
    Column("embedded_at", DateTime(timezone=True), nullable=False),
    ForeignKeyConstraint(
        ["memory_ref", "entry_id"],
        ["memory_entries.memory_ref", "memory_entries.id"],
        ondelete="CASCADE",
    ),
)

# Migration 0024: an entry's full-text terms, one row each, for BM25 (memory/indexes/terms.py).
terms = Table(
    "memory_terms",
    metadata,
    Column("memory_ref", Text, nullable=False),
    Column("term", Text, nullable=False),
    Column("entry_id", Text, nullable=False),
    Column("tenant", Text, nullable=False),
    Column("frequency", Integer, nullable=False),
    Column("entry_terms", Integer, nullable=False),
    ForeignKeyConstraint(
        ["memory_ref", "entry_id"],
        ["memory_entries.memory_ref", "memory_entries.id"],
        ondelete="CASCADE",
    ),
)

# Kept by triggers on memory_terms (migration 0024): entries holding each term, and each
# memoryRef's entries and terms, for BM25's rarity and length normalisation.
term_counts = Table(
    "memory_term_counts",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("term", Text, primary_key=True),
    Column("entries", BigInteger, nullable=False),
)

ref_term_totals = Table(
    "memory_ref_term_totals",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("entries", BigInteger, nullable=False),
    Column("terms", BigInteger, nullable=False),
)

ref_heads = Table(
    "memory_ref_heads",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("last_seq", BigInteger, nullable=False),
)

events = Table(
    "memory_events",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("dedupe_key", Text),
    # Migration 0017: the OpenIntent intent a lifecycle event's entry is scoped to, as a
    # keyed digest of (tenant, intent id), never the id (memory/keyed_ids/intent_links.py).
    Column("intent_digest", Text),
)

snapshots = Table(
    "memory_snapshots",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("snapshot_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("as_of", DateTime(timezone=True), nullable=False),
    Column("entry_count", Integer, nullable=False),
    Column("checksum", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

snapshot_items = Table(
    "memory_snapshot_items",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("snapshot_id", Text, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("entry_id", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("content", Text, nullable=False),
    Column("content_sha256", Text, nullable=False),
    Column("tags", ARRAY(Text), nullable=False),
    Column("tier", Text, nullable=False),
    Column("pinned", Boolean, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    ForeignKeyConstraint(
        ["memory_ref", "snapshot_id"],
        ["memory_snapshots.memory_ref", "memory_snapshots.snapshot_id"],
        ondelete="CASCADE",
    ),
)

archives = Table(
    "memory_archives",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("checksum", Text, primary_key=True),
    Column("body", LargeBinary, nullable=False),
    Column("run_key", Text, nullable=False),
    Column("output_id", Text, nullable=False),
    Column("source_count", Integer, nullable=False),
    Column("token_budget", Integer, nullable=False),
    Column("tokens_used", Integer, nullable=False),
    Column("byte_size", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

distillation_runs = Table(
    "distillation_runs",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("run_key", Text, primary_key=True),
    Column("result", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

workspace_files = Table(
    "workspace_files",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("path", Text, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("body", LargeBinary, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Entry counts per memoryRef, by tier and by tag, maintained by triggers (migration 0005)
# so MEMORY-INDEX.json never scans the entries.
tier_counts = Table(
    "memory_ref_tier_counts",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tier", Text, primary_key=True),
    Column("entries", BigInteger, nullable=False),
)

tag_counts = Table(
    "memory_ref_tag_counts",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tag", Text, primary_key=True),
    Column("entries", BigInteger, nullable=False),
)

# Which entries every derived artifact holds text of (migration 0006): erasure and TTL
# follow it to every copy; `memoryctl lineage` shows it.
lineage = Table(
    "memory_lineage",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("source_id", Text, primary_key=True),
    Column("artifact_kind", Text, primary_key=True),
    Column("artifact_id", Text, primary_key=True),
)

archive_tombstones = Table(
    "memory_archive_tombstones",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("checksum", Text, primary_key=True),
    Column("successor_checksum", Text),
    Column("reason", Text, nullable=False),
    Column("item_sha256", ARRAY(Text), nullable=False),
    Column("erased_item_sha256", ARRAY(Text), nullable=False),
    Column("erased_at", DateTime(timezone=True), nullable=False),
)

consolidation_passes = Table(
    "consolidation_passes",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("pass_id", Text, primary_key=True),
    Column("run_key", Text, nullable=False),
    Column("result", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("undone_at", DateTime(timezone=True)),
    UniqueConstraint("memory_ref", "run_key", name="uq_consolidation_run"),
)

conflicts = Table(
    "memory_conflicts",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("first_id", Text, primary_key=True),
    Column("second_id", Text, primary_key=True),
    Column("kinds", ARRAY(Text), nullable=False),
    Column("pass_id", Text, nullable=False),
    Column("detected_at", DateTime(timezone=True), nullable=False),
)

# A later entry superseding an older one of the same fact (migration 0026).
updates = Table(
    "memory_updates",
    metadata,
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, primary_key=True),
    Column("older_id", Text, primary_key=True),
    Column("newer_id", Text, primary_key=True),
    Column("basis", Text, nullable=False),
    Column("kinds", ARRAY(Text), nullable=False),
    Column("pass_id", Text),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)

# Inferred commitments (migration 0009).
commitments = Table(
    "commitments",
    metadata,
    Column("commitment_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, nullable=False),
    Column("memory_id", Text, nullable=False),
    Column("condition", Text, nullable=False),
    Column("spec", JSONB),
    Column("time_zone", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("next_at", DateTime(timezone=True)),
    Column("fire_count", Integer, nullable=False, server_default="0"),
    Column("missed_count", Integer, nullable=False, server_default="0"),
    Column("predicate_holds", Boolean),
    Column("transitions", Integer, nullable=False, server_default="0"),
    Column("enqueue_run", Boolean, nullable=False),
    Column("armed_at", DateTime(timezone=True)),
    Column("ended_reason", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # One live (armed or proposed) commitment per promise (migrations 0011, 0014): see
    # commitments/scan.py.
    Column("promise_key", Text),
    # What inference read (migration 0014): offsets into the entry's stored text, a
    # checksum of that span, the conventions applied. Content-free.
    Column("span_start", Integer),
    Column("span_end", Integer),
    Column("span_sha256", Text),
    Column("conventions", ARRAY(Text), nullable=False, server_default="{}"),
)

# The fire-once ledger: the primary key is the claim.
occurrences = Table(
    "commitment_occurrences",
    metadata,
    Column("commitment_id", Text, primary_key=True),
    Column("occurrence", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("memory_ref", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("due_at", DateTime(timezone=True)),
    Column("fired_at", DateTime(timezone=True), nullable=False),
    Column("claimed_at", DateTime(timezone=True), nullable=False),
    Column("event_seq", BigInteger),
    Column("enqueued_run_id", Text),
    ForeignKeyConstraint(["commitment_id"], ["commitments.commitment_id"], ondelete="CASCADE"),
)

commitment_watermarks = Table(
    "commitment_watermarks",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("scanned_through", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

tenant_settings = Table(
    "tenant_settings",
    metadata,
    Column("tenant", Text, primary_key=True),
    Column("time_zone", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Migration 0014: inferred commitments wait for confirmation; how ambiguous phrases
    # read (memory/commitment_parsing/conventions.py).
    Column("require_confirmation", Boolean, nullable=False, server_default="false"),
    Column("date_order", Text, nullable=False, server_default="MDY"),
    Column("next_weekday", Text, nullable=False, server_default="refuse-when-ambiguous"),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("key_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("secret_sha256", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
    Column("scopes", ARRAY(Text), nullable=False, server_default="{}"),
)

agent_manifests = Table(
    "agent_manifests",
    metadata,
    Column("tenant", Text, primary_key=True),
    Column("agent_id", Text, primary_key=True),
    Column("memory_shape", JSONB, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Change notifications for predicate watches (migration 0013): a per-memoryRef counter
# the entries' triggers bump in every transaction that changes what a predicate can read
# (and NOTIFY agent_memory_changed); memory/commitments/change_feed.py reads it.
ref_changes = Table(
    "memory_ref_changes",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("change_seq", BigInteger, nullable=False),
    Column("changed_at", DateTime(timezone=True), nullable=False),
    # Migration 0020: writes other than maintenance, and the work_seq a fleet dream
    # finished (memory/fleet/selection.py).
    Column("work_seq", BigInteger, nullable=False, server_default="0"),
    Column("dreamed_seq", BigInteger, nullable=False, server_default="0"),
)
# The change_seq a predicate watch's last evaluation read; NULL while no watch waits.
commitments.append_column(Column("seen_change_seq", BigInteger))

# openwop runs of the conformance fixtures (migration 0015): each run's state, and its
# event log. Variables name entries by reference, never by their text.
fixture_runs = Table(
    "fixture_runs",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("fixture", Text, nullable=False),
    # The key that started the run (its public id; null for runs from before 0016).
    Column("subject_id", Text),
    Column("status", Text, nullable=False),
    Column("variables", JSONB, nullable=False),
    Column("error", JSONB),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
fixture_run_events = Table(
    "fixture_run_events",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("type", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    ForeignKeyConstraint(["run_id"], ["fixture_runs.run_id"], ondelete="CASCADE"),
)

# Proposals (migration 0023, RFC 0096): what a dream learned the agent could automate,
# inert until applied. Unique per tenant (the conformance demo draft has one fixed id in
# every tenant). Title and rationale are written from templates, never from memory
# content; the artifact is the automation a reviewer may install.
proposals = Table(
    "proposals",
    metadata,
    Column("tenant", Text, primary_key=True),
    Column("proposal_id", Text, primary_key=True),
    Column("memory_ref", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("title", Text),
    Column("rationale", Text),
    Column("artifact", JSONB, nullable=False),
    Column("artifact_sha256", Text, nullable=False),
    Column("source_run_ids", ARRAY(Text), nullable=False),
    # The routine's entries (ids only): how a later dream knows it has proposed it.
    Column("source_entry_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("schedule_key", Text),
    Column("duplicate_of", Text),
    Column("owner", JSONB, nullable=False),
    Column("activation", JSONB),
    # Why a reviewer rejected it (free text: PostgreSQL only, never Temporal).
    Column("reason", Text),
    Column("version", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# How far a memoryRef's last synthesis read (migration 0023): the next one reads again
# only when a request arrived since (memory/proposals/sightings.py).
proposal_watermarks = Table(
    "proposal_watermarks",
    metadata,
    Column("memory_ref", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("seen_through", DateTime(timezone=True), nullable=False),
)
