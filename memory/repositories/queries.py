"""Reads of live entries: the openwop list/get and the OpenIntent key and tag queries.

Every read is scoped to one memoryRef (memory/scope.py) and filtered by ``live(now)``,
so an expired or superseded entry never surfaces. A filter value no entry can hold finds
nothing instead of raising (memory/input_gate.py).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, update

from memory import tables
from memory.entry_filters import entry_filters
from memory.input_gate import (
    ENTRY_ID,
    LIST_MATCH,
    NAME,
    possible,
    read_filter,
    read_query,
)
from memory.repositories.limits import StoreLimits
from memory.repositories.search import EntrySearch
from memory.rows import live, to_host_entry
from memory.scope import scoped
from memory.tokens import count_tokens
from memory.transactions import Database
from schemas.errors import InvalidInput
from schemas.memory_entry import (
    MAX_LIST_LIMIT,
    HostMemoryEntry,
    MemoryEntry,
    MemoryListOptions,
    MemoryQuery,
)
from schemas.memory_ref import MemoryRef

E = tables.entries
DEFAULT_LIST_LIMIT = 100
# The openwop MemoryEntry's columns.
_LISTED = (E.c.id, E.c.content, E.c.tags, E.c.created_at, E.c.expires_at)


def within_budget(rows: Sequence[Any], budget: int) -> list[Any]:
    """RFC 0113: the longest prefix of ``rows`` (already ranked) whose contents count at
    most ``budget`` tokens together, leaving out whole any entry larger than the whole
    budget on its own. Tokens are counted only until the prefix ends."""
    kept: list[Any] = []
    used = 0
    for row in rows:
        tokens = count_tokens(row.content)
        if tokens > budget:
            continue  # could never fit: omitted, never truncated
        if used + tokens > budget:
            break
        kept.append(row)
        used += tokens
    return kept


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
            rows = await self._by_relevance(ref, checked, limit)
        else:
            query = (
                select(*_LISTED)
                .where(scoped(E, ref), live(self.db.now()))
                .order_by(E.c.created_at.desc(), E.c.id.desc())
                .limit(limit)
            )
            if checked.tag is not None:
                query = query.where(E.c.tags.contains([checked.tag]))
            async with self.db.reading() as connection:
                rows = list((await connection.execute(query)).all())
        if checked.token_budget is not None:
            rows = within_budget(rows, checked.token_budget)
        return [
            MemoryEntry(
                id=row.id,
                content=row.content,
                tags=tuple(row.tags),
                created_at=row.created_at,
                expires_at=row.expires_at,
            )
            for row in rows
        ]

    async def _by_relevance(
        self, ref: MemoryRef, options: MemoryListOptions, limit: int
    ) -> builtins.list[Any]:
        """RFC 0113 rank "relevance": the hybrid search ranking for ``query``
        (memory/repositories/search.py), at most ``limit`` deep."""
        if not self.search.semantic:
            raise InvalidInput("rank", "'relevance' needs semantic search; this host has none")
        if not (options.query and options.query.strip()):
            raise InvalidInput("query", "is required when rank is 'relevance'")
        tags = (options.tag,) if options.tag is not None else ()
        ranked, found = await self.search.rank(
            ref, options.query, MemoryQuery(tags_all=tags), limit, columns=_LISTED
        )
        return [found[hit.id] for hit in ranked if hit.id in found]

    async def get_entry(
        self, ref: MemoryRef, memory_id: str, *, touch: bool = True
    ) -> HostMemoryEntry | None:
        """Read one entry; ``touch`` records the access for LRU eviction."""
        if not possible(ENTRY_ID, memory_id):
            return None
        now = self.db.now()
        hit = select(*tables.entry_columns).where(scoped(E, ref), E.c.id == memory_id, live(now))
        async with self.db.reading() as connection:
            row = (await connection.execute(hit)).first()
            # Record the access only for capacity-limited tiers, the only ones LRU
            # eviction reads: touching semantic entries would turn every read into a
            # write of all the row's indexes. (Measured: cheaper than one CTE doing both.)
            if row is not None and touch and row.tier in {t.value for t in self.limits.capacity}:
                await connection.execute(
                    update(E)
                    .where(scoped(E, ref), E.c.id == memory_id)
                    .values(last_accessed_at=now)
                )
        return to_host_entry(row) if row else None

    async def get_by_key(self, ref: MemoryRef, namespace: str, key: str) -> HostMemoryEntry | None:
        if not (possible(NAME, namespace) and possible(NAME, key)):
            return None
        query = select(*tables.entry_columns).where(
            scoped(E, ref), E.c.namespace == namespace, E.c.key == key, live(self.db.now())
        )
        async with self.db.reading() as connection:
            row = (await connection.execute(query)).first()
        return to_host_entry(row) if row else None

    async def query(self, ref: MemoryRef, query: MemoryQuery) -> builtins.list[HostMemoryEntry]:
        """OpenIntent tag query (tagsAll AND, tagsAny OR), newest first."""
        checked = read_query(query)
        if checked is None:
            return []
        statement = (
            select(*tables.entry_columns)
            .where(*entry_filters(ref, checked, self.db.now()))
            .order_by(E.c.created_at.desc(), E.c.id.desc())
            .limit(checked.limit)
            .offset(checked.offset)
        )
        async with self.db.reading() as connection:
            rows = (await connection.execute(statement)).all()
        return [to_host_entry(row) for row in rows]

    async def count(self, ref: MemoryRef, query: MemoryQuery | None = None) -> int:
        checked = read_query(query or MemoryQuery())
        if checked is None:
            return 0
        statement = select(func.count()).where(*entry_filters(ref, checked, self.db.now()))
        async with self.db.reading() as connection:
            return int((await connection.execute(statement)).scalar_one())
