"""Shared query pieces: the TTL "live" predicate and row -> model. (Tenant scoping is
memory/scope.py.)"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, FromClause, and_, or_

from memory import tables
from schemas.memory_entry import Attribution, HostMemoryEntry, Priority, Tier

E = tables.entries


def live(now: datetime, entries: FromClause = E) -> ColumnElement[bool]:
    """An entry surfaces only while unexpired (strictly before expiresAt, ms floor) and
    not superseded by consolidation. ``entries``: an alias of the table, for joins."""
    return and_(
        or_(entries.c.expires_at.is_(None), entries.c.expires_at > now),
        entries.c.invalidated_at.is_(None),
    )


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
