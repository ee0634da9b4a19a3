"""Shared query pieces: the TTL "live" predicate, the holders of keys, and row -> model.
(Tenant scoping is memory/storage/tenant_scope.py.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import ColumnElement, FromClause, and_, or_, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.storage import tables
from memory.storage.sql_arrays import texts
from schemas.base import floor_ms
from schemas.memory_entry import Attribution, HostMemoryEntry, MemoryEntry, Priority, Tier
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
M = TypeVar("M", bound=BaseModel)

# The columns a HostMemoryEntry is built from (reads need no more of the row), and the
# openwop MemoryEntry's.
HOST_ENTRY_COLUMNS = (
    ENTRIES.c.id,
    ENTRIES.c.content,
    ENTRIES.c.tags,
    ENTRIES.c.created_at,
    ENTRIES.c.expires_at,
    ENTRIES.c.tier,
    ENTRIES.c.namespace,
    ENTRIES.c.key,
    ENTRIES.c.version,
    ENTRIES.c.pinned,
    ENTRIES.c.priority,
    ENTRIES.c.subject,
    ENTRIES.c.metadata,
    ENTRIES.c.attribution,
    ENTRIES.c.updated_at,
    ENTRIES.c.last_accessed_at,
    ENTRIES.c.content_sha256,
)
MEMORY_ENTRY_COLUMNS = (
    ENTRIES.c.id,
    ENTRIES.c.content,
    ENTRIES.c.tags,
    ENTRIES.c.created_at,
    ENTRIES.c.expires_at,
)


def live(
    now: datetime | ColumnElement[datetime], entries: FromClause = ENTRIES
) -> ColumnElement[bool]:
    """An entry surfaces only while unexpired (strictly before expiresAt, ms floor) and
    not superseded by consolidation. ``entries``: an alias of the table, for joins.
    ``now`` may be a bind parameter (memory/storage/prepared.py statements)."""
    return and_(
        or_(entries.c.expires_at.is_(None), entries.c.expires_at > now),
        entries.c.invalidated_at.is_(None),
    )


async def key_holders(
    connection: AsyncConnection,
    ref: MemoryRef,
    pairs: Sequence[tuple[str, str]],
    *,
    for_update: bool = False,
) -> list[Any]:
    """(id, namespace, key) of the entries of ``ref`` that hold any of these (namespace,
    key) pairs now (not invalidated), locked when ``for_update``: who a keyed write
    would collide with, or supersede."""
    if not pairs:
        return []
    namespaces, keys = (list(column) for column in zip(*pairs, strict=True))
    query = (
        "SELECT e.id, e.namespace, e.key FROM memory_entries AS e "
        "JOIN unnest(:namespaces, :keys) AS v(namespace, key) "
        "ON e.namespace = v.namespace AND e.key = v.key "
        "WHERE e.tenant = :tenant AND e.memory_ref = :ref AND e.invalidated_at IS NULL"
    )
    statement = text(query + (" FOR UPDATE OF e" if for_update else ""))
    bound = statement.bindparams(texts("namespaces", namespaces), texts("keys", keys))
    return list((await connection.execute(bound, {"tenant": ref.tenant, "ref": str(ref)})).all())


def to_host_entry(row: Any) -> HostMemoryEntry:
    return HostMemoryEntry(
        id=row.id,
        content=row.content,
        tags=tuple(row.tags),
        created_at=row.created_at,
        expires_at=row.expires_at,
        tier=Tier(row.tier),
        namespace=row.namespace,
        key=row.key,
        version=row.version,
        pinned=row.pinned,
        priority=Priority.from_rank(row.priority),
        subject=row.subject,
        metadata=row.metadata,
        attribution=Attribution.model_validate(row.attribution) if row.attribution else None,
        updated_at=row.updated_at,
        last_accessed_at=row.last_accessed_at,
        content_sha256=row.content_sha256,
    )


# ------------------------------------------------------------------ stored rows, unchecked
#
# A row of memory_entries was validated on its way in (every write parses its input
# into the schemas' models first), so reading it back need not validate it again: for a
# list of 100 entries validation cost more than the query (5.7 against 0.7 us an entry).
# What validation would still change is applied here: an instant is UTC with a
# millisecond floor (schemas/base.py Instant), tags are a tuple, tier and priority are
# their enums. tests/memory/test_prepared_reads.py holds these builders equal to the
# validated models, field by field, for an entry with every field set.


# Lookups instead of the enum constructors: a tenth of their cost, the same members.
_TIERS = {tier.value: tier for tier in Tier}
_PRIORITIES = tuple(Priority.from_rank(rank) for rank in range(len(Priority)))


def _instant(value: datetime) -> datetime:
    # asyncpg returns timestamptz in UTC, and the store writes millisecond floors: most
    # values need neither conversion (replace() costs 0.8 us a call).
    if value.tzinfo is UTC and not value.microsecond % 1000:
        return value
    return floor_ms(value.astimezone(UTC))


_BUILDABLE: set[type[BaseModel]] = set()


def unchecked(model: type[M], values: dict[str, Any], defaults: dict[str, Any] | None = None) -> M:
    """``model`` holding ``values`` (every field, in declaration order) without
    validation; what ``model.model_construct`` makes, at a quarter of its cost. Only for
    values already of the declared types, from a source that validated them.
    ``defaults``: the remaining fields at their default values (not in the fields set,
    as validation leaves them)."""
    if model not in _BUILDABLE:
        # What this leaves out, the model must not need: private attributes or a
        # post-init hook would go unset.
        if model.__private_attributes__ or model.__pydantic_post_init__:
            raise TypeError(f"{model.__name__} cannot be built unchecked")
        _BUILDABLE.add(model)
    instance = model.__new__(model)
    object.__setattr__(instance, "__dict__", {**values, **defaults} if defaults else values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(values))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


def _openwop_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields every stored entry model shares (openwop MemoryEntry's)."""
    expires_at = row["expires_at"]
    return {
        "id": row["id"],
        "content": row["content"],
        "tags": tuple(row["tags"]),
        "created_at": _instant(row["created_at"]),
        "expires_at": None if expires_at is None else _instant(expires_at),
    }


def stored_memory_entry(row: Mapping[str, Any]) -> MemoryEntry:
    """The openwop MemoryEntry of a stored row holding MEMORY_ENTRY_COLUMNS."""
    return unchecked(MemoryEntry, _openwop_fields(row))


# The update marks a read sets when it has any (memory/search/update_marks.py).
_UNMARKED = {"superseded_by": None, "conflicts_with": None}


def stored_host_entry(row: Mapping[str, Any]) -> HostMemoryEntry:
    """The HostMemoryEntry of a stored row holding HOST_ENTRY_COLUMNS."""
    attribution = row["attribution"]
    return unchecked(
        HostMemoryEntry,
        {
            **_openwop_fields(row),
            "tier": _TIERS[row["tier"]],
            "namespace": row["namespace"],
            "key": row["key"],
            "version": row["version"],
            "pinned": row["pinned"],
            "priority": _PRIORITIES[row["priority"]],
            "subject": row["subject"],
            "metadata": row["metadata"],
            # Small and rare: parsed as the validated model did.
            "attribution": Attribution.model_validate(attribution) if attribution else None,
            "updated_at": _instant(row["updated_at"]),
            "last_accessed_at": _instant(row["last_accessed_at"]),
            "content_sha256": row["content_sha256"],
        },
        _UNMARKED,
    )
