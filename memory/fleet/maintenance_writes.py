"""Maintenance writes: the transactions a dream makes are not new work for the next one.

The change-feed triggers count every visible change of a memoryRef twice: ``change_seq``
(what predicate watches wait on: every change) and ``work_seq`` (what a fleet dream
looks for: changes a dream has not made itself; migration 0020). A transaction declares
itself maintenance with the transaction-local setting ``agent_memory.maintenance``, and
the triggers leave ``work_seq`` alone for it.

The declaration is made in one place: a ``begin`` listener on the engine issues it at the
start of every transaction begun while ``maintenance_writes()`` is active in the calling
task, so no repository (distillation, consolidation, inference, arming, retention) has
to remember it, and a write outside the block always counts as work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage.database import begins_a_transaction

MAINTENANCE_SETTING = "agent_memory.maintenance"
_DECLARE = f"SELECT set_config('{MAINTENANCE_SETTING}', 'on', true)"

_active: ContextVar[bool] = ContextVar("maintenance_writes", default=False)


@contextlib.contextmanager
def maintenance_writes() -> Iterator[None]:
    """Transactions begun inside the block (in this task and the tasks it starts) are
    maintenance: the dream's own writes, not new work."""
    token = _active.set(True)
    try:
        yield
    finally:
        _active.reset(token)


def _declare_if_maintenance(connection: Any) -> None:
    # An autocommit connection (Database.reading()) begins no transaction on the server,
    # so the transaction-local setting would last one statement: its reads write nothing.
    if _active.get() and begins_a_transaction(connection):
        connection.exec_driver_sql(_DECLARE)


def declare_maintenance_on(engine: AsyncEngine) -> None:
    """Install the listener once per engine (every store over the engine shares it)."""
    sync_engine = engine.sync_engine
    if not event.contains(sync_engine, "begin", _declare_if_maintenance):
        event.listen(sync_engine, "begin", _declare_if_maintenance)
