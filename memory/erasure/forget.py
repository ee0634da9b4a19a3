"""Forget and TTL reaching every derived copy, and the lineage audit behind them.

An erasure runs in one transaction (memory/erasure/copies.py does the rewriting): the entries,
the hidden copies consolidation kept of them, the archives and distilled entries holding
their text (rewritten, or removed when nothing else remains) and snapshots holding them.
Per memoryRef it takes the erasure guard and the memoryRef order (memory/storage/locks.py), so
it never interleaves with a snapshot, distillation, consolidation or inference of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, select

from memory.entries.lineage import DISTILLED, derived_from, marked_under
from memory.erasure.copies import ErasurePass, erase_in_ref
from memory.erasure.copies import report as erasure_report
from memory.events.removal_reason import declare_removal_reason
from memory.indexes.vectors import EntryVectors
from memory.input_gate import ENTRY_ID, TEXT_ID, checked, possible
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.locks import erasure_guard, lock, memory_ref_order
from memory.storage.tenant_scope import scoped, tenant_scoped
from schemas.erasure import ErasureReport, LineageLink
from schemas.errors import InvalidInput
from schemas.memory_entry import ForgetRequest
from schemas.memory_ref import MemoryRef, parse_memory_ref

ENTRIES = tables.entries
LINEAGE = tables.lineage


class _DryRun(Exception):
    """Raised inside an erasure's transaction to roll a dry run back."""


class Erasure:
    def __init__(self, db: Database, vectors: EntryVectors | None = None) -> None:
        self.db = db
        self.vectors = vectors

    async def erase(
        self,
        ref: MemoryRef,
        request: ForgetRequest,
        *,
        dry_run: bool = False,
        secrets: MemorySecretRegistry | None = None,
    ) -> ErasureReport:
        """Forget by ids, tag or subject (RFC 0080 retention.forget), every derived copy
        included. ``dry_run`` computes the same report and rolls back."""
        request = checked(ForgetRequest, request)
        if not (request.ids or request.tag or request.subject):
            raise InvalidInput("forget", "give at least one of ids, tag or subject")
        if request.tenant_wide and (request.ids or request.tag or not request.subject):
            raise InvalidInput("tenantWide", "applies to a subject forget only")
        clauses: list[ColumnElement[bool]] = []
        if request.ids:
            clauses.append(ENTRIES.c.id.in_(list(request.ids)))
        if request.tag:
            clauses.append(ENTRIES.c.tags.contains([request.tag]))
        if request.subject:
            clauses.append(ENTRIES.c.subject == request.subject)
        scope = tenant_scoped(ENTRIES, ref.tenant) if request.tenant_wide else scoped(ENTRIES, ref)
        return await self._erase(ref, [scope, *clauses], "forget", dry_run, secrets)

    async def expire(
        self, ref: MemoryRef, *, secrets: MemorySecretRegistry | None = None
    ) -> ErasureReport:
        """TTL reaches derived data: erase the ref's expired entries like forgotten ones
        (derived copies rewritten without them). Distilled entries are not targets: they
        expire with their earliest source and are rewritten here, not dropped."""
        distilled = select(LINEAGE.c.artifact_id).where(
            scoped(LINEAGE, ref), LINEAGE.c.artifact_kind == DISTILLED
        )
        clauses = [
            scoped(ENTRIES, ref),
            ENTRIES.c.expires_at <= self.db.now(),
            ENTRIES.c.id.not_in(distilled),
        ]
        return await self._erase(ref, clauses, "ttl", False, secrets)

    async def delete(self, ref: MemoryRef, memory_id: str) -> bool:
        """Delete one entry (openwop/OpenIntent delete) as an erasure: the copies
        consolidation merged into it and every derived copy of its text and tags go too
        (memory.deleted, reason "delete"), under the same locks as a forget, so no
        inference or snapshot running beside it keeps what it said."""
        if not possible(ENTRY_ID, memory_id):
            return False
        clauses = [scoped(ENTRIES, ref), ENTRIES.c.id == memory_id]
        return (await self._erase(ref, clauses, "delete", False, None)).entries >= 1

    async def lineage(self, ref: MemoryRef, entry_id: str) -> list[LineageLink]:
        """Where an entry's text went: every derived artifact, transitively (audit)."""
        # An id no entry can have (NUL, a lone surrogate) has no lineage; it must not
        # reach the driver, whose error would quote it.
        if not possible(TEXT_ID, entry_id):
            return []
        async with self.db.reading() as connection:
            return await derived_from(connection, ref, [entry_id])

    async def _erase(
        self,
        ref: MemoryRef,
        clauses: Sequence[ColumnElement[bool]],
        reason: str,
        dry_run: bool,
        secrets: MemorySecretRegistry | None,
    ) -> ErasureReport:
        now = self.db.now()
        passes: list[ErasurePass] = []
        try:
            async with self.db.writing() as connection:
                await declare_removal_reason(connection, reason)
                refs = (
                    await connection.execute(
                        select(ENTRIES.c.memory_ref).where(*clauses).group_by(ENTRIES.c.memory_ref)
                    )
                ).scalars()
                # Each ref in sorted order, under its locks (memory/storage/locks.py), and what
                # to erase read again once they are held: an inference, consolidation,
                # distillation or snapshot of the ref ran entirely before or after.
                for target in sorted(map(parse_memory_ref, refs), key=str):
                    await lock(connection, erasure_guard(target))
                    await lock(connection, memory_ref_order(target))
                    matched = select(ENTRIES.c.id).where(*clauses, scoped(ENTRIES, target))
                    ids = list((await connection.execute(matched)).scalars())
                    if not ids:
                        continue
                    # The hidden copies consolidation kept of what these entries say.
                    ids = sorted({*ids, *await marked_under(connection, target, ids)})
                    state = ErasurePass(target, now, reason, secrets, ids, self.db.intent_links)
                    await erase_in_ref(connection, state)
                    passes.append(state)
                if dry_run:
                    raise _DryRun()
        except _DryRun:
            return erasure_report(str(ref), dry_run, passes)
        if self.vectors is not None:
            # Distilled entries rewritten without the erased text lost their vectors in
            # the erasure's transaction; they get one of the text they now hold.
            for state in passes:
                kept = sorted(set(state.rewritten) - state.erased)
                await self.vectors.catch_up_entries(state.ref, kept)
        return erasure_report(str(ref), dry_run, passes)
