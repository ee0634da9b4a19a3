"""Where the store's database comes from, and bringing its schema up to date."""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from memory.embedded import asyncpg_url_for, start_embedded_postgres

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
CONNECT_TIMEOUT_SECONDS = 10


def database_url_from_env() -> str:
    """DATABASE_URL when set (any PostgreSQL 14+), else the embedded server's URL."""
    url = os.environ.get("DATABASE_URL")
    if url:
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            # Accept plain libpq URLs too; the store always talks asyncpg.
            url = "postgresql+asyncpg://" + url.split("://", 1)[1]
        return url
    return asyncpg_url_for(start_embedded_postgres())


def create_engine(url: str | None = None, *, pool_size: int = 10) -> AsyncEngine:
    return create_async_engine(
        url or database_url_from_env(),
        pool_size=pool_size,
        max_overflow=pool_size,
        # A connection that died while pooled (the database restarted while the worker
        # was idle) is replaced at checkout instead of failing the next activity.
        pool_pre_ping=True,
        pool_recycle=1800,
        # Exceptions never quote statement parameters: they hold memory content, and
        # error messages reach logs and Temporal history.
        hide_parameters=True,
        # Fail a connect to a database that is down within seconds (asyncpg waits 60 s by
        # default): the activity's retry policy, not one hung attempt, rides out outages.
        connect_args={"timeout": CONNECT_TIMEOUT_SECONDS},
    )


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Apply Alembic migrations up to ``revision``; safe to call on every start.

    An advisory lock serialises concurrent starters (two workers booting at once)."""
    async with engine.connect() as connection:
        await connection.exec_driver_sql("SELECT pg_advisory_lock(727372)")
        try:
            await connection.run_sync(_upgrade, revision)
            await connection.commit()
        except BaseException:
            await connection.rollback()
            raise
        finally:
            await connection.exec_driver_sql("SELECT pg_advisory_unlock(727372)")
            await connection.commit()
