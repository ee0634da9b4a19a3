"""The predicate registry: what a predicate commitment ("when the contract is signed")
evaluates, by name.

Built-in memory predicates read the commitment's own memoryRef (CTI-1: the tenant and
the ref come from the commitment, never from the arguments):

- ``memory.tag_exists {tag}``: a live entry carries the tag;
- ``memory.key_exists {key, namespace?}``: a live entry has the key;
- ``memory.key_has_value {key, value, namespace?}``: a live entry with the key holds the
  value (trimmed, case-insensitive).

A host registers its own on the registry it hands the worker::

    predicates = default_predicates()

    @predicates.predicate("crm.deal_closed")
    async def deal_closed(context: PredicateContext) -> bool:
        return await my_crm.is_closed(context.args["deal"])

    async with serving_worker(client, settings, store, predicates=predicates):
        await stop.wait()

A predicate must be a pure read: it is evaluated when its watch starts and again on
every ``memory_changed`` signal, and only its false -> true transitions fire. The worker
sends that signal after every committed write to the commitment's memoryRef
(runtime/change_listener.py), so the built-in predicates, which read only that memory,
never poll. A host predicate that reads something else (its CRM) is re-evaluated when
the host signals the watch (docs/commitments.md, Predicate watches).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, Select, any_, exists, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.rows import ENTRIES, live
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.commitment_spec import PredicateSpec
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef

TAG_EXISTS = "memory.tag_exists"
PREDICATE_NAME = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$")


@dataclass(frozen=True)
class PredicateContext:
    connection: AsyncConnection
    memory_ref: MemoryRef
    args: Mapping[str, str]
    now: datetime


Predicate = Callable[[PredicateContext], Awaitable[bool]]


def _arg(context: PredicateContext, name: str) -> str:
    value = context.args.get(name)
    if not value:
        raise InvalidInput(f"args.{name}", "required by this predicate")
    return value


def _exists_live(
    ref: MemoryRef, now: datetime, *clauses: ColumnElement[bool]
) -> Select[tuple[bool]]:
    """Whether a live entry of ``ref`` matches ``clauses``. The rows come from a
    MATERIALIZED CTE, which PostgreSQL plans for all of its rows, not for the first one
    as it plans a bare EXISTS: that assumed a rare tag occurs in 0.5% of the rows and
    scanned the whole table for a tag no entry carries yet (500 ms at 1M entries; the
    usual state of a watch waiting for "contract-signed") instead of asking the tag
    index. The CTE is still read lazily, so a common tag stops at its first row."""
    matching = (
        select(ENTRIES.c.id)
        .where(scoped(ENTRIES, ref), live(now), *clauses)
        .cte("matching")
        .prefix_with("MATERIALIZED")
    )
    return select(exists().select_from(matching))


async def _any_live(context: PredicateContext, *clauses: ColumnElement[bool]) -> bool:
    query = _exists_live(context.memory_ref, context.now, *clauses)
    return bool((await context.connection.execute(query)).scalar())


async def tag_exists(context: PredicateContext) -> bool:
    return await _any_live(context, ENTRIES.c.tags.contains([_arg(context, "tag")]))


async def tags_present(
    connection: AsyncConnection, ref: MemoryRef, tags: Sequence[str], now: datetime
) -> set[str]:
    """Which of ``tags`` a live entry of ``ref`` carries: ``memory.tag_exists`` for many
    watches in one query (the change listener's pre-check, memory/commitments/change_feed.py)."""
    if not tags:
        return set()
    wanted = texts("wanted_tags", sorted(set(tags)))
    tag = func.unnest(ENTRIES.c.tags).label("tag")
    carried = (
        select(tag)
        .where(scoped(ENTRIES, ref), live(now), ENTRIES.c.tags.overlap(wanted))
        .subquery()
    )
    query = select(carried.c.tag).distinct().where(carried.c.tag == any_(wanted))
    return set((await connection.execute(query)).scalars())


def _key_clauses(context: PredicateContext) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = [ENTRIES.c.key == _arg(context, "key")]
    if context.args.get("namespace"):
        clauses.append(ENTRIES.c.namespace == context.args["namespace"])
    return clauses


async def key_exists(context: PredicateContext) -> bool:
    return await _any_live(context, *_key_clauses(context))


async def key_has_value(context: PredicateContext) -> bool:
    value = _arg(context, "value").strip().lower()
    return await _any_live(
        context, *_key_clauses(context), func.lower(func.btrim(ENTRIES.c.content)) == value
    )


class PredicateRegistry:
    def __init__(self, predicates: Mapping[str, Predicate] | None = None) -> None:
        self._predicates: dict[str, Predicate] = dict(predicates or {})

    def register(self, name: str, predicate: Predicate) -> None:
        if not PREDICATE_NAME.match(name):
            raise InvalidInput("predicate", "a dotted lowercase name such as crm.deal_closed")
        if name in self._predicates:
            raise InvalidInput("predicate", "already registered")
        self._predicates[name] = predicate

    def predicate(self, name: str) -> Callable[[Predicate], Predicate]:
        def decorate(function: Predicate) -> Predicate:
            self.register(name, function)
            return function

        return decorate

    def names(self) -> list[str]:
        return sorted(self._predicates)

    async def evaluate(
        self, connection: AsyncConnection, ref: MemoryRef, spec: PredicateSpec, now: datetime
    ) -> bool:
        predicate = self._predicates.get(spec.predicate)
        if predicate is None:
            # Non-retryable: the watch fails visibly instead of never firing in silence.
            raise InvalidInput("predicate", "not registered on this worker")
        return await predicate(PredicateContext(connection, ref, spec.args, now))

    def reads_memory_only(self, spec: PredicateSpec) -> bool:
        """Whether ``spec`` names a built-in, a pure read of its own memoryRef."""
        built_in = _BUILT_INS.get(spec.predicate)
        return built_in is not None and self._predicates.get(spec.predicate) is built_in


# The built-ins read nothing but the commitment's own memoryRef, so the change listener
# may evaluate them itself and skip waking a watch whose truth a write did not change
# (memory/commitments/change_feed.py). A host predicate may read anything: it is never pre-checked.
_BUILT_INS: dict[str, Predicate] = {
    TAG_EXISTS: tag_exists,
    "memory.key_exists": key_exists,
    "memory.key_has_value": key_has_value,
}


def default_predicates() -> PredicateRegistry:
    return PredicateRegistry(_BUILT_INS)
