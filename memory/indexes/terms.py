"""Term postings, a derived index of entry content for BM25 (memory/search/lexical.py).

One row per (entry, term): the entry's full-text terms exactly as PostgreSQL holds them
in ``search_terms`` (``to_tsvector('english', content)``: stemmed, stop words dropped),
each with its frequency in the entry and the entry's length in terms. They are derived
in SQL from the row just written, so what the index says is what the entry says, by
construction; only the one writer of entry content (memory/entries/content.py) calls
this module, in the transaction that writes the content.

An entry's postings are always inserted by one statement (the triggers of migration 0024
count each entry once per statement into the memoryRef's totals, and count each term's
entries). Postings go with their entry by the foreign key (forget, TTL, erasure, delete)
and are rebuilt whenever the content changes, so neither they nor the counts outlive
the text they were read from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Integer, any_, cast, delete, func, literal_column, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef, parse_memory_ref

ENTRIES, TERMS = tables.entries, tables.terms
_COLUMNS = ["memory_ref", "term", "entry_id", "tenant", "frequency", "entry_terms"]


async def store_terms(connection: AsyncConnection, rows: Iterable[Mapping[str, Any]]) -> None:
    """Postings of entries just inserted (rows carry ``memory_ref`` and ``id``)."""
    by_ref: dict[str, list[str]] = {}
    for row in rows:
        by_ref.setdefault(str(row["memory_ref"]), []).append(str(row["id"]))
    for ref, ids in sorted(by_ref.items()):
        await _derive(connection, parse_memory_ref(ref), ids)


async def replace_terms(connection: AsyncConnection, ref: MemoryRef, ids: list[str]) -> None:
    """Postings of entries whose content was just rewritten: the old ones go, the new
    content's come."""
    if not ids:
        return
    await connection.execute(
        delete(TERMS).where(scoped(TERMS, ref), TERMS.c.entry_id == any_(texts("ids", ids)))
    )
    await _derive(connection, ref, ids)


async def _derive(connection: AsyncConnection, ref: MemoryRef, ids: list[str]) -> None:
    lexemes = (
        func.unnest(ENTRIES.c.search_terms)
        .table_valued("lexeme", "positions", "weights", name="lexemes")
        .lateral()
    )
    # A term stripped of positions (a tsvector over 16383 positions) still occurs once.
    frequency = func.coalesce(func.array_length(lexemes.c.positions, 1), 1)
    postings = select(
        ENTRIES.c.memory_ref,
        lexemes.c.lexeme,
        ENTRIES.c.id,
        ENTRIES.c.tenant,
        cast(frequency, Integer),
        cast(func.sum(frequency).over(partition_by=ENTRIES.c.id), Integer),
    ).where(scoped(ENTRIES, ref), ENTRIES.c.id == any_(texts("ids", ids)))
    postings = postings.select_from(ENTRIES.join(lexemes, literal_column("true")))
    await connection.execute(insert(TERMS).from_select(_COLUMNS, postings))
