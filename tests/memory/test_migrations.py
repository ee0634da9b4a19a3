"""The schema comes from Alembic migrations, and memory/storage/tables.py agrees with them."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage.engines import alembic_config, migrate
from memory.storage.tables import metadata


def _diff(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    diffs = compare_metadata(context, metadata)
    # Indexes, checks and triggers live only in the migrations on purpose; compare
    # tables and columns (names, types, nullability).
    return [
        d for d in diffs if not (isinstance(d, tuple) and d[0] in ("add_index", "remove_index"))
    ]


async def test_tables_module_matches_the_migrated_schema(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        assert await connection.run_sync(_diff) == []


async def test_database_is_at_head_and_migrate_is_idempotent(engine: AsyncEngine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    await migrate(engine)
    await migrate(engine)
    async with engine.connect() as connection:
        version = (
            await connection.execute(text("SELECT version_num FROM alembic_version"))
        ).scalar()
    assert version == head
