"""The OpenIntent query's filters as WHERE clauses on entries: one builder for the tag
query, the count and search, so every read filters the same way."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement

from memory import tables
from memory.rows import live
from memory.scope import scoped
from schemas.memory_entry import MemoryQuery
from schemas.memory_ref import MemoryRef

E = tables.entries


def entry_filters(ref: MemoryRef, query: MemoryQuery, now: datetime) -> list[ColumnElement[bool]]:
    """The live entries of ``ref`` that ``query``'s filters admit (limit and offset are
    the caller's)."""
    clauses = [scoped(E, ref), live(now)]
    if query.tags_all:
        clauses.append(E.c.tags.contains(list(query.tags_all)))
    if query.tags_any:
        clauses.append(E.c.tags.overlap(list(query.tags_any)))
    if query.tier is not None:
        clauses.append(E.c.tier == query.tier.value)
    if query.namespace is not None:
        clauses.append(E.c.namespace == query.namespace)
    if query.pinned is not None:
        clauses.append(E.c.pinned.is_(query.pinned))
    if query.subject is not None:
        clauses.append(E.c.subject == query.subject)
    if query.key is not None:
        clauses.append(E.c.key == query.key)
    if query.namespace_prefix is not None:
        clauses.append(E.c.namespace.startswith(query.namespace_prefix, autoescape=True))
    if query.updated_after is not None:
        clauses.append(E.c.updated_at > query.updated_after)
    if query.updated_before is not None:
        clauses.append(E.c.updated_at < query.updated_before)
    return clauses
