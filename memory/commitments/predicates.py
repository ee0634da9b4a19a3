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

    build_worker(client, settings, store, predicates=predicates)

A predicate must be a pure read: it is evaluated on a cadence and again on every
``memory_changed`` signal, and only its false -> true transitions fire.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, exists, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.rows import E, live
from memory.scope import scoped
from schemas.commitment_spec import PredicateSpec
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef

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


async def _any_live(context: PredicateContext, *clauses: ColumnElement[bool]) -> bool:
    query = select(exists().where(scoped(E, context.memory_ref), live(context.now), *clauses))
    return bool((await context.connection.execute(query)).scalar())


async def tag_exists(context: PredicateContext) -> bool:
    return await _any_live(context, E.c.tags.contains([_arg(context, "tag")]))


def _key_clauses(context: PredicateContext) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = [E.c.key == _arg(context, "key")]
    if context.args.get("namespace"):
        clauses.append(E.c.namespace == context.args["namespace"])
    return clauses


async def key_exists(context: PredicateContext) -> bool:
    return await _any_live(context, *_key_clauses(context))


async def key_has_value(context: PredicateContext) -> bool:
    value = _arg(context, "value").strip().lower()
    return await _any_live(
        context, *_key_clauses(context), func.lower(func.btrim(E.c.content)) == value
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


def default_predicates() -> PredicateRegistry:
    return PredicateRegistry(
        {
            "memory.tag_exists": tag_exists,
            "memory.key_exists": key_exists,
            "memory.key_has_value": key_has_value,
        }
    )
