"""The distillation queue: a memoryRef's undistilled transactional entries, best-ranked
first, read page by page over one index.

Rank: pinned first, then priority, then newest, then id (a total order, so pages and
therefore outcomes are deterministic). The partial index ix_entries_distill_queue holds
exactly the queue (undistilled, not superseded, working/episodic), in rank order, so a
page costs the same at 10k entries as at 1M, and consumed entries leave the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, or_, select, tuple_

from memory.distillation.packing import SourceText
from memory.entries.rows import live
from memory.redaction.carry_forward import carry_forward
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.tenant_scope import scoped
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
# Distillation reads transactional memory (RFC 0062); semantic memory is the output.
TRANSACTIONAL_TIERS = (Tier.WORKING, Tier.EPISODIC)
RANK = (ENTRIES.c.pinned, ENTRIES.c.priority, ENTRIES.c.created_at, ENTRIES.c.id)


def candidates_page(
    ref: MemoryRef,
    now: datetime,
    *,
    budget: int,
    after: SourceText | None,
    limit: int,
    explicit_ids: Sequence[str] | None = None,
) -> Select[Any]:
    """The next ``limit`` unconsumed entries after ``after`` in rank order.

    Entries parked as too large for this budget are passed over. ``explicit_ids``
    (recursive distillation) selects those entries of any tier instead of the
    transactional queue; already consumed entries are never candidates."""
    query = select(
        ENTRIES.c.id,
        ENTRIES.c.version,
        ENTRIES.c.content,
        ENTRIES.c.content_sha256,
        ENTRIES.c.tags,
        ENTRIES.c.pinned,
        ENTRIES.c.priority,
        ENTRIES.c.created_at,
        ENTRIES.c.expires_at,
    ).where(
        scoped(ENTRIES, ref),
        live(now),
        ENTRIES.c.distilled_into.is_(None),
        or_(ENTRIES.c.distill_cost.is_(None), ENTRIES.c.distill_cost <= budget),
    )
    if explicit_ids is not None:
        query = query.where(ENTRIES.c.id.in_(list(explicit_ids)))
    else:
        # Literal values, not parameters: only then can a cached generic plan match the
        # partial index's predicate (tier IN ('working', 'episodic')) instead of sorting
        # the whole queue.
        query = query.where(
            ENTRIES.c.tier.in_(
                bindparam(
                    "queue_tiers",
                    [t.value for t in TRANSACTIONAL_TIERS],
                    expanding=True,
                    literal_execute=True,
                )
            )
        )
    if after is not None:
        query = query.where(
            tuple_(*RANK) < tuple_(after.pinned, after.priority, after.created_at, after.entry_id)
        )
    return query.order_by(*(column.desc() for column in RANK)).limit(limit)


def to_source(row: Any, secrets: MemorySecretRegistry | None) -> SourceText:
    """A candidate as the distiller sees it. SR-1 carry-forward: a secret registered
    after the entry was written (or stored before redaction existed) is redacted here,
    in the text and in the tags, so it never enters an archive or a distilled entry."""
    return SourceText(
        entry_id=row.id,
        version=row.version,
        # Foreign secret markers become canonical ones too (RFC 0012 §D carry-forward).
        content=carry_forward(write_redacted(row.content, secrets)),
        content_sha256=row.content_sha256,
        tags=tuple(dict.fromkeys(write_redacted(tag, secrets) for tag in row.tags)),
        pinned=row.pinned,
        priority=row.priority,
        created_at=row.created_at,
        expires_at=row.expires_at,
    )
