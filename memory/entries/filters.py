"""The OpenIntent query's filters as WHERE clauses on entries: one builder for the tag
query, the count and search, so every read filters the same way.

Each filter is written once, as a clause over a value. ``entry_filters`` gives it the
query's values (statements built per call); ``filter_shape`` / ``shaped_filters`` /
``filter_values`` give it bind parameters instead, so the tag query is built and
compiled once per combination of filters (memory/storage/prepared.py) and takes the values at
run time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, exists, select

from memory.entries.rows import live
from memory.entries.said import said_or_written
from memory.storage import tables
from memory.storage.tenant_scope import scope_params, scoped, scoped_by_params
from schemas.memory_entry import MemoryQuery
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
LIKE_ESCAPE = "/"


def like_prefix(prefix: str) -> str:
    """``prefix`` with LIKE's wildcards escaped (what SQLAlchemy's autoescape does, also
    for a value bound at run time)."""
    return (
        prefix.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", LIKE_ESCAPE + "%")
        .replace("_", LIKE_ESCAPE + "_")
    )


UPDATES = tables.updates
NEWER = ENTRIES.alias("newer")


def not_superseded() -> ColumnElement[bool]:
    """No live entry supersedes this one (memory_updates; the older of a changed fact
    stays live and is otherwise served, marked): for reads that want current values
    only, and for inference, which never arms a promise a later entry replaced."""
    return ~exists(
        select(UPDATES.c.older_id)
        .join(
            NEWER,
            and_(NEWER.c.memory_ref == UPDATES.c.memory_ref, NEWER.c.id == UPDATES.c.newer_id),
        )
        .where(
            UPDATES.c.tenant == ENTRIES.c.tenant,
            UPDATES.c.memory_ref == ENTRIES.c.memory_ref,
            UPDATES.c.older_id == ENTRIES.c.id,
            NEWER.c.invalidated_at.is_(None),
        )
    )


# name -> (the query's value for it, None when the filter is off; the clause over a value)
_FILTERS: dict[str, tuple[Callable[[MemoryQuery], Any], Callable[[Any], ColumnElement[bool]]]] = {
    "tags_all": (lambda q: list(q.tags_all) or None, lambda v: ENTRIES.c.tags.contains(v)),
    "tags_any": (lambda q: list(q.tags_any) or None, lambda v: ENTRIES.c.tags.overlap(v)),
    "tier": (lambda q: q.tier.value if q.tier is not None else None, lambda v: ENTRIES.c.tier == v),
    "namespace": (lambda q: q.namespace, lambda v: ENTRIES.c.namespace == v),
    "pinned": (lambda q: q.pinned, lambda v: ENTRIES.c.pinned.is_(v)),
    "subject": (lambda q: q.subject, lambda v: ENTRIES.c.subject == v),
    "key": (lambda q: q.key, lambda v: ENTRIES.c.key == v),
    "namespace_prefix": (
        lambda q: like_prefix(q.namespace_prefix) if q.namespace_prefix is not None else None,
        lambda v: ENTRIES.c.namespace.startswith(v, escape=LIKE_ESCAPE),
    ),
    "updated_after": (lambda q: q.updated_after, lambda v: ENTRIES.c.updated_at > v),
    "updated_before": (lambda q: q.updated_before, lambda v: ENTRIES.c.updated_at < v),
    "said_by": (lambda q: q.said_by, lambda v: ENTRIES.c.said_by == v),
    "said_after": (lambda q: q.said_after, lambda v: said_or_written(ENTRIES) > v),
    "said_before": (lambda q: q.said_before, lambda v: said_or_written(ENTRIES) < v),
    "exclude_superseded": (
        lambda q: True if q.exclude_superseded else None,
        lambda _: not_superseded(),
    ),
}
# Filters whose value is written into the statement, not bound: ``pinned IS true`` takes
# no parameter, and two values make two shapes.
_IN_SHAPE = frozenset({"pinned", "exclude_superseded"})

Shape = tuple[tuple[str, object], ...]


def entry_filters(ref: MemoryRef, query: MemoryQuery, now: datetime) -> list[ColumnElement[bool]]:
    """The live entries of ``ref`` that ``query``'s filters admit (limit and offset are
    the caller's)."""
    clauses = [scoped(ENTRIES, ref), live(now)]
    for value_of, clause in _FILTERS.values():
        value = value_of(query)
        if value is not None:
            clauses.append(clause(value))
    return clauses


def filter_shape(query: MemoryQuery) -> Shape:
    """Which filters ``query`` turns on (with the value of those written into the
    statement): queries of one shape share one statement."""
    shape = []
    for name, (value_of, _) in _FILTERS.items():
        value = value_of(query)
        if value is not None:
            shape.append((name, value if name in _IN_SHAPE else None))
    return tuple(shape)


def shaped_filters(shape: Shape) -> list[ColumnElement[bool]]:
    """entry_filters for every query of ``shape``, over bind parameters: the scope's
    (memory/storage/tenant_scope.py scope_params), ``now`` and ``filter_<name>``."""
    clauses = [scoped_by_params(ENTRIES), live(bindparam("now", type_=ENTRIES.c.expires_at.type))]
    for name, written in shape:
        _, clause = _FILTERS[name]
        clauses.append(clause(written if name in _IN_SHAPE else bindparam(f"filter_{name}")))
    return clauses


def filter_values(ref: MemoryRef, query: MemoryQuery, now: datetime) -> dict[str, Any]:
    """The values shaped_filters' parameters take for ``query``."""
    values: dict[str, Any] = {**scope_params(ref), "now": now}
    for name, (value_of, _) in _FILTERS.items():
        if name not in _IN_SHAPE:
            value = value_of(query)
            if value is not None:
                values[f"filter_{name}"] = value
    return values
