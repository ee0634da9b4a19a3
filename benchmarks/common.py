"""Shared benchmark plumbing: where the PostgreSQL server comes from, and a throwaway
database per measured run."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import create_async_engine

from memory.database import database_url_from_env
from memory.embedded import asyncpg_url_for, start_embedded_postgres


@dataclass
class Server:
    base_url: URL
    source: str


@asynccontextmanager
async def bench_server(prefix: str) -> AsyncIterator[Server]:
    """DATABASE_URL's server if set, else an embedded PostgreSQL in a temp dir."""
    if os.environ.get("DATABASE_URL"):
        yield Server(make_url(database_url_from_env()), "DATABASE_URL")
        return
    with tempfile.TemporaryDirectory(prefix=f"{prefix}-") as tmp:
        server = start_embedded_postgres(Path(tmp) / "postgres")
        try:
            yield Server(make_url(asyncpg_url_for(server)), "embedded PostgreSQL (temp dir)")
        finally:
            server.cleanup()


@asynccontextmanager
async def fresh_database(server: Server, label: str) -> AsyncIterator[URL]:
    """CREATE a database for one run and DROP it afterwards."""
    name = f"{label}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_async_engine(server.base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield server.base_url.set(database=name)
        finally:
            async with admin.connect() as connection:
                await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.dispose()
