"""Scan every column of the schema that can hold text for a string; count every table's
rows (what replay must leave unchanged)."""

from __future__ import annotations

import hashlib

from sqlalchemy import Table, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from memory.indexes.vectors import EntryVectors
from memory.storage import tables
from memory.storage.tenant_scope import all_tenants

# These scans read every tenant's rows on purpose (CTI-1's declaration).
EVERY_TENANT = all_tenants("a test's scan of the whole database")

SCANNED_TYPES = ("text", "jsonb", "json", "ARRAY", "bytea", "character varying")


async def tables_holding(engine: AsyncEngine, needle: str) -> list[str]:
    """Every table.column of the schema whose value contains ``needle``,
    ``memory_embeddings.embedding`` when a stored vector was computed from a text that
    holds it (a vector is a copy of its text: ``vectors_derived_from``), and
    ``memory_terms.term`` when an entry's postings hold all of its words."""
    async with engine.connect() as connection:
        columns = (
            await connection.execute(
                text(
                    "SELECT table_name, column_name, data_type FROM information_schema.columns"
                    " WHERE table_schema = 'public' AND data_type = ANY(:types)"
                ).execution_options(**EVERY_TENANT),
                {"types": list(SCANNED_TYPES)},
            )
        ).all()
        found = []
        for table, column, data_type in columns:
            if data_type == "bytea":
                condition = f"position(convert_to(:needle, 'UTF8') in \"{column}\") > 0"
            else:
                condition = f'strpos("{column}"::text, :needle) > 0'
            hits = (
                await connection.execute(
                    text(f'SELECT count(*) FROM "{table}" WHERE {condition}').execution_options(
                        **EVERY_TENANT
                    ),
                    {"needle": needle},
                )
            ).scalar_one()
            if hits:
                found.append(f"{table}.{column}")
    if await vectors_derived_from(engine, needle):
        found.append("memory_embeddings.embedding")
    if await postings_holding(engine, needle):
        found.append("memory_terms.term")
    return found


async def postings_holding(engine: AsyncEngine, needle: str) -> list[str]:
    """Entries whose term postings hold every term of ``needle`` as PostgreSQL reads it
    (a text's postings are a copy of its words, stemmed): empty when forget reached them."""
    statement = text(
        "SELECT entry_id FROM memory_terms"
        " WHERE term = ANY(tsvector_to_array(to_tsvector('english'::regconfig, :needle)))"
        " GROUP BY memory_ref, entry_id"
        " HAVING count(*) = array_length("
        "   tsvector_to_array(to_tsvector('english'::regconfig, :needle)), 1)"
    ).execution_options(**EVERY_TENANT)
    async with engine.connect() as connection:
        return list((await connection.execute(statement, {"needle": needle})).scalars())


async def row_counts(engine: AsyncEngine) -> dict[str, int]:
    counts = {}
    async with engine.connect() as connection:
        for table in tables.metadata.sorted_tables:
            counts[table.name] = (
                await connection.execute(
                    select(func.count()).select_from(table).execution_options(**EVERY_TENANT)
                )
            ).scalar_one()
    return counts


def _row_text(table: Table) -> str:
    """A row's columns as text, without last_accessed_at: a successful read of a capacity
    tier moves it (LRU bookkeeping), which is not a change a refused call made."""
    return "ROW(" + ", ".join(c.name for c in table.c if c.name != "last_accessed_at") + ")::text"


def _fingerprint_query() -> str:
    """One statement: every table's row count, and a checksum of the rows of the tables
    writes reach (entries, events, manifests); api_keys' last-use time aside."""
    parts = [f"(SELECT count(*) FROM {t.name})::text" for t in tables.metadata.sorted_tables]
    for table in (tables.entries, tables.events, tables.agent_manifests):
        row = _row_text(table)
        parts.append(
            f"(SELECT md5(coalesce(string_agg({row}, ',' ORDER BY {row}), '')) FROM {table.name})"
        )
    return "SELECT md5(concat_ws('|', " + ", ".join(parts) + "))"


FINGERPRINT = text(_fingerprint_query()).execution_options(**EVERY_TENANT)


async def fingerprint(engine: AsyncEngine) -> str:
    """What a refused request must leave unchanged, in one statement."""
    async with engine.connect() as connection:
        return str((await connection.execute(FINGERPRINT)).scalar_one())


async def tenant_checksum(engine: AsyncEngine, tenant: str) -> str:
    """A checksum of every row of ``tenant`` in every table that has a tenant column
    (what a cross-tenant sweep must leave unchanged); last_used_at moves on reads."""
    digest = hashlib.sha256()
    async with engine.connect() as connection:
        for table in tables.metadata.sorted_tables:
            if "tenant" not in table.c:
                continue
            columns = [c for c in table.c if c.name != "last_used_at"]
            rows = (
                await connection.execute(
                    select(*columns).where(table.c.tenant == tenant).order_by(*columns[:2])
                )
            ).all()
            digest.update(f"{table.name}:{rows!r}".encode())
    return digest.hexdigest()


# Every derived index row out of step with its entry's content (a copy of text the entry
# no longer says, or a statistic of it): a vector whose checksum is not the entry's, a
# term posting that is not (or a term the entry holds that has no posting), a term count
# or memoryRef total that is not the count of the postings. The one writer of content
# (memory/entries/content.py) and migration 0024's triggers leave none: tests/conftest.py
# checks every test's database for them, the race harness each trial's memoryRef.
_OUT_OF_STEP = """
SELECT v.memory_ref, v.entry_id, v.model FROM memory_embeddings v
JOIN memory_entries e ON e.memory_ref = v.memory_ref AND e.id = v.entry_id
WHERE v.content_sha256 <> e.content_sha256 {and_entry_ref}
UNION ALL
SELECT memory_ref, entry_id, 'term postings' FROM (
  (SELECT e.memory_ref, e.id AS entry_id, t.lexeme,
          coalesce(array_length(t.positions, 1), 1) AS frequency
   FROM memory_entries e CROSS JOIN LATERAL unnest(e.search_terms) AS t {where_entry_ref}
   EXCEPT SELECT memory_ref, entry_id, term, frequency FROM memory_terms {where_ref})
  UNION
  (SELECT memory_ref, entry_id, term, frequency FROM memory_terms {where_ref}
   EXCEPT SELECT e.memory_ref, e.id, t.lexeme, coalesce(array_length(t.positions, 1), 1)
   FROM memory_entries e CROSS JOIN LATERAL unnest(e.search_terms) AS t {where_entry_ref})
) AS differing GROUP BY memory_ref, entry_id
UNION ALL
SELECT memory_ref, '', 'term counts' FROM (
  (SELECT memory_ref, term, count(*) FROM memory_terms {where_ref} GROUP BY memory_ref, term
   EXCEPT SELECT memory_ref, term, entries FROM memory_term_counts {where_ref})
  UNION
  (SELECT memory_ref, term, entries FROM memory_term_counts {where_ref}
   EXCEPT SELECT memory_ref, term, count(*) FROM memory_terms {where_ref}
   GROUP BY memory_ref, term)
) AS differing GROUP BY memory_ref
UNION ALL
SELECT memory_ref, '', 'term totals' FROM (
  (SELECT memory_ref, count(DISTINCT entry_id), sum(frequency) FROM memory_terms {where_ref}
   GROUP BY memory_ref
   EXCEPT SELECT memory_ref, entries, terms FROM memory_ref_term_totals {where_ref})
  UNION
  (SELECT memory_ref, entries, terms FROM memory_ref_term_totals {where_ref}
   EXCEPT SELECT memory_ref, count(DISTINCT entry_id), sum(frequency) FROM memory_terms
   {where_ref} GROUP BY memory_ref)
) AS differing GROUP BY memory_ref
ORDER BY 1, 2, 3"""
_EVERY_REF = text(
    _OUT_OF_STEP.format(and_entry_ref="", where_entry_ref="", where_ref="")
).execution_options(**EVERY_TENANT)
_ONE_REF = text(
    _OUT_OF_STEP.format(
        and_entry_ref="AND e.memory_ref = :ref",
        where_entry_ref="WHERE e.memory_ref = :ref",
        where_ref="WHERE memory_ref = :ref",
    )
).execution_options(**EVERY_TENANT)


async def index_rows_out_of_step(
    connection: AsyncConnection, ref: str | None = None
) -> list[tuple[str, str, str]]:
    """(memoryRef, entry id or '', model or index) of every index row out of step with
    its entry's content (see _OUT_OF_STEP), in ``ref`` or in every memoryRef."""
    if ref is None:
        rows = await connection.execute(_EVERY_REF)
    else:
        rows = await connection.execute(_ONE_REF, {"ref": ref})
    return [(row[0], row[1], row[2]) for row in rows.all()]


async def stale_index_rows(engine: AsyncEngine) -> list[tuple[str, str, str]]:
    """index_rows_out_of_step over every memoryRef of the database."""
    async with engine.connect() as connection:
        return await index_rows_out_of_step(connection)


async def vectors_derived_from(engine: AsyncEngine, forgotten: str, k: int = 50) -> list[str]:
    """The nearest neighbours of ``forgotten``'s vector (the offline model's, as stored)
    that were computed from a text holding it: a vector stale against its entry, or the
    vector of an entry whose content still says it. Empty when forget reached vectors."""
    from memory.embeddings.choice import static_embedder
    from memory.indexes.vectors import vector_text

    embedder = static_embedder()
    (query,) = await embedder.embed([forgotten])
    nearest = text(
        "SELECT v.entry_id, v.content_sha256 = e.content_sha256 AS current, e.content "
        "FROM memory_embeddings v JOIN memory_entries e "
        "ON e.memory_ref = v.memory_ref AND e.id = v.entry_id "
        "WHERE v.model = :model "
        "ORDER BY v.embedding <=> CAST(:query AS vector) LIMIT :k"
    ).execution_options(**EVERY_TENANT)
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                nearest, {"model": embedder.model.id, "query": vector_text(query), "k": k}
            )
        ).all()
    return [row.entry_id for row in rows if not row.current or forgotten in row.content]


async def re_embed(vectors: EntryVectors) -> None:
    """What ReembedWorkflow does, in process: every live entry of every tenant without a
    current vector gets one, page by page."""
    after = None
    while True:
        page = await vectors.catch_up(after, batch_size=500)
        if page.after is None:
            return
        after = page.after


async def index_seeded_entries(connection: AsyncConnection, ref: str) -> None:
    """The derived indexes of entries a test inserted by raw SQL (20,000 rows for a
    query plan, in one statement), made by the one writer's own index code, so the
    database stays as the product would have left it."""
    from memory.indexes.terms import store_terms

    ids = (
        await connection.execute(
            select(tables.entries.c.id).where(tables.entries.c.memory_ref == ref)
        )
    ).scalars()
    await store_terms(connection, [{"memory_ref": ref, "id": entry_id} for entry_id in ids])
