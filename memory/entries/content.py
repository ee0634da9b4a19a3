"""The one writer of entry content.

Every path that sets or rewrites what an entry says goes through here, inside its own
transaction: a put, an edit, a distillation's new entry, a consolidation survivor
re-redacted with the tenant's secrets, an erasure's rewrite of a distilled entry (forget,
TTL, delete). Each call writes the content, its checksum (memory/indexes/
content_checksum.py) and every derived index of the entry in the same transaction:

- term postings (memory/indexes/terms.py): derived in SQL from the row just written,
  so BM25's statistics always describe the content as it is;
- vectors: one computed beforehand for exactly this content (``ComputedVectors``, keyed
  by checksum) is stored; every other vector of the entry is deleted, so none outlives
  the text it was computed from (memory/indexes/vectors.py). An entry left without one
  is embedded by the caller right after the commit or by the catch-up, never served
  stale: search joins vectors on the checksum;
- update links (memory/indexes/update_links.py): which entry supersedes or conflicts with
  which, read from both texts by a consolidation pass; a rewritten entry's links go (a
  new entry has none).

No other module inserts an entry or writes ``content`` or ``content_sha256``
(tests/architecture/test_one_writer.py), and every test's database is checked for an
index row out of step with its entry's content (tests/conftest.py, tests/support/scan.py).

Content arrives here already through the SR-1 chokepoint (memory/redaction/): what is
written is exactly what was redacted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, bindparam, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.indexes.content_checksum import content_checksum
from memory.indexes.terms import replace_terms, store_terms
from memory.indexes.update_links import drop_update_links
from memory.indexes.vectors import ComputedVectors, drop_stale_vectors, store_vectors
from memory.storage import tables
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries

__all__ = ["content_checksum", "insert_entries", "rewrite_contents", "rewrite_entry"]


async def insert_entries(
    connection: AsyncConnection,
    rows: Sequence[dict[str, Any]],
    now: datetime,
    *,
    vectors: ComputedVectors | None = None,
    skip_existing: bool = False,
) -> list[dict[str, Any]]:
    """Insert whole entry rows (every column but the checksum, which is set here) with
    their vectors. ``skip_existing``: an entry whose id the memoryRef holds already is
    left as it is (a distillation retried after its commit). Returns the rows written."""
    for row in rows:
        row["content_sha256"] = content_checksum(row["content"])
    if not rows:
        return []
    if skip_existing:
        statement = (
            insert(ENTRIES)
            .on_conflict_do_nothing(index_elements=[ENTRIES.c.memory_ref, ENTRIES.c.id])
            .returning(ENTRIES.c.id)
        )
        written_ids = {
            entry_id
            for row in rows
            for entry_id in (await connection.execute(statement, row)).scalars()
        }
        written = [row for row in rows if row["id"] in written_ids]
    else:
        await connection.execute(insert(ENTRIES), list(rows))
        written = list(rows)
    # A new entry has no index row yet: its postings and vectors are all new.
    await store_terms(connection, written)
    await store_vectors(connection, written, vectors, now)
    return written


async def rewrite_entry(
    connection: AsyncConnection,
    ref: MemoryRef,
    entry_id: str,
    now: datetime,
    *,
    content: str | None,
    values: Mapping[str, Any],
    where: Sequence[ColumnElement[bool]] = (),
    vectors: ComputedVectors | None = None,
) -> Row[Any] | None:
    """Update one entry of ``ref``: its content when given (with its checksum), and
    ``values``, where ``where`` also holds; returns the row as written (every column),
    or None when no row matched. Its derived indexes follow in the same transaction."""
    changed = dict(values)
    if content is not None:
        changed["content"] = content
        changed["content_sha256"] = content_checksum(content)
    row = (
        await connection.execute(
            update(ENTRIES)
            .where(scoped(ENTRIES, ref), ENTRIES.c.id == entry_id, *where)
            .values(**changed)
            .returning(*tables.entry_columns)
        )
    ).first()
    if row is not None and content is not None:
        await _bring_indexes_in_step(connection, ref, [dict(row._mapping)], vectors, now)
    return row


async def rewrite_contents(
    connection: AsyncConnection, ref: MemoryRef, contents: Mapping[str, str], now: datetime
) -> None:
    """Set the content of several entries of ``ref`` (id -> content) and nothing else:
    a consolidation pass re-redacting its survivors with the tenant's secrets."""
    if not contents:
        return
    checksums = {entry_id: content_checksum(text) for entry_id, text in contents.items()}
    await connection.execute(
        update(ENTRIES)
        .where(scoped(ENTRIES, ref), ENTRIES.c.id == bindparam("entry_id"))
        .values(content=bindparam("new_content"), content_sha256=bindparam("new_checksum")),
        [
            {"entry_id": entry_id, "new_content": text, "new_checksum": checksums[entry_id]}
            for entry_id, text in sorted(contents.items())
        ],
    )
    rows = [{"id": entry_id, "content_sha256": sha} for entry_id, sha in checksums.items()]
    await _bring_indexes_in_step(connection, ref, rows, None, now)


async def _bring_indexes_in_step(
    connection: AsyncConnection,
    ref: MemoryRef,
    rows: Sequence[Mapping[str, Any]],
    vectors: ComputedVectors | None,
    now: datetime,
) -> None:
    """Every derived index of entries whose content was just rewritten: their term
    postings are read again from the new content; each vector computed for the new
    content is stored, every vector of older content goes; their update links go."""
    ids = [str(row["id"]) for row in rows]
    await replace_terms(connection, ref, ids)
    await drop_update_links(connection, ref, ids)
    scoped_rows = [{"tenant": ref.tenant, "memory_ref": str(ref), **row} for row in rows]
    await store_vectors(connection, scoped_rows, vectors, now)
    await drop_stale_vectors(connection, ref, ids)
