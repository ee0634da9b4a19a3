"""One distillation, end to end inside the store.

1. Select: read the ranked queue page by page (memory/distillation/queue.py), re-redact
   each source (SR-1 carry-forward) and let the distiller pack them under the budget
   until it wants no more. Nothing is copied: the run reads at most what its budget can
   hold, and no unredacted copy of a source outlives the run.
2. Commit, in ONE transaction: claim the sources (mark them consumed, only if they are
   still unconsumed at the versions read), then write the archive, the distilled entry,
   MEMORY-INDEX.json and the events.

Exactly-once consumption is keyed on the sources, not on the run: the claim succeeds for
one distillation only, whatever started it (schedule, trigger, direct start, reset,
duplicate). A run that finds its sources claimed by another commits nothing and reports
``already-consumed``; one whose sources were edited or removed meanwhile selects again.
A retried activity of a run that already committed finds its result by run key.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ARRAY, Integer, Subquery, Text, func, insert, literal, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.cpu_work import on_loop
from memory.distillation.archive import Archive, build_archive
from memory.distillation.memory_index import refresh_index
from memory.distillation.packing import (
    DistillationOutcome,
    Distiller,
    ExtractiveDistiller,
    SourceText,
)
from memory.distillation.queue import candidates_page, to_source
from memory.entries.content import insert_entries
from memory.entries.lineage import earliest_expiry, record_lineage
from memory.entries.rows import live
from memory.events.event_log import PendingEvent, append_events
from memory.indexes.vectors import ComputedVectors, EntryVectors
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.locks import lock, memory_ref_order
from memory.storage.tenant_scope import scoped
from memory.tokens import count_tokens
from schemas.capabilities import ARCHIVE_RETENTION
from schemas.errors import ErrorCode, MemoryError_, TokenBudgetExceeded
from schemas.events import (
    Distillation,
    EventType,
    MemoryCompacted,
    MemoryLifecycle,
    MemoryWritten,
)
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef
from schemas.workflow_io import DistillationResult, DistillMemoryRequest, IndexUpdate

ARCHIVES = tables.archives
DISTILLATION_RUNS = tables.distillation_runs
ENTRIES = tables.entries
DISTILLED_TAG = "distilled"
SOURCE_ID_LIMIT = 100  # memory.compacted lists sourceIds only up to this many
PAGE = 500
# Sources edited or removed between selection and commit: select again this many times.
MAX_SELECTIONS = 3

Progress = Callable[[dict[str, object]], None]


class SourcesKeptChanging(MemoryError_):
    """Every selection lost some source to a concurrent edit; the activity retries."""

    code = ErrorCode.INTERNAL

    def __init__(self) -> None:
        super().__init__("sources changed during every selection attempt; retrying")


@dataclass(frozen=True)
class Selection:
    """What one run read (ids, versions and hashes, in rank order) and made of it."""

    read: tuple[SourceText, ...]
    outcome: DistillationOutcome

    @property
    def checksum(self) -> str:
        lines = "\n".join(f"{s.entry_id}:{s.version}:{s.content_sha256}" for s in self.read)
        return hashlib.sha256(lines.encode("utf-8")).hexdigest()


class _ClaimLost(Exception):
    """Raised inside the commit transaction to roll it back."""

    def __init__(self, taken_by_others: int) -> None:
        super().__init__(taken_by_others)
        self.taken_by_others = taken_by_others


async def select_sources(
    db: Database,
    request: DistillMemoryRequest,
    *,
    secrets: MemorySecretRegistry | None,
    distiller: Distiller,
    progress: Progress,
) -> Selection:
    """Read ranked candidates until the distiller has filled the budget."""
    packing = distiller.start(request.token_budget, count_tokens)
    read: list[SourceText] = []
    now = db.now()
    while True:
        query = candidates_page(
            request.memory_ref,
            now,
            budget=request.token_budget,
            after=read[-1] if read else None,
            limit=PAGE,
            explicit_ids=request.sources,
        )
        async with db.reading() as connection:
            rows = (await connection.execute(query)).all()
        page = [to_source(row, secrets) for row in rows]
        read += page
        # Tokenising is CPU-bound: a long selection goes on in a thread, so the event
        # loop stays free for heartbeats; its first few hundred sources run here
        # (memory/cpu_work.py).
        offer = packing.offer
        wants_more = offer(page) if on_loop(len(read)) else await asyncio.to_thread(offer, page)
        progress({"phase": "selecting", "read": len(read)})
        if not wants_more or len(rows) < PAGE:
            return Selection(tuple(read), packing.finish())


async def distill(
    db: Database,
    request: DistillMemoryRequest,
    *,
    secrets: MemorySecretRegistry | None = None,
    distiller: Distiller | None = None,
    progress: Progress = lambda _: None,
    vectors: EntryVectors | None = None,
) -> DistillationResult:
    """``vectors``: the model that gives the distilled entry its vector in the commit
    (None: the catch-up embeds it later)."""
    ref = request.memory_ref
    async with db.reading() as connection:
        done = await _committed_result(connection, ref, request.run_key)
    if done is not None:  # a retry of a run that already committed
        return done
    distiller = distiller or ExtractiveDistiller()
    for _ in range(MAX_SELECTIONS):
        selection = await select_sources(
            db, request, secrets=secrets, distiller=distiller, progress=progress
        )
        base = _base_result(request, selection)
        outcome = selection.outcome
        if not outcome.consumed:
            # Park what is too large for this budget, so the next run does not stumble
            # on it again. When nothing fit at all, fail as RFC 0062 asks (writing
            # nothing else: no archive, no events), unless the caller asked to defer.
            await _park_oversized(db, ref, outcome.oversized)
            if outcome.minimum_required is None:
                return base
            if request.when_nothing_fits == "defer":
                return base.model_copy(update={"status": "over-budget"})
            raise TokenBudgetExceeded(request.token_budget, outcome.minimum_required)
        archive = build_archive(str(ref), request.token_budget, selection.outcome, distiller.name)
        progress({"phase": "committing", "archiveChecksum": archive.checksum})
        try:
            return await commit(
                db, request, base, selection.outcome, archive, secrets, vectors=vectors
            )
        except _ClaimLost as lost:
            if lost.taken_by_others:
                return base.model_copy(update={"status": "already-consumed"})
            # Only edits or removals got in the way: select again from the live rows.
    raise SourcesKeptChanging()


def _base_result(request: DistillMemoryRequest, selection: Selection) -> DistillationResult:
    outcome = selection.outcome
    return DistillationResult(
        memory_ref=str(request.memory_ref),
        status="nothing-to-distill",
        snapshot_checksum=selection.checksum,
        snapshot_count=len(selection.read),
        token_budget=request.token_budget,
        deferred_count=outcome.deferred_count,
        oversized_count=outcome.oversized_count,
    )


async def _committed_result(
    connection: AsyncConnection, ref: MemoryRef, run_key: str
) -> DistillationResult | None:
    row = (
        await connection.execute(
            select(DISTILLATION_RUNS.c.result).where(
                scoped(DISTILLATION_RUNS, ref), DISTILLATION_RUNS.c.run_key == run_key
            )
        )
    ).first()
    return DistillationResult.model_validate(row.result) if row else None


async def commit(
    db: Database,
    request: DistillMemoryRequest,
    base: DistillationResult,
    outcome: DistillationOutcome,
    archive: Archive,
    secrets: MemorySecretRegistry | None,
    *,
    vectors: EntryVectors | None = None,
) -> DistillationResult:
    """Claim the sources and write everything the run produced, or nothing."""
    ref = request.memory_ref
    now = db.now()
    # The output passes the chokepoint like any other write (its sources were already
    # redacted, so this is belt and braces for distillers that generate text).
    content = write_redacted(outcome.output_text, secrets)
    # Embedded before the transaction opens: a model call never holds it.
    computed = await vectors.compute([content]) if vectors is not None else None
    async with db.writing() as connection:
        # One distillation per memoryRef commits at a time.
        await lock(connection, memory_ref_order(ref))
        done = await _committed_result(connection, ref, request.run_key)
        if done is not None:  # a concurrent duplicate of this very run won the race
            return done
        await _claim_sources(connection, ref, outcome.consumed, archive.output_id, now)
        await _park(connection, ref, outcome.oversized)
        await record_lineage(
            connection, ref, [s.entry_id for s in outcome.consumed], archive.output_id
        )
        await _insert_archive(connection, ref, request, outcome, archive, content, now)
        tags = await _insert_distilled_entry(
            connection, ref, request, outcome, archive, content, now, computed
        )
        index, index_events = await _refresh_index(connection, ref, request, now, secrets)
        pending = _entry_events(ref, archive.output_id, tags) + index_events
        pending.append(_compacted_event(ref, request, outcome, archive, content, index))
        seqs = await append_events(connection, ref, pending, now)
        result = base.model_copy(
            update={
                "status": "distilled",
                "tokens_used": outcome.tokens_used,
                "source_count": len(outcome.consumed),
                "output_id": archive.output_id,
                "archive_checksum": archive.checksum,
                "byte_size": _byte_size(content),
                "index": index,
                "compacted_event_seq": seqs[-1],
            }
        )
        await connection.execute(
            insert(DISTILLATION_RUNS).values(
                tenant=ref.tenant,
                memory_ref=str(ref),
                run_key=request.run_key,
                result=result.to_wire(),
                created_at=now,
            )
        )
    return result


def _byte_size(content: str) -> int:
    return len(content.encode("utf-8"))


async def _claim_sources(
    connection: AsyncConnection,
    ref: MemoryRef,
    consumed: Sequence[SourceText],
    output_id: str,
    now: datetime,
) -> None:
    """Mark every consumed source, at the version read, as distilled into output_id;
    raise _ClaimLost (rolling the transaction back) unless all of them were still
    live and unconsumed."""
    marks = _versions_read("marks", consumed)
    claimed = (
        await connection.execute(
            update(ENTRIES)
            .where(
                scoped(ENTRIES, ref),
                live(now),
                ENTRIES.c.distilled_into.is_(None),
                # The id list lets every plan (a cached generic one too) use the primary
                # key; without it a stale estimate made PostgreSQL loop over the ref.
                ENTRIES.c.id.in_([source.entry_id for source in consumed]),
                tuple_(ENTRIES.c.id, ENTRIES.c.version) == tuple_(marks.c.id, marks.c.version),
            )
            .values(distilled_into=output_id)
            .returning(ENTRIES.c.id)
        )
    ).all()
    if len(claimed) == len(consumed):
        return
    taken = (
        await connection.execute(
            select(func.count()).where(
                scoped(ENTRIES, ref),
                ENTRIES.c.id.in_([s.entry_id for s in consumed]),
                ENTRIES.c.distilled_into.is_not(None),
                ENTRIES.c.distilled_into != output_id,
            )
        )
    ).scalar_one()
    raise _ClaimLost(int(taken))


def _versions_read(
    name: str, sources: Sequence[SourceText], costs: Sequence[int] | None = None
) -> Subquery:
    """(id, version[, cost]) rows of what a run read, to match live rows against."""
    columns = [
        func.unnest(literal([s.entry_id for s in sources], ARRAY(Text))).label("id"),
        func.unnest(literal([s.version for s in sources], ARRAY(Integer))).label("version"),
    ]
    if costs is not None:
        columns.append(func.unnest(literal(list(costs), ARRAY(Integer))).label("cost"))
    return select(*columns).subquery(name)


async def _park_oversized(
    db: Database, ref: MemoryRef, oversized: Sequence[tuple[SourceText, int]]
) -> None:
    if oversized:
        async with db.writing() as connection:
            await _park(connection, ref, oversized)


async def _park(
    connection: AsyncConnection, ref: MemoryRef, oversized: Sequence[tuple[SourceText, int]]
) -> None:
    """Record what each oversized source needs, at the version read (an edit since then
    clears the mark anyway)."""
    if not oversized:
        return
    parked = _versions_read("parked", [s for s, _ in oversized], [c for _, c in oversized])
    await connection.execute(
        update(ENTRIES)
        .where(
            scoped(ENTRIES, ref),
            ENTRIES.c.id.in_([source.entry_id for source, _ in oversized]),
            tuple_(ENTRIES.c.id, ENTRIES.c.version) == tuple_(parked.c.id, parked.c.version),
        )
        .values(distill_cost=parked.c.cost)
    )


async def _insert_archive(
    connection: AsyncConnection,
    ref: MemoryRef,
    request: DistillMemoryRequest,
    outcome: DistillationOutcome,
    archive: Archive,
    content: str,
    now: datetime,
) -> None:
    await connection.execute(
        pg_insert(ARCHIVES)
        .values(
            tenant=ref.tenant,
            memory_ref=str(ref),
            checksum=archive.checksum,
            body=archive.body,
            run_key=request.run_key,
            output_id=archive.output_id,
            source_count=len(outcome.consumed),
            token_budget=request.token_budget,
            tokens_used=outcome.tokens_used,
            byte_size=_byte_size(content),
            created_at=now,
            expires_at=now + ARCHIVE_RETENTION,
        )
        .on_conflict_do_nothing(index_elements=[ARCHIVES.c.memory_ref, ARCHIVES.c.checksum])
    )


async def _insert_distilled_entry(
    connection: AsyncConnection,
    ref: MemoryRef,
    request: DistillMemoryRequest,
    outcome: DistillationOutcome,
    archive: Archive,
    content: str,
    now: datetime,
    vectors: ComputedVectors | None,
) -> list[str]:
    tags = [DISTILLED_TAG, f"compacted-from:{request.run_key}"[:128]]
    row = {
        "tenant": ref.tenant,
        "memory_ref": str(ref),
        "id": archive.output_id,
        "content": content,
        "tags": tags,
        "tier": Tier.SEMANTIC.value,
        "version": 1,
        "pinned": False,
        "priority": 1,
        "metadata": {
            "archiveChecksum": archive.checksum,
            "sourceCount": len(outcome.consumed),
        },
        "created_at": now,
        "updated_at": now,
        "last_accessed_at": now,
        "expires_at": earliest_expiry(s.expires_at for s in outcome.consumed),
    }
    await insert_entries(connection, [row], now, vectors=vectors, skip_existing=True)
    return tags


async def _refresh_index(
    connection: AsyncConnection,
    ref: MemoryRef,
    request: DistillMemoryRequest,
    now: datetime,
    secrets: MemorySecretRegistry | None,
) -> tuple[IndexUpdate | None, list[PendingEvent]]:
    if not request.index_emitted:
        return None, []
    written, events = await refresh_index(connection, ref, now, secrets)
    index = IndexUpdate(
        path=written.path,
        version=written.version,
        sha256=written.sha256,
        size_tokens=written.size_tokens,
    )
    return index, events


def _entry_events(ref: MemoryRef, output_id: str, tags: list[str]) -> list[PendingEvent]:
    return [
        PendingEvent(
            EventType.MEMORY_CREATED,
            MemoryLifecycle(
                memory_ref=str(ref),
                memory_id=output_id,
                tier=Tier.SEMANTIC,
                version=1,
                tags=tuple(tags),
            ),
        ),
        PendingEvent(
            EventType.MEMORY_WRITTEN,
            MemoryWritten(memory_ref=str(ref), memory_id=output_id, tags=tuple(tags)),
        ),
    ]


def _compacted_event(
    ref: MemoryRef,
    request: DistillMemoryRequest,
    outcome: DistillationOutcome,
    archive: Archive,
    content: str,
    index: IndexUpdate | None,
) -> PendingEvent:
    source_ids = [s.entry_id for s in outcome.consumed]
    compacted = MemoryCompacted(
        memory_ref=str(ref),
        output_id=archive.output_id,
        source_ids=tuple(source_ids) if len(source_ids) <= SOURCE_ID_LIMIT else None,
        source_count=len(source_ids),
        trigger=request.trigger,
        byte_size=_byte_size(content),
        distillation=Distillation(
            token_budget=request.token_budget,
            tokens_used=outcome.tokens_used,
            index_updated=index is not None,
        ),
    )
    # Keyed on the output, which is derived from the archive, i.e. from the sources.
    return PendingEvent(
        EventType.MEMORY_COMPACTED, compacted, dedupe_key=f"compacted:{archive.output_id}"
    )
