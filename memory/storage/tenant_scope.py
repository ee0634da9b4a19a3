"""CTI-1, the one place tenant isolation is built: every statement on a tenant-carrying
table takes its WHERE clause for the tenant from here.

A table is tenant-carrying when it has a ``tenant`` or a ``memory_ref`` column (a
memoryRef names exactly one tenant: ``mem://<tenant>/...``). ``scoped(table, ref)``
narrows a statement to one memoryRef, tenant first; ``tenant_scoped(table, tenant)`` to a
whole tenant (tenant-wide forget, settings, agents); ``ALL_TENANTS`` marks the few
statements that must span tenants by design (the TTL sweep of every ref, API-key
look-up by hash before the tenant is known), so they are declared, not accidental.

``unscoped_tables(statement)`` is the check: it lists the tenant-carrying tables a
statement reads or writes without one of these clauses (raw SQL, which carries no table
objects, by its text: it must compare ``tenant`` or ``memory_ref`` with a bound value).
The test suite runs it on every statement any engine of a test process executes
(tests/support/scope_guard.py, installed by tests/conftest.py), so a new table or query
without the scope fails CI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Table, and_, bindparam
from sqlalchemy.sql import Insert, operators, visitors
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, ColumnClause, TextClause
from sqlalchemy.sql.selectable import Alias

from memory.storage import tables
from schemas.memory_ref import MemoryRef

TENANT = "tenant"
MEMORY_REF = "memory_ref"
# The execution option a cross-tenant statement carries, with the reason as its value.
CROSS_TENANT_OPTION = "cross_tenant"


def is_tenant_carrying(table: Table) -> bool:
    return TENANT in table.c or MEMORY_REF in table.c


def tenant_carrying_tables() -> list[Table]:
    """Every table of the schema whose rows belong to one tenant."""
    return [table for table in tables.metadata.sorted_tables if is_tenant_carrying(table)]


def scoped(table: FromClause, ref: MemoryRef) -> ColumnElement[bool]:
    """The rows of ``table`` (or an alias of it) that belong to ``ref``: tenant first,
    then the exact memoryRef; tables without a tenant column match by memoryRef only."""
    clauses = []
    if TENANT in table.c:
        clauses.append(table.c[TENANT] == ref.tenant)
    if MEMORY_REF in table.c:
        clauses.append(table.c[MEMORY_REF] == str(ref))
    if not clauses:
        raise TypeError(f"{table.name} carries no tenant")  # type: ignore[attr-defined]
    return and_(*clauses)


def tenant_scoped(table: FromClause, tenant: str) -> ColumnElement[bool]:
    """Every row of one tenant, across its memoryRefs."""
    return table.c[TENANT] == tenant


def scoped_by_params(table: FromClause) -> ColumnElement[bool]:
    """scoped() with the tenant and the ref as bind parameters, for statements built once
    at import and run on every write (memory/entries/capacity.py). Bind with scope_params(ref)."""
    return and_(
        table.c[TENANT] == bindparam("scope_tenant"),
        table.c[MEMORY_REF] == bindparam("scope_ref"),
    )


def scope_params(ref: MemoryRef) -> dict[str, str]:
    return {"scope_tenant": ref.tenant, "scope_ref": str(ref)}


def all_tenants(reason: str) -> dict[str, str]:
    """Execution options for a statement that spans tenants on purpose:
    ``statement.execution_options(**all_tenants("ttl sweep"))``; the declaration is
    what the scope check accepts."""
    return {CROSS_TENANT_OPTION: reason}


# ------------------------------------------------------------------ the check


def _base_table(element: Any) -> Table | None:
    while isinstance(element, Alias):
        element = element.element
    return element if isinstance(element, Table) else None


def _column_table(column: Any) -> Table | None:
    if not isinstance(column, ColumnClause) or column.table is None:
        return None
    return _base_table(column.table)


def _bound(value: Any) -> bool:
    return isinstance(value, BindParameter)


# Raw SQL is scoped when it compares tenant or memory_ref with a bound value, or writes
# a bound tenant (INSERT ... SELECT :tenant, ...).
_TEXT_SCOPE = re.compile(r"\b(?:tenant|memory_ref)\s*=\s*:\w|\bSELECT\s+:tenant\b", re.I)


_DML = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.I)


def _unscoped_text(sql: str) -> set[str]:
    """Raw SQL reading or writing rows (schema changes are not reads of a tenant)."""
    if not _DML.match(sql):
        return set()
    named = {
        table.name
        for table in tenant_carrying_tables()
        if re.search(rf"\b{re.escape(table.name)}\b", sql)
    }
    return named if named and not _TEXT_SCOPE.search(sql) else set()


def unscoped_tables(statement: Any, params: Iterable[str] = ()) -> set[str]:
    """The tenant-carrying tables ``statement`` touches without a tenant or memoryRef
    condition against a bound value (or a join on tenant/memory_ref to a table that has
    one). Inserts are scoped by the values they write: the tenant comes from the ref."""
    if statement.get_execution_options().get(CROSS_TENANT_OPTION):
        return set()
    if isinstance(statement, TextClause):
        return _unscoped_text(statement.text)
    touched: set[Table] = set()
    scoped_tables: set[Table] = set()
    joined: list[tuple[Table, Table]] = []
    for element in visitors.iterate(statement):
        if isinstance(element, Insert):
            # The values written carry the tenant (taken from the parsed ref), the
            # statement's own or one in a CTE (an upsert claiming event numbers); what
            # an INSERT ... SELECT reads is checked like any other read.
            target = _base_table(element.table)
            if target is not None:
                scoped_tables.add(target)
        base = _base_table(element)
        if base is not None and is_tenant_carrying(base):
            touched.add(base)
        if isinstance(element, BinaryExpression) and element.operator in (
            operators.eq,
            operators.in_op,
        ):
            left, right = element.left, element.right
            for column, other in ((left, right), (right, left)):
                table = _column_table(column)
                if table is None or column.name not in (TENANT, MEMORY_REF):
                    continue
                if _bound(other) or (
                    getattr(other, "element", None) is not None
                    and _bound(getattr(other, "element", None))
                ):
                    scoped_tables.add(table)
                other_table = _column_table(other)
                if other_table is not None and getattr(other, "name", None) in (
                    TENANT,
                    MEMORY_REF,
                ):
                    joined.append((table, other_table))
    changed = True
    while changed:
        changed = False
        for a, b in joined:
            for x, y in ((a, b), (b, a)):
                if y in scoped_tables and x not in scoped_tables:
                    scoped_tables.add(x)
                    changed = True
    return {table.name for table in touched - scoped_tables}
