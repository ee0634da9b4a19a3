"""Holds every statement the product runs in tests to CTI-1
(memory/storage/tenant_scope.py).

``watch(engine)`` listens to one engine's statements, and to the prepared ones the store
runs on the pooled asyncpg connection (memory/storage/prepared.py, recorded with the
values they ran with bound in): the tenant-scope tour reads what they bound.
``watch_every_engine()`` listens to every engine of the process; tests/conftest.py
installs it for the whole session and fails each test in which the product ran a
statement touching a tenant-carrying table without a tenant or memoryRef scope (and not
declared cross-tenant with memory.storage.tenant_scope.all_tenants), naming the statement
and the tables it left open. "The product": the statement was issued from a module of
the product's packages (the first frame of ours on the stack, through SQLAlchemy's
greenlets); a test's own reads across the database (scans for canaries, row counts) are
the test's, not the product's. Prepared statements are checked when they are built
(memory/storage/prepared.py refuses an unscoped one at import).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import greenlet
from sqlalchemy import Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ClauseElement, visitors
from sqlalchemy.sql.elements import BindParameter

from memory.storage import prepared
from memory.storage.tenant_scope import unscoped_tables
from tests.architecture.test_structure import PRODUCT_MODULES, PRODUCT_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
_OURS = str(ROOT) + os.sep
_LIBRARIES = str(ROOT / ".venv") + os.sep
# Schema migrations run over every tenant's rows by nature: not the product's queries.
_MIGRATIONS = str(ROOT / "memory" / "migrations") + os.sep
_PRODUCT = tuple(
    str(ROOT / name) + (os.sep if not name.endswith(".py") else "")
    for name in (*PRODUCT_PACKAGES, *PRODUCT_MODULES)
)


def issued_by_the_product() -> bool:
    """Whether the statement being executed was issued by product code: the innermost
    frame of this repository (libraries aside) on the stack, followed from SQLAlchemy's
    greenlet into the coroutine that awaited it, is in a product package."""
    frame: FrameType | None = sys._getframe(1)
    runner: greenlet.greenlet | None = greenlet.getcurrent()
    while runner is not None:
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(_OURS) and not name.startswith(_LIBRARIES) and name != __file__:
                return name.startswith(_PRODUCT) and not name.startswith(_MIGRATIONS)
            frame = frame.f_back
        runner = runner.parent
        frame = runner.gr_frame if runner is not None else None
    return True  # nothing of ours on the stack: check it


@dataclass
class ScopeWatch:
    statements: list[Any] = field(default_factory=list)
    violations: list[tuple[str, set[str]]] = field(default_factory=list)
    # A session-wide watch keeps only the violations (not every statement of the run),
    # of the statements the product issued.
    keep_statements: bool = True
    product_only: bool = False

    def on_execute(self, conn, clauseelement, multiparams, params, execution_options) -> None:
        if not isinstance(clauseelement, ClauseElement) or not hasattr(
            clauseelement, "get_execution_options"
        ):
            return  # DDL and driver SQL
        if execution_options.get("cross_tenant"):
            return
        if self.product_only and not issued_by_the_product():
            return
        if self.keep_statements:
            self.statements.append((clauseelement, multiparams, params))
        left_open = unscoped_tables(clauseelement)
        if left_open:
            self.violations.append((str(clauseelement).split("\n")[0][:120], left_open))

    def on_prepared(self, statement: ClauseElement, values: Mapping[str, Any]) -> None:
        # What statement.params() does, which UPDATE does not offer: the values bound in.
        def bind(parameter: BindParameter[Any]) -> None:
            if parameter.key in values:
                parameter.value = values[parameter.key]

        bound = visitors.cloned_traverse(statement, {"maintain_key": True}, {"bindparam": bind})
        self.on_execute(None, bound, (), {}, {})


def watch_every_engine() -> tuple[ScopeWatch, Callable[[], None]]:
    """Check every statement of every engine of this process from now on; returns the
    watch and the call that stops it."""
    scope_watch = ScopeWatch(keep_statements=False, product_only=True)
    event.listen(Engine, "before_execute", scope_watch.on_execute)

    def stop() -> None:
        event.remove(Engine, "before_execute", scope_watch.on_execute)

    return scope_watch, stop


def watch(engine: AsyncEngine) -> ScopeWatch:
    scope_watch = ScopeWatch()
    event.listen(engine.sync_engine, "before_execute", scope_watch.on_execute)
    prepared.listen(engine, scope_watch.on_prepared)
    return scope_watch
