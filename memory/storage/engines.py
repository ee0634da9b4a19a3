"""Where the store's database comes from, and bringing its schema up to date."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from memory.storage.embedded import asyncpg_url_for, running_server_url, start_embedded_postgres
from memory.storage.locks import MIGRATION_LOCK_ID

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parents[1] / "migrations"
CONNECT_TIMEOUT_SECONDS = 10
# A pooled connection idle for longer than this is pinged before it is handed out.
IDLE_BEFORE_PING_SECONDS = 1.0


def database_url_from_env(*, attach_to_running: bool = False) -> str:
    """DATABASE_URL when set (any PostgreSQL 14+), else the embedded server's URL.

    attach_to_running: a short-lived command uses an embedded server that is already up
    as it finds it, without a handle (memory/storage/embedded.py running_server_url);
    the long-lived processes hold one, so the server outlives none of them."""
    url = os.environ.get("DATABASE_URL")
    if url:
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            # Accept plain libpq URLs too; the store always talks asyncpg.
            url = "postgresql+asyncpg://" + url.split("://", 1)[1]
        return url
    running = running_server_url() if attach_to_running else None
    return running or asyncpg_url_for(start_embedded_postgres())


def create_engine(url: str | None = None, *, pool_size: int = 10) -> AsyncEngine:
    engine = create_async_engine(
        url or database_url_from_env(),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_recycle=1800,
        # Exceptions never quote statement parameters: they hold memory content, and
        # error messages reach logs and Temporal history.
        hide_parameters=True,
        # Fail a connect to a database that is down within seconds (asyncpg waits 60 s by
        # default): the activity's retry policy, not one hung attempt, rides out outages.
        connect_args={"timeout": CONNECT_TIMEOUT_SECONDS},
    )
    _ping_connections_that_sat_idle(engine)
    _fail_batch_writes_when_the_connection_dies(engine)
    return engine


def _ping_connections_that_sat_idle(engine: AsyncEngine) -> None:
    """A connection that died while pooled (the database restarted while the worker was
    idle) is replaced at checkout instead of failing the next activity.

    SQLAlchemy's pool_pre_ping pings on every checkout, which doubled the latency of a
    get (measured 1.23 against 0.56 ms). Only a connection that sat in the pool for a
    while can have died unnoticed, so only those are pinged; a failed ping raises
    DisconnectionError, on which the pool retries with a fresh connection."""
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "checkin")
    def _stamp(dbapi_connection: Any, record: Any) -> None:
        record.info["checked_in_at"] = time.monotonic()

    @event.listens_for(sync_engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        checked_in = record.info.get("checked_in_at")
        if checked_in is None or time.monotonic() - checked_in < IDLE_BEFORE_PING_SECONDS:
            return
        try:
            sync_engine.dialect.do_ping(dbapi_connection)
        except Exception:
            raise DisconnectionError("pooled connection died while idle") from None


def _fail_batch_writes_when_the_connection_dies(engine: AsyncEngine) -> None:
    """An executemany whose connection is lost while it waits for the socket to drain
    fails instead of hanging forever.

    asyncpg (0.32) sends a batch in chunks and waits on the protocol's
    ``writing_allowed`` event between them; losing the connection fails the statement's
    waiter but never sets that event, so the write hung (a put_many stuck after a
    PostgreSQL restart in the chaos run). Its termination listener runs when the
    connection is lost, and setting the event there lets the write reach the failed
    waiter: a DBAPIError the activity's retry rides out, on a fresh connection.
    tests/reliability/test_connection_lost_mid_write.py fails if asyncpg changes this."""

    @event.listens_for(engine.sync_engine, "connect")
    def _wake_writer_on_loss(dbapi_connection: Any, record: Any) -> None:
        driver_connection = dbapi_connection.driver_connection
        protocol = driver_connection._protocol

        def wake_writer(_: Any) -> None:
            protocol.writing_allowed.set()

        driver_connection.add_termination_listener(wake_writer)


def alembic_config() -> Config:
    # Alembic is imported when migrating, not by every command that opens the store.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Apply Alembic migrations up to ``revision``; safe to call on every start.

    An advisory lock serialises concurrent starters (two workers booting at once)."""
    async with engine.connect() as connection:
        await connection.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK_ID})")
        try:
            await connection.run_sync(_upgrade, revision)
            await connection.commit()
        except BaseException:
            await connection.rollback()
            raise
        finally:
            await connection.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_ID})")
            await connection.commit()


async def wait_for_database(engine: AsyncEngine, *, seconds: float = 300) -> None:
    """Wait until the database answers (it is starting, restarting or failing over), so
    a worker started beside it comes up instead of exiting on its first connection.

    Only the connection is retried: ``SELECT 1`` cannot fail as a statement. The error is
    logged by class name only (a driver message can quote the URL's user and host)."""
    log = logging.getLogger("agent_memory.database")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    delay = 0.25
    while True:
        try:
            async with engine.connect() as connection:
                await connection.exec_driver_sql("SELECT 1")
            return
        except Exception as error:
            if loop.time() + delay > deadline:
                raise
            log.warning("database not ready (%s); retrying in %.1f s", type(error).__name__, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
