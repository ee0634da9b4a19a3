"""Scan every column of the schema that can hold text for a string; count every table's
rows (what replay must leave unchanged)."""

from __future__ import annotations

import hashlib

from sqlalchemy import Table, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables

SCANNED_TYPES = ("text", "jsonb", "json", "ARRAY", "bytea", "character varying")


async def tables_holding(engine: AsyncEngine, needle: str) -> list[str]:
    """Every table.column of the schema whose value contains ``needle``."""
    async with engine.connect() as connection:
        columns = (
            await connection.execute(
                text(
                    "SELECT table_name, column_name, data_type FROM information_schema.columns"
                    " WHERE table_schema = 'public' AND data_type = ANY(:types)"
                ),
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
                    text(f'SELECT count(*) FROM "{table}" WHERE {condition}'), {"needle": needle}
                )
            ).scalar_one()
            if hits:
                found.append(f"{table}.{column}")
    return found


async def row_counts(engine: AsyncEngine) -> dict[str, int]:
    counts = {}
    async with engine.connect() as connection:
        for table in tables.metadata.sorted_tables:
            counts[table.name] = (
                await connection.execute(select(func.count()).select_from(table))
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


FINGERPRINT = text(_fingerprint_query())


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
