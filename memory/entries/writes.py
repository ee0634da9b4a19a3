"""Writes of entries: put (one or many, atomically), optimistic-concurrency update,
delete and the task-end archive of working memory.

Every write of content, tags and metadata passes the SR-1 chokepoint
(memory/redaction/chokepoint.py, via memory/redaction/entry_fields.py); identifiers
holding a registered secret are refused. Each write and the events describing it
commit in one transaction; capped tiers are made room in under their capacity lock
(memory/entries/capacity.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, case, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.capacity import evict_over_capacity
from memory.entries.content import content_checksum, insert_entries, rewrite_entry
from memory.entries.entry_ids import new_entry_id
from memory.entries.limits import StoreLimits
from memory.entries.rows import live, to_host_entry
from memory.entries.said import said_columns
from memory.entries.stated_updates import record_stated_updates, supersede_keys
from memory.events.event_log import (
    REMOVED_COLUMNS,
    PendingEvent,
    append_events,
    append_removal_events,
)
from memory.indexes.vectors import ComputedVectors, EntryVectors
from memory.input_gate import ENTRY_ID, MAX_INT32, checked, checked_int, checked_value
from memory.keyed_ids.intent_links import IntentLinks
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.redaction.entry_fields import (
    redact_metadata,
    redact_tags,
    refuse_secret,
    refuse_secret_in_attribution,
)
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.locks import lock, memory_ref_order, tier_capacity
from memory.storage.tenant_scope import scoped
from schemas.errors import (
    ContentTooLarge,
    DuplicateKey,
    EntryNotFound,
    InvalidInput,
    VersionConflict,
)
from schemas.events import EventType, MemoryLifecycle, MemoryWritten
from schemas.memory_entry import (
    Attribution,
    EntryChanges,
    HostMemoryEntry,
    NewMemoryEntry,
    Tier,
)
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries


class EntryWrites:
    def __init__(
        self,
        db: Database,
        limits: StoreLimits,
        vectors: EntryVectors,
        id_factory: Callable[[], str] = new_entry_id,
    ) -> None:
        self.db = db
        self.limits = limits
        self.vectors = vectors
        self._new_id = id_factory

    async def put_many(
        self,
        ref: MemoryRef,
        entries: Sequence[NewMemoryEntry],
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
        within: AsyncConnection | None = None,
    ) -> list[HostMemoryEntry]:
        """Insert entries atomically: all of them (with their events) or none."""
        entries = [checked(NewMemoryEntry, entry) for entry in entries]
        if attribution is not None:
            attribution = checked(Attribution, attribution)
            refuse_secret_in_attribution(attribution, secrets)
        now = self.db.now()
        rows = [self._new_row(ref, entry, secrets, attribution, now) for entry in entries]
        if not rows:
            return []
        ids = [row["id"] for row in rows]
        if len(set(ids)) != len(ids):
            raise InvalidInput("id", "must be unique within one batch")
        links = self.db.intent_links
        pending: list[PendingEvent] = []
        for row in rows:
            pending.extend(_write_events(ref, row, EventType.MEMORY_CREATED, attribution, links))
        capacity = self.limits.capacity
        capped_tiers = sorted({Tier(row["tier"]) for row in rows} & set(capacity), key=str)
        # Embedded before the transaction opens (a model call never holds it), from the
        # content as stored: SR-1 has run.
        vectors = await self.vectors.compute([row["content"] for row in rows])
        async with self.db.writing(within) as connection:
            for tier in capped_tiers:
                await lock(connection, tier_capacity(ref, tier))
            pending += await supersede_keys(connection, ref, entries, rows, now, links)
            await _insert_rows(connection, rows, vectors, now)
            pending += await record_stated_updates(connection, ref, entries, rows, now, links)
            for tier in capped_tiers:
                pending.extend(
                    await evict_over_capacity(
                        connection,
                        ref,
                        tier,
                        capacity[tier],
                        now,
                        ids,
                        evict_live=tier in self.limits.evicting,
                        links=links,
                    )
                )
            await append_events(connection, ref, pending, now)
        return [to_host_entry(_RowView(row)) for row in rows]

    async def update(
        self,
        ref: MemoryRef,
        memory_id: str,
        changes: EntryChanges,
        *,
        expected_version: int,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
        within: AsyncConnection | None = None,
    ) -> HostMemoryEntry:
        """Optimistic-concurrency update: succeeds only at ``expected_version``."""
        memory_id = checked_value(ENTRY_ID, memory_id, "id")
        expected_version = checked_int("expectedVersion", expected_version, 1, MAX_INT32)
        changes = checked(EntryChanges, changes)
        if attribution is not None:
            attribution = checked(Attribution, attribution)
            refuse_secret_in_attribution(attribution, secrets)
        now = self.db.now()
        content = (
            self._checked_content(changes.content, secrets) if changes.content is not None else None
        )
        values = self._changed_values(changes, content, secrets, attribution, now)
        vectors = await self.vectors.compute([content] if content is not None else [])
        async with self.db.writing(within) as connection:
            row = await rewrite_entry(
                connection,
                ref,
                memory_id,
                now,
                content=content,
                values=values,
                where=(live(now), ENTRIES.c.version == expected_version),
                vectors=vectors,
            )
            if row is None:
                current = (
                    await connection.execute(
                        select(ENTRIES.c.version).where(
                            scoped(ENTRIES, ref), ENTRIES.c.id == memory_id, live(now)
                        )
                    )
                ).scalar_one_or_none()
                if current is None:
                    raise EntryNotFound(memory_id)
                raise VersionConflict(memory_id, expected_version, current)
            stored = dict(row._mapping)
            events = _write_events(
                ref,
                stored,
                EventType.MEMORY_UPDATED,
                attribution,
                self.db.intent_links,
                expected_version,
            )
            await append_events(connection, ref, events, now)
        return to_host_entry(row)

    async def archive_working_memory(self, ref: MemoryRef) -> int:
        """Task end (RFC-0015 §2.1): record memory.archived for every working-tier entry
        of the ref and clear them. Events carry ids and versions, not values."""
        return await self.delete_where(
            ref,
            [ENTRIES.c.tier == Tier.WORKING.value],
            "task-complete",
            event_type=EventType.MEMORY_ARCHIVED,
        )

    async def delete_where(
        self,
        ref: MemoryRef,
        clauses: Sequence[ColumnElement[bool]],
        reason: str,
        *,
        event_type: EventType = EventType.MEMORY_DELETED,
    ) -> int:
        now = self.db.now()
        async with self.db.writing() as connection:
            # Ordered with inference and the other derived operations (memory/storage/locks.py):
            # an inference either sees these rows gone or made commitments the delete
            # trigger ends.
            await lock(connection, memory_ref_order(ref))
            statement = (
                delete(ENTRIES).where(scoped(ENTRIES, ref), *clauses).returning(*REMOVED_COLUMNS)
            )
            removed = (await connection.execute(statement)).all()
            await append_removal_events(
                connection, removed, event_type, reason, now, self.db.intent_links
            )
        return len(removed)

    # ------------------------------------------------------------------ row building

    def _checked_content(self, content: str, secrets: MemorySecretRegistry | None) -> str:
        # NUL and surrogates were refused by the model rules (schemas/memory_entry.py).
        limit = self.limits.max_content_bytes
        size = len(content.encode("utf-8"))
        if size > limit:
            raise ContentTooLarge(limit, size)
        redacted = write_redacted(content, secrets)
        redacted_size = len(redacted.encode("utf-8"))
        if redacted_size > limit:
            raise ContentTooLarge(limit, redacted_size)
        return redacted

    def _new_row(
        self,
        ref: MemoryRef,
        entry: NewMemoryEntry,
        secrets: MemorySecretRegistry | None,
        attribution: Attribution | None,
        now: datetime,
    ) -> dict[str, Any]:
        if (entry.namespace is None) != (entry.key is None):
            raise InvalidInput("key", "namespace and key must be given together")
        _check_expiry(entry.expires_at, now)
        for name, value in (
            ("id", entry.id),
            ("namespace", entry.namespace),
            ("key", entry.key),
            ("subject", entry.subject),
        ):
            refuse_secret(name, value, secrets)
        metadata = redact_metadata(entry.metadata, secrets)
        return {
            "tenant": ref.tenant,
            "memory_ref": str(ref),
            "id": entry.id or self._new_id(),
            "content": self._checked_content(entry.content, secrets),
            "tags": redact_tags(entry.tags, secrets),
            "tier": entry.tier.value,
            "namespace": entry.namespace,
            "key": entry.key,
            "version": 1,
            "pinned": entry.pinned,
            "priority": entry.priority.rank,
            "subject": entry.subject,
            "metadata": metadata,
            # Read from the metadata as stored (SR-1 has run): a secret in saidBy lands
            # in the column as its marker, never as itself.
            **said_columns(metadata),
            "attribution": attribution.to_wire() if attribution else None,
            "created_at": now,
            "updated_at": now,
            "last_accessed_at": now,
            "expires_at": entry.expires_at,
        }

    def _changed_values(
        self,
        changes: EntryChanges,
        content: str | None,
        secrets: MemorySecretRegistry | None,
        attribution: Attribution | None,
        now: datetime,
    ) -> dict[str, Any]:
        """Every column an edit sets but the content and its checksum, which the one
        writer sets (memory/entries/content.py)."""
        values: dict[str, Any] = {
            "version": ENTRIES.c.version + 1,
            "updated_at": now,
            "last_accessed_at": now,
        }
        if content is not None:
            # Edited content has not been distilled: clearing the consumed mark puts the
            # entry back in the distillation queue. Re-sending identical content is no edit.
            unchanged = ENTRIES.c.content_sha256 == content_checksum(content)
            values["distilled_into"] = case((unchanged, ENTRIES.c.distilled_into), else_=None)
            # Its size changed too: a parked "too large for the budget" mark is stale.
            values["distill_cost"] = case((unchanged, ENTRIES.c.distill_cost), else_=None)
        if changes.tags is not None:
            values["tags"] = redact_tags(changes.tags, secrets)
        if changes.pinned is not None:
            values["pinned"] = changes.pinned
        if changes.priority is not None:
            values["priority"] = changes.priority.rank
        if changes.metadata is not None:
            values["metadata"] = redact_metadata(changes.metadata, secrets)
            values.update(said_columns(values["metadata"]))
        if changes.expires_at is not None:
            _check_expiry(changes.expires_at, now)
            values["expires_at"] = changes.expires_at
        if attribution is not None:
            values["attribution"] = attribution.to_wire()
        return values


def _check_expiry(expires_at: datetime | None, now: datetime) -> None:
    if expires_at is not None and expires_at <= now:
        raise InvalidInput("expiresAt", "must be in the future")


def _write_events(
    ref: MemoryRef,
    row: Mapping[str, Any],
    event_type: EventType,
    attribution: Attribution | None,
    links: IntentLinks,
    previous_version: int | None = None,
) -> list[PendingEvent]:
    tags = tuple(row["tags"])
    return [
        PendingEvent(
            event_type,
            MemoryLifecycle(
                memory_ref=str(ref),
                memory_id=row["id"],
                tier=Tier(row["tier"]),
                namespace=row["namespace"],
                key=row["key"],
                version=row["version"],
                previous_version=previous_version,
                tags=tags,
            ),
            intent=links.of_metadata(ref.tenant, row["metadata"]),
        ),
        PendingEvent(
            EventType.MEMORY_WRITTEN,
            MemoryWritten(
                memory_ref=str(ref),
                memory_id=row["id"],
                node_id=attribution.node_id if attribution else None,
                agent_id=attribution.agent_id if attribution else None,
                tags=tags,
            ),
        ),
    ]


async def _insert_rows(
    connection: AsyncConnection,
    rows: list[dict[str, Any]],
    vectors: ComputedVectors | None,
    now: datetime,
) -> None:
    try:
        async with connection.begin_nested():
            await insert_entries(connection, rows, now, vectors=vectors)
    except IntegrityError as error:
        # Name the field, never the content. The savepoint keeps the outer
        # transaction usable so the caller's rollback is clean.
        if "ix_entries_ref_key" in str(error.orig):
            raise DuplicateKey("key", "namespace and key") from None
        raise DuplicateKey("id", "id") from None


class _RowView:
    """Attribute access over a freshly inserted row dict (same shape as a DB row)."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.__dict__.update(row)
