"""The database handle every repository takes: the engine, the clock, how to open a
read or a transaction, and the key that links lifecycle events to OpenIntent intents
(memory/keyed_ids/intent_links.py; every builder of such events holds the handle).

Repositories never build their own connections from an engine: reads go through
``reading()`` (autocommit, no BEGIN/COMMIT round trips for single statements), the few
hottest ones through ``driver()`` (memory/storage/prepared.py), and writes through
``writing(within)``, which joins the caller's transaction when one is given, so several
repositories can share one transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from memory.keyed_ids.intent_links import IntentLinks
from memory.storage.prepared import DriverConnection
from schemas.base import floor_ms

AUTOCOMMIT = "AUTOCOMMIT"


def begins_a_transaction(connection: Any) -> bool:
    """Whether a (sync) connection's begin opens a transaction on the server: not on the
    autocommit connection ``reading()`` hands out, where each statement commits alone."""
    return bool(connection.get_execution_options().get("isolation_level") != AUTOCOMMIT)


def utc_now() -> datetime:
    return floor_ms(datetime.now(UTC))


class Database:
    def __init__(
        self,
        engine: AsyncEngine,
        clock: Callable[[], datetime] = utc_now,
        intent_links: IntentLinks | None = None,
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.intent_links = intent_links or IntentLinks()
        # Single-statement reads (and the get-with-touch pair, atomic enough on its own)
        # skip the BEGIN/COMMIT round trips a transaction would add.
        self._autocommit = engine.execution_options(isolation_level=AUTOCOMMIT)

    def now(self) -> datetime:
        return self.clock()

    def reading(self) -> AsyncConnection:
        """An autocommit connection, used as ``async with db.reading() as connection``
        (returned as is: the hottest path of the store, a get, pays no wrapper)."""
        return self._autocommit.connect()

    def writing_one_statement(self) -> AsyncConnection:
        """The same autocommit connection for a write that is a single statement (atomic
        on its own, and no trigger it fires needs a transaction-local setting): it
        skips the BEGIN and COMMIT round trips ``writing()`` adds."""
        return self._autocommit.connect()

    def driver(self) -> DriverConnection:
        """The hottest reads' connection: statements compiled once, run on the pooled
        asyncpg connection (memory/storage/prepared.py), autocommit as ``reading()`` is."""
        return DriverConnection(self.engine)

    @asynccontextmanager
    async def reading_together(self) -> AsyncIterator[AsyncConnection]:
        """Several reads in one transaction: one snapshot, and room for SET LOCAL
        (the autocommit connection ends a transaction after every statement)."""
        async with self.engine.begin() as connection:
            yield connection

    @asynccontextmanager
    async def writing(
        self, within: AsyncConnection | None = None
    ) -> AsyncIterator[AsyncConnection]:
        """A transaction committed on exit, or ``within`` (the caller's) left open."""
        if within is not None:
            yield within
            return
        async with self.engine.begin() as connection:
            yield connection
