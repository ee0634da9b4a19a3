"""One distillation, end to end inside the store: read the frozen snapshot, re-redact it
(SR-1 carry-forward), distill under the budget, and commit the archive, the distilled
entry, the source marks, the index and the events in ONE transaction.

Idempotent on run_key: a retried or duplicated call finds the committed archive and
returns the same result without writing anything, and a failure anywhere before the
commit leaves no trace (no partial archive).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable

from sqlalchemy import ARRAY, Integer, Text, func, insert, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.archive import Archive, build_archive
from memory.distiller import DistillationOutcome, Distiller, ExtractiveDistiller, SourceText
from memory.event_log import PendingEvent, append_events
from memory.memory_index import refresh_index
from memory.redaction import MemorySecretRegistry, write_redacted
from memory.rows import scoped
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens
from schemas.capabilities import ARCHIVE_RETENTION
from schemas.errors import InvalidInput
from schemas.events import (
    Distillation,
    EventType,
    MemoryCompacted,
    MemoryLifecycle,
    MemoryWritten,
)
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef, parse_memory_ref
from schemas.workflow_io import DistillationResult, DistillRequest, IndexUpdate

A = tables.archives
R = tables.distillation_runs
E = tables.entries
DISTILLED_TAG = "distilled"
SOURCE_ID_LIMIT = 100  # memory.compacted lists sourceIds only up to this many
PAGE = 2000

Progress = Callable[[dict[str, object]], None]


async def _load_sources(
    store: PostgresMemoryStore,
    request: DistillRequest,
    registry: MemorySecretRegistry | None,
    progress: Progress,
    total: int,
) -> list[SourceText]:
    sources: list[SourceText] = []
    while True:
        page = await store.read_snapshot(
            request.memory_ref, request.snapshot_id, start=len(sources), limit=PAGE
        )
        for item in page:
            sources.append(
                SourceText(
                    entry_id=item.entry_id,
                    version=item.version,
                    # SR-1 carry-forward: a secret registered after the source was
                    # written (or stored before redaction existed) is caught here, so it
                    # never re-enters an archive.
                    content=write_redacted(item.content, registry),
                    content_sha256=item.content_sha256,
                    tags=item.tags,
                    pinned=item.pinned,
                    priority=item.priority.rank,
                    created_at=item.created_at,
                    position=item.position,
                )
            )
        progress({"phase": "reading", "read": len(sources), "total": total})
        if len(page) < PAGE:
            return sources


async def _committed_result(
    connection: AsyncConnection, ref: MemoryRef, run_key: str
) -> DistillationResult | None:
    row = (
        await connection.execute(
            select(R.c.result).where(
                R.c.tenant == ref.tenant, R.c.memory_ref == str(ref), R.c.run_key == run_key
            )
        )
    ).first()
    return DistillationResult.model_validate(row.result) if row else None


async def distill_snapshot(
    store: PostgresMemoryStore,
    request: DistillRequest,
    *,
    registry: MemorySecretRegistry | None = None,
    distiller: Distiller | None = None,
    progress: Progress = lambda _: None,
) -> DistillationResult:
    ref = parse_memory_ref(request.memory_ref)
    snapshot = await store.snapshot_info(request.memory_ref, request.snapshot_id)
    if snapshot is None:
        raise InvalidInput("snapshotId", "no such snapshot for this memoryRef")
    base = DistillationResult(
        memory_ref=str(ref),
        status="nothing-to-distill",
        snapshot_id=snapshot.snapshot_id,
        snapshot_checksum=snapshot.checksum,
        snapshot_count=snapshot.entry_count,
        token_budget=request.token_budget,
    )
    async with store.engine.connect() as connection:
        done = await _committed_result(connection, ref, request.run_key)
    if done is not None:
        return done

    sources = await _load_sources(store, request, registry, progress, snapshot.entry_count)
    distiller = distiller or ExtractiveDistiller()
    progress({"phase": "distilling", "sources": len(sources)})
    # Tokenising is CPU-bound; a thread keeps the event loop free for heartbeats.
    outcome = await asyncio.to_thread(
        distiller.distill, sources, request.token_budget, count_tokens
    )
    if not outcome.consumed:
        return base
    archive = build_archive(str(ref), request.token_budget, outcome, distiller.name)
    progress({"phase": "committing", "archiveChecksum": archive.checksum})
    return await _commit(store, ref, request, base, outcome, archive, registry)


async def _commit(
    store: PostgresMemoryStore,
    ref: MemoryRef,
    request: DistillRequest,
    base: DistillationResult,
    outcome: DistillationOutcome,
    archive: Archive,
    registry: MemorySecretRegistry | None,
) -> DistillationResult:
    now = store.now()
    # The output passes the chokepoint like any other write (its sources were already
    # redacted, so this is belt and braces for distillers that generate text).
    content = write_redacted(outcome.output_text, registry)
    byte_size = len(content.encode("utf-8"))
    output_id = archive.output_id
    async with store.engine.begin() as connection:
        # One distillation per memoryRef commits at a time.
        await connection.execute(
            select(func.pg_advisory_xact_lock(func.hashtextextended(f"distill|{ref}", 0)))
        )
        done = await _committed_result(connection, ref, request.run_key)
        if done is not None:  # a concurrent duplicate won the race
            return done
        await connection.execute(
            pg_insert(A)
            .values(
                tenant=ref.tenant,
                memory_ref=str(ref),
                checksum=archive.checksum,
                body=archive.body,
                run_key=request.run_key,
                output_id=output_id,
                source_count=len(outcome.consumed),
                token_budget=request.token_budget,
                tokens_used=outcome.tokens_used,
                byte_size=byte_size,
                created_at=now,
                expires_at=now + ARCHIVE_RETENTION,
            )
            .on_conflict_do_nothing(index_elements=[A.c.memory_ref, A.c.checksum])
        )
        tags = [DISTILLED_TAG, f"compacted-from:{request.run_key}"[:128]]
        await connection.execute(
            pg_insert(E)
            .values(
                tenant=ref.tenant,
                memory_ref=str(ref),
                id=output_id,
                content=content,
                content_sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
                tags=tags,
                tier=Tier.SEMANTIC.value,
                version=1,
                pinned=False,
                priority=1,
                metadata={
                    "archiveChecksum": archive.checksum,
                    "sourceCount": len(outcome.consumed),
                },
                created_at=now,
                updated_at=now,
                last_accessed_at=now,
            )
            .on_conflict_do_nothing(index_elements=[E.c.memory_ref, E.c.id])
        )
        # Mark only the versions the run actually read: an entry edited since the
        # snapshot carries new content and waits for the next dream.
        marks = (
            select(
                func.unnest(literal([s.entry_id for s in outcome.consumed], ARRAY(Text))).label(
                    "id"
                ),
                func.unnest(literal([s.version for s in outcome.consumed], ARRAY(Integer))).label(
                    "version"
                ),
            )
        ).subquery("marks")
        await connection.execute(
            update(E)
            .where(scoped(ref), E.c.id == marks.c.id, E.c.version == marks.c.version)
            .values(distilled_into=output_id)
        )
        pending = [
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
        index = None
        if request.index_emitted:
            written, index_events = await refresh_index(connection, ref, now)
            pending += index_events
            index = IndexUpdate(
                path=written.path,
                version=written.version,
                sha256=written.sha256,
                size_tokens=written.size_tokens,
            )
        source_ids = [s.entry_id for s in outcome.consumed]
        compacted = MemoryCompacted(
            memory_ref=str(ref),
            output_id=output_id,
            source_ids=tuple(source_ids) if len(source_ids) <= SOURCE_ID_LIMIT else None,
            source_count=len(source_ids),
            trigger="host-managed",
            byte_size=byte_size,
            distillation=Distillation(
                token_budget=request.token_budget,
                tokens_used=outcome.tokens_used,
                index_updated=index is not None,
            ),
        )
        pending.append(
            PendingEvent(
                EventType.MEMORY_COMPACTED, compacted, dedupe_key=f"compacted:{request.run_key}"
            )
        )
        seqs = await append_events(connection, ref, pending, now)
        result = base.model_copy(
            update={
                "status": "distilled",
                "tokens_used": outcome.tokens_used,
                "source_count": len(source_ids),
                "deferred_count": outcome.deferred_count,
                "output_id": output_id,
                "archive_checksum": archive.checksum,
                "byte_size": byte_size,
                "index": index,
                "compacted_event_seq": seqs[-1],
            }
        )
        await connection.execute(
            insert(R).values(
                tenant=ref.tenant,
                memory_ref=str(ref),
                run_key=request.run_key,
                result=result.to_wire(),
                created_at=now,
            )
        )
    return result
