"""The store's hot reads: Core statements compiled once, run on the pool's asyncpg
connection.

Measured on a get by primary key (2026-11-27, 2-core machine): asyncpg answers in about
0.13 ms; building the same Core statement costs about 0.1 ms more (coercions, cache key)
and running it through SQLAlchemy's async layer (greenlet hop, cursor adapter, result
rows) about 0.25 ms more. The reads every agent session starts with (get, list, the tag
query) are therefore built once per shape as Core statements with named bind parameters,
compiled for asyncpg once (``Prepared``), and run on the asyncpg connection borrowed
from the engine's own pool (``DriverConnection``): the same pool, limits and idle-ping
as every other statement, and asyncpg's statement cache prepares each statement once
per connection.

What SQLAlchemy's execute did on the way is kept:

- CTI-1: a statement is checked for its tenant scope when it is built
  (memory/storage/tenant_scope.py ``unscoped_tables``), so an unscoped one fails at
  import, not only in the test suite; the values come from the caller's ref through
  ``scope_params``.
- Errors: a driver error is raised as the same ``sqlalchemy.exc.DBAPIError`` the engine
  would raise (parameters hidden as the engine hides them, ``connection_invalidated``
  set), and a connection the error closed is invalidated so the pool replaces it.
- Observers: ``listen(engine, callback)`` sees every statement run here with its values,
  as SQLAlchemy's ``before_execute`` sees the engine's (tests/support/scope_guard.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, NoReturn, cast
from weakref import WeakKeyDictionary

from asyncpg import Record
from sqlalchemy import ColumnElement, Engine, Text, literal_column
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import greenlet_spawn

from memory.storage.tenant_scope import unscoped_tables

_DIALECT = PGDialect_asyncpg()
Listener = Callable[[ClauseElement, Mapping[str, Any]], None]
_listeners: WeakKeyDictionary[Engine, list[Listener]] = WeakKeyDictionary()


def sql_string(value: str) -> ColumnElement[str]:
    """``value`` written into a statement as a SQL string literal (quotes doubled;
    PostgreSQL's standard_conforming_strings, on by default, reads backslashes as
    written): for a value the planner must see, as a partial index's predicate. Only
    for the host's own configuration (a model id), never for input."""
    return literal_column("'" + value.replace("'", "''") + "'", Text)


class Prepared:
    """A Core statement compiled once for asyncpg; run it with ``values`` naming every
    bind parameter (``bindparam("id")`` takes ``values["id"]``)."""

    __slots__ = ("_names", "_processors", "sql", "statement")

    def __init__(self, statement: ClauseElement) -> None:
        left_open = unscoped_tables(statement)
        if left_open:
            raise TypeError(f"no tenant scope on {', '.join(sorted(left_open))} (CTI-1)")
        compiled = cast(SQLCompiler, statement.compile(dialect=_DIALECT))
        names: Sequence[str] = compiled.positiontup or ()
        processors = []
        for name in names:
            bind = compiled.binds[name]
            if bind.expanding or bind.value is not None or bind.callable is not None:
                # An IN list renders per call, a literal would be frozen at import.
                raise TypeError(f"bind parameter {name!r} must be a plain named parameter")
            processors.append(bind.type.dialect_impl(_DIALECT).bind_processor(_DIALECT))
        self.statement = statement
        self.sql: str = compiled.string
        self._names = tuple(names)
        self._processors = tuple(processors)

    def arguments(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional arguments asyncpg takes, in the compiled order."""
        return tuple(
            values[name] if process is None else process(values[name])
            for name, process in zip(self._names, self._processors, strict=True)
        )


def listen(engine: AsyncEngine, listener: Listener) -> None:
    """Call ``listener(statement, values)`` before every statement run here on ``engine``."""
    _listeners.setdefault(engine.sync_engine, []).append(listener)


class DriverConnection:
    """``async with DriverConnection(engine) as connection``: a connection checked out of
    the engine's pool for a few prepared statements, back in the pool on exit. Outside
    a transaction (asyncpg autocommits), as ``Database.reading()`` is."""

    __slots__ = ("_engine", "_pooled")

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._pooled: PoolProxiedConnection | None = None

    async def __aenter__(self) -> DriverConnection:
        # The pool's checkout (and its idle ping, memory/storage/engines.py) may await, so it
        # runs where SQLAlchemy's sync pool code can: in a greenlet.
        self._pooled = await self._engine.raw_connection()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pooled, self._pooled = self._pooled, None
        if pooled is not None:
            # Back to the pool. There is no transaction to roll back (asyncpg
            # autocommits), but the pool closes a connection it has no room for (an
            # overflow one) or one past its recycle time, and that awaits: so in a
            # greenlet, as SQLAlchemy's own AsyncConnection.close() does. A query
            # cancelled mid-flight is cleaned up by asyncpg before the connection runs
            # its next command.
            await greenlet_spawn(pooled.close)

    @asynccontextmanager
    async def snapshot(self, *settings: str) -> AsyncIterator[None]:
        """Several reads in one read-only transaction (one snapshot), with ``settings``
        (``SET LOCAL`` statements, fixed text the caller builds from its own values,
        never from input) applied for it alone: BEGIN and the settings go in one round
        trip. Rolled back on exit: it wrote nothing."""
        if self._pooled is None:
            raise RuntimeError("use the connection inside its async with block")
        driver = self._pooled.driver_connection
        assert driver is not None
        begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        await driver.execute("; ".join((begin, *settings)))
        try:
            yield
        finally:
            await self._end_snapshot(driver)

    async def _end_snapshot(self, driver: Any) -> None:
        if driver.is_closed() or not driver.is_in_transaction():
            return
        try:
            await driver.execute("ROLLBACK")
        except Exception as error:
            # A read cancelled mid-flight can leave the connection busy: it must not go
            # back to the pool inside the transaction, so the pool drops it.
            assert self._pooled is not None
            await greenlet_spawn(self._pooled.invalidate, error)

    async def fetch(self, prepared: Prepared, values: Mapping[str, Any]) -> list[Record]:
        driver, arguments = self._driver(prepared, values)
        try:
            rows: list[Record] = await driver.fetch(prepared.sql, *arguments)
        except Exception as error:
            await self._raise_as_the_engine(prepared, arguments, error)
        return rows

    async def fetchrow(self, prepared: Prepared, values: Mapping[str, Any]) -> Record | None:
        driver, arguments = self._driver(prepared, values)
        try:
            row: Record | None = await driver.fetchrow(prepared.sql, *arguments)
        except Exception as error:
            await self._raise_as_the_engine(prepared, arguments, error)
        return row

    async def execute(self, prepared: Prepared, values: Mapping[str, Any]) -> None:
        driver, arguments = self._driver(prepared, values)
        try:
            await driver.execute(prepared.sql, *arguments)
        except Exception as error:
            await self._raise_as_the_engine(prepared, arguments, error)

    def _driver(self, prepared: Prepared, values: Mapping[str, Any]) -> tuple[Any, tuple[Any, ...]]:
        if self._pooled is None:
            raise RuntimeError("use the connection inside its async with block")
        for listener in _listeners.get(self._engine.sync_engine, ()):
            listener(prepared.statement, values)
        return self._pooled.driver_connection, prepared.arguments(values)

    async def _raise_as_the_engine(
        self, prepared: Prepared, arguments: tuple[Any, ...], error: Exception
    ) -> NoReturn:
        """Raise what the engine raises for ``error``: the dialect's DBAPI error wrapped
        in a DBAPIError, with the connection invalidated when the error closed it (so a
        database restart costs one failed read, not one per pooled connection)."""
        assert self._pooled is not None
        dialect = self._engine.dialect
        adapted = self._pooled.dbapi_connection
        try:
            # The dialect's own translation of asyncpg errors into its DBAPI classes; any
            # other error (an OSError mid-read) comes back unchanged.
            adapted._handle_exception(error)  # type: ignore[union-attr]
        except dialect.loaded_dbapi.Error as translated:
            invalidated = dialect.is_disconnect(translated, adapted, None)
            if invalidated:
                await greenlet_spawn(self._pooled.invalidate, translated)
            raise DBAPIError.instance(
                prepared.sql,
                arguments,
                translated,
                dialect.loaded_dbapi.Error,
                hide_parameters=self._engine.sync_engine.hide_parameters,
                connection_invalidated=invalidated,
                dialect=dialect,
                ismulti=False,
            ) from translated
        except Exception:
            driver = self._pooled.driver_connection
            if driver is None or driver.is_closed():
                await greenlet_spawn(self._pooled.invalidate, error)
            raise
        raise error  # not reached: the translation always raises
