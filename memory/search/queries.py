"""Reads of live entries: the openwop list/get and the OpenIntent key and tag queries.

Every read is scoped to one memoryRef (memory/storage/tenant_scope.py) and filtered by
``live(now)``, so an expired or superseded entry never surfaces. A filter value no
entry can hold finds nothing instead of raising (memory/input_gate.py).

These are the reads every agent session starts with, so their statements are built and
compiled once (per shape for the tag query) and run on the pooled asyncpg connection
(memory/storage/prepared.py), and their rows become models without a second validation
(memory/entries/rows.py): each used to cost 4-6x what PostgreSQL takes to answer it.
"""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import Integer, bindparam, func, select, update

from memory.entries.filters import (
    Shape,
    entry_filters,
    filter_shape,
    filter_values,
    shaped_filters,
)
from memory.entries.limits import StoreLimits
from memory.entries.rows import (
    HOST_ENTRY_COLUMNS,
    MEMORY_ENTRY_COLUMNS,
    live,
    stored_host_entry,
    stored_memory_entry,
)
from memory.input_gate import (
    ENTRY_ID,
    LIST_MATCH,
    NAME,
    possible,
    read_filter,
    read_query,
)
from memory.search.ranking import EntrySearch
from memory.search.read_budget import within_budget
from memory.search.update_marks import read_marks
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.prepared import Prepared
from memory.storage.tenant_scope import scope_params, scoped_by_params
from schemas.errors import InvalidInput
from schemas.memory_entry import (
    MAX_LIST_LIMIT,
    HostMemoryEntry,
    MemoryEntry,
    MemoryListOptions,
    MemoryQuery,
    Tier,
)
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
DEFAULT_LIST_LIMIT = 100
_LISTED = MEMORY_ENTRY_COLUMNS
_NEWEST_FIRST = (ENTRIES.c.created_at.desc(), ENTRIES.c.id.desc())


def _live_in_ref() -> list[Any]:
    """The scope and live() over bind parameters: scope_params(ref) and ``now``."""
    return [scoped_by_params(ENTRIES), live(bindparam("now", type_=ENTRIES.c.expires_at.type))]


def _page(name: str) -> Any:
    return bindparam(name, type_=Integer)


_GET = Prepared(select(*HOST_ENTRY_COLUMNS).where(*_live_in_ref(), ENTRIES.c.id == bindparam("id")))
# The openwop get: its five fields, and the tier the LRU touch depends on.
_GET_LISTED = Prepared(
    select(*_LISTED, ENTRIES.c.tier).where(*_live_in_ref(), ENTRIES.c.id == bindparam("id"))
)
_TOUCH = Prepared(
    update(ENTRIES)
    .where(scoped_by_params(ENTRIES), ENTRIES.c.id == bindparam("id"))
    .values(last_accessed_at=bindparam("now"))
)
_BY_KEY = Prepared(
    select(*HOST_ENTRY_COLUMNS).where(
        *_live_in_ref(),
        ENTRIES.c.namespace == bindparam("namespace"),
        ENTRIES.c.key == bindparam("key"),
    )
)
_LIST = Prepared(
    select(*_LISTED).where(*_live_in_ref()).order_by(*_NEWEST_FIRST).limit(_page("limit"))
)
_LIST_TAGGED = Prepared(
    select(*_LISTED)
    .where(*_live_in_ref(), ENTRIES.c.tags.contains(bindparam("tags")))
    .order_by(*_NEWEST_FIRST)
    .limit(_page("limit"))
)
# The tag query's statement per shape (memory/entries/filters.py): at most 2^9 * 3 shapes,
# in practice the handful a host's callers use.
_QUERIES: dict[Shape, Prepared] = {}


def _query_statement(shape: Shape) -> Prepared:
    found = _QUERIES.get(shape)
    if found is None:
        found = _QUERIES[shape] = Prepared(
            select(*HOST_ENTRY_COLUMNS)
            .where(*shaped_filters(shape))
            .order_by(*_NEWEST_FIRST)
            .limit(_page("limit"))
            .offset(_page("offset"))
        )
    return found


class EntryQueries:
    def __init__(self, db: Database, limits: StoreLimits, search: EntrySearch) -> None:
        self.db = db
        self.limits = limits
        self.search = search

    async def list(
        self, ref: MemoryRef, options: MemoryListOptions | None = None
    ) -> list[MemoryEntry]:
        checked = read_filter(MemoryListOptions, options or MemoryListOptions(), LIST_MATCH)
        if checked is None:
            return []
        budgeted = checked.token_budget is not None
        # A budgeted read is bounded by its budget: without a limit it may reach past the
        # default page (many small entries), never past MAX_LIST_LIMIT.
        default = MAX_LIST_LIMIT if budgeted else DEFAULT_LIST_LIMIT
        limit = min(checked.limit or default, MAX_LIST_LIMIT)
        if checked.rank == "relevance":
            found = await self._by_relevance(ref, checked, limit)
            entries = [stored_memory_entry(row) for row in found]
        else:
            values: dict[str, Any] = {**scope_params(ref), "now": self.db.now(), "limit": limit}
            if checked.tag is not None:
                values["tags"] = [checked.tag]
            async with self.db.driver() as connection:
                rows = await connection.fetch(
                    _LIST if checked.tag is None else _LIST_TAGGED, values
                )
            entries = [stored_memory_entry(row) for row in rows]
        if checked.token_budget is not None:
            entries = within_budget(entries, checked.token_budget)
        return entries

    async def _by_relevance(
        self, ref: MemoryRef, options: MemoryListOptions, limit: int
    ) -> builtins.list[Any]:
        """RFC 0113 rank "relevance": the hybrid search ranking for ``query``
        (memory/search/ranking.py), at most ``limit`` deep."""
        if not self.search.semantic:
            raise InvalidInput("rank", "'relevance' needs semantic search; this host has none")
        if not (options.query and options.query.strip()):
            raise InvalidInput("query", "is required when rank is 'relevance'")
        tags = (options.tag,) if options.tag is not None else ()
        ranked, found, _ = await self.search.ranking(
            ref, options.query, MemoryQuery(tags_all=tags), limit, columns=_LISTED
        )
        return [found[hit.id] for hit in ranked if hit.id in found]

    async def get(self, ref: MemoryRef, memory_id: str) -> MemoryEntry | None:
        """The openwop get: get_entry's answer as a MemoryEntry, touched the same way,
        reading only the columns that answer needs."""
        row = await self._read_one(ref, memory_id, _GET_LISTED, touch=True)
        return stored_memory_entry(row) if row else None

    async def get_entry(
        self, ref: MemoryRef, memory_id: str, *, touch: bool = True
    ) -> HostMemoryEntry | None:
        """Read one entry; ``touch`` records the access for LRU eviction."""
        row = await self._read_one(ref, memory_id, _GET, touch=touch)
        return stored_host_entry(row) if row else None

    async def _read_one(
        self, ref: MemoryRef, memory_id: str, statement: Prepared, *, touch: bool
    ) -> Any:
        if not possible(ENTRY_ID, memory_id):
            return None
        values = {**scope_params(ref), "id": memory_id, "now": self.db.now()}
        async with self.db.driver() as connection:
            row = await connection.fetchrow(statement, values)
            # Record the access only for capacity-limited tiers, the only ones LRU
            # eviction reads: touching semantic entries would turn every read into a
            # write of all the row's indexes. (Measured: cheaper than one CTE doing both.)
            if row is not None and touch and Tier(row["tier"]) in self.limits.capacity:
                await connection.execute(_TOUCH, values)
        return row

    async def get_by_key(self, ref: MemoryRef, namespace: str, key: str) -> HostMemoryEntry | None:
        if not (possible(NAME, namespace) and possible(NAME, key)):
            return None
        values = {**scope_params(ref), "namespace": namespace, "key": key, "now": self.db.now()}
        async with self.db.driver() as connection:
            row = await connection.fetchrow(_BY_KEY, values)
        return stored_host_entry(row) if row else None

    async def query(self, ref: MemoryRef, query: MemoryQuery) -> builtins.list[HostMemoryEntry]:
        """OpenIntent tag query (tagsAll AND, tagsAny OR), newest first."""
        checked = read_query(query)
        if checked is None:
            return []
        now = self.db.now()
        values = filter_values(ref, checked, now)
        values.update(limit=checked.limit, offset=checked.offset)
        async with self.db.driver() as connection:
            rows = await connection.fetch(_query_statement(filter_shape(checked)), values)
            marks = await read_marks(connection, ref, [row["id"] for row in rows], now)
        return [marks.mark(stored_host_entry(row)) for row in rows]

    async def count(self, ref: MemoryRef, query: MemoryQuery | None = None) -> int:
        checked = read_query(query or MemoryQuery())
        if checked is None:
            return 0
        statement = select(func.count()).where(*entry_filters(ref, checked, self.db.now()))
        async with self.db.reading() as connection:
            return int((await connection.execute(statement)).scalar_one())
