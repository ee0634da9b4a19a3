"""Holds every statement the product runs in tests to CTI-1 (memory/storage/tenant_scope.py).

``watch(engine)`` listens to the engine's statements, and to the prepared ones the store
runs on the pooled asyncpg connection (memory/storage/prepared.py, recorded with the values they
ran with bound in); each one that touches a tenant-carrying table without a tenant or
memoryRef scope (and is not declared cross-tenant with memory.storage.tenant_scope.all_tenants) is
recorded, with the tables it left open. The suite's engine fixture fails a test whose
statements were not all scoped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ClauseElement, visitors
from sqlalchemy.sql.elements import BindParameter

from memory.storage import prepared
from memory.storage.tenant_scope import unscoped_tables


@dataclass
class ScopeWatch:
    statements: list[Any] = field(default_factory=list)
    violations: list[tuple[str, set[str]]] = field(default_factory=list)

    def on_execute(self, conn, clauseelement, multiparams, params, execution_options) -> None:
        if not isinstance(clauseelement, ClauseElement) or not hasattr(
            clauseelement, "get_execution_options"
        ):
            return  # DDL, text() and driver SQL: not built from the table metadata
        if execution_options.get("cross_tenant"):
            return
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


def watch(engine: AsyncEngine) -> ScopeWatch:
    scope_watch = ScopeWatch()
    event.listen(engine.sync_engine, "before_execute", scope_watch.on_execute)
    prepared.listen(engine, scope_watch.on_prepared)
    return scope_watch
