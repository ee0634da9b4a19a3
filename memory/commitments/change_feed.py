"""The store side of change notifications for predicate watches (migration 0013).

Every transaction that changes what a predicate can read of a memoryRef bumps that
ref's ``memory_ref_changes.change_seq`` and, at commit, NOTIFYs ``agent_memory_changed``
with the memoryRef: statement-level triggers on the entries table, so no write path
(put, update, delete, forget, TTL expiry, consolidation, raw SQL) can forget it. A
predicate evaluation records the ``change_seq`` it read *before* evaluating in
``commitments.seen_change_seq``; a watch whose ``seen_change_seq`` is behind its ref's
``change_seq`` has not seen a change yet. The listener (runtime/change_listener.py) uses
the look-ups here: the watches to wake for a notified memoryRef, and the lagging ones
its safety sweep wakes when a notification was lost.

Ids only: a notification carries the memoryRef, a look-up returns commitment ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError
from sqlalchemy import ColumnElement, and_, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from memory.commitments.predicates import TAG_EXISTS, PredicateRegistry, tags_present
from memory.storage import tables
from memory.storage.database import utc_now
from memory.storage.tenant_scope import all_tenants, scoped
from schemas.commitment_spec import PredicateSpec
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef, try_parse_memory_ref

CHANNEL: Final = "agent_memory_changed"
# A deferred commitment ended before its horizon started it (migration 0027): payload the
# memoryRef, whose horizon workflows the listener then asks to look again.
DEFERRED_ENDED_CHANNEL: Final = "agent_memory_deferred_ended"
# Session-level advisory lock held by the one worker whose listener acts on the
# notifications (every LISTENing session receives each one; one acting keeps a write
# from signalling each watch once per worker). Beside memory.storage.locks.MIGRATION_LOCK_ID.
LISTENER_LOCK_ID: Final = 727373

COMMITMENTS = tables.commitments
REF_CHANGES = tables.ref_changes


@dataclass(frozen=True)
class Watch:
    commitment_id: str
    memory_ref: str


async def change_seq(connection: AsyncConnection, ref: MemoryRef) -> int:
    """The ref's change counter as this statement sees it (0 before its first write)."""
    query = select(REF_CHANGES.c.change_seq).where(scoped(REF_CHANGES, ref))
    return int((await connection.execute(query)).scalar() or 0)


def _predicate_spec(stored: Any) -> PredicateSpec | None:
    try:
        return PredicateSpec.model_validate(stored)
    except ValidationError:
        return None


def _waiting() -> list[ColumnElement[bool]]:
    # A watch waits while its commitment is armed and its workflow started, and also
    # after the commitment ended under it (seen_change_seq still set): woken, it finds
    # the commitment ended and finishes.
    return [
        COMMITMENTS.c.condition == "predicate",
        COMMITMENTS.c.armed_at.is_not(None),
        or_(COMMITMENTS.c.state == "armed", COMMITMENTS.c.seen_change_seq.is_not(None)),
    ]


class ChangeFeed:
    """Look-ups for the listener, over the store's engine. With ``predicates`` it
    pre-checks the built-in predicates itself (see ``watches_of``)."""

    def __init__(self, engine: AsyncEngine, predicates: PredicateRegistry | None = None) -> None:
        self.engine = engine
        self.predicates = predicates
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        # Watches a pre-check found unaffected by a change (nothing sent to them).
        self.unaffected = 0

    async def watches_of(self, memory_ref: str) -> list[Watch]:
        """The watches to wake for a notification naming ``memory_ref`` ([] for a
        payload that is no memoryRef: CTI-1, nothing echoed).

        A ref with 150 watches would otherwise wake all 150 (150 evaluations, about 300
        workflow tasks) on every write. So a watch whose predicate is a built-in, pure
        read of this memory is evaluated here first: when its truth is still the one
        its last evaluation recorded, the change did not concern it, and it is marked
        as having seen the change instead of being woken. The mark is conditional on
        the row being as read (an evaluation that committed meanwhile wins: that watch
        is woken), so a transition is never skipped by a race, only a blip shorter than
        the notification's way here, which no waking scheme can see either."""
        ref = try_parse_memory_ref(memory_ref)
        if ref is None:
            return []
        async with self._autocommit.connect() as connection:
            # The counter first: the rows and predicates read after it see at least it.
            seen = await change_seq(connection, ref)
            query = select(
                COMMITMENTS.c.commitment_id,
                COMMITMENTS.c.state,
                COMMITMENTS.c.spec,
                COMMITMENTS.c.predicate_holds,
                COMMITMENTS.c.seen_change_seq,
            ).where(scoped(COMMITMENTS, ref), *_waiting())
            rows = (await connection.execute(query)).all()
            unaffected = await self._unaffected(connection, ref, rows, seen)
        wake = [Watch(row.commitment_id, str(ref)) for row in rows if row not in unaffected]
        if unaffected:
            marked = await self._mark_seen(ref, unaffected, seen)
            self.unaffected += len(marked)
            wake += [Watch(r.commitment_id, str(ref)) for r in unaffected if r not in marked]
        return wake

    async def _unaffected(
        self, connection: AsyncConnection, ref: MemoryRef, rows: Sequence[Any], seen: int
    ) -> list[Any]:
        if self.predicates is None:
            return []
        checked: list[tuple[Any, PredicateSpec]] = []
        for row in rows:
            if row.state != "armed" or row.predicate_holds is None:
                continue  # ended, or never evaluated: the watch must look itself
            if row.seen_change_seq is None or row.seen_change_seq >= seen:
                continue
            spec = _predicate_spec(row.spec)
            if spec is not None and self.predicates.reads_memory_only(spec):
                checked.append((row, spec))
        now = utc_now()
        # Most inferred predicates are memory.tag_exists: one query answers them all.
        tags = [spec.args.get("tag", "") for _, spec in checked if spec.predicate == TAG_EXISTS]
        present = await tags_present(connection, ref, [t for t in tags if t], now)
        found = []
        for row, spec in checked:
            if spec.predicate == TAG_EXISTS and spec.args.get("tag"):
                holds = spec.args["tag"] in present
            else:
                try:
                    holds = await self.predicates.evaluate(connection, ref, spec, now)
                except InvalidInput:
                    continue  # the watch's own evaluation reports it, visibly
            if holds == row.predicate_holds:
                found.append(row)
        return found

    async def _mark_seen(self, ref: MemoryRef, rows: Sequence[Any], seen: int) -> list[Any]:
        """Mark ``rows`` as having seen ``seen`` where each is still as read; returns
        the rows marked."""
        as_read = [(r.commitment_id, r.seen_change_seq, r.predicate_holds) for r in rows]
        async with self.engine.begin() as connection:
            marked = set(
                (
                    await connection.execute(
                        update(COMMITMENTS)
                        .where(
                            scoped(COMMITMENTS, ref),
                            COMMITMENTS.c.state == "armed",
                            tuple_(
                                COMMITMENTS.c.commitment_id,
                                COMMITMENTS.c.seen_change_seq,
                                COMMITMENTS.c.predicate_holds,
                            ).in_(as_read),
                        )
                        .values(seen_change_seq=seen)
                        .returning(COMMITMENTS.c.commitment_id)
                    )
                ).scalars()
            )
        return [row for row in rows if row.commitment_id in marked]

    async def lagging(self, *, after: str = "", limit: int = 1000) -> list[Watch]:
        """Waiting watches that missed a change (their ref's change_seq is past the one
        their last evaluation read) or whose commitment ended under them, in commitment
        id order after ``after``: the safety sweep's page."""
        query = (
            select(COMMITMENTS.c.commitment_id, COMMITMENTS.c.memory_ref)
            .select_from(
                COMMITMENTS.outerjoin(
                    REF_CHANGES,
                    and_(
                        REF_CHANGES.c.memory_ref == COMMITMENTS.c.memory_ref,
                        REF_CHANGES.c.tenant == COMMITMENTS.c.tenant,
                    ),
                )
            )
            .where(
                COMMITMENTS.c.condition == "predicate",
                COMMITMENTS.c.seen_change_seq.is_not(None),
                or_(
                    COMMITMENTS.c.state != "armed",
                    COMMITMENTS.c.seen_change_seq < REF_CHANGES.c.change_seq,
                ),
                COMMITMENTS.c.commitment_id > after,
            )
            .order_by(COMMITMENTS.c.commitment_id)
            .limit(limit)
            .execution_options(**all_tenants("safety sweep of every predicate watch"))
        )
        async with self._autocommit.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [Watch(row.commitment_id, row.memory_ref) for row in rows]

    async def release(self, watches: Sequence[Watch]) -> None:
        """Forget that these watches wait (their workflow is gone), so the sweep stops
        waking them. Arming or an evaluation sets the marker again."""
        async with self.engine.begin() as connection:
            for watch in watches:
                ref = try_parse_memory_ref(watch.memory_ref)
                if ref is None:
                    continue
                await connection.execute(
                    update(COMMITMENTS)
                    .where(
                        scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == watch.commitment_id
                    )
                    .values(seen_change_seq=None)
                )
