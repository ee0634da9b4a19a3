"""Erasure: forget (and TTL expiry) reaches every copy of an entry's text, in one
transaction.

Following lineage (memory/entries/lineage.py) from the erased entries:

- **Archives** are immutable and content-addressed, so an archive holding erased text is
  replaced: a new archive version without the erased sources' items (an item whose
  other sources remain keeps the text of the first remaining source) is written, the old
  row and its bytes are deleted, and a tombstone records the old checksum, its
  successor, and the sha256 of every item the original held and of those erased. What a
  verifier can still prove: every item of the successor is byte-identical to an item of
  the original (its hash is in the tombstone), and which item hashes were erased; the
  original checksum itself can no longer be recomputed, by design, because its bytes
  are gone. An archive left with no item is removed (tombstone without successor).
- **Distilled entries** are rewritten from their new archive (same id, next version,
  through the SR-1 chokepoint) or removed when nothing remains; a rewritten or removed
  distilled entry is in turn followed into the archives that distilled it again.
  A distilled entry whose archive was already collected (past archiveRetention) is
  rewritten line by line: lines that were an erased entry's stored text are dropped,
  lines that were a rewritten distillate are swapped; if erased text is still found in
  it after that, it is removed whole.
- **Snapshots** holding an erased or rewritten entry are dropped.
- The erased rows are deleted; the event log records memory.deleted (reason forget) or
  memory.expired (reason ttl) and memory.updated for rewrites, ids only.
- **Forgotten tags** (carried by erased entries, by no remaining one) leave the
  MEMORY-INDEX, the tag counters and the event payloads (memory/erasure/forgotten_tags.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import rfc8785
from sqlalchemy import any_, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.distillation.packing import LINE_PREFIX
from memory.entries.content import rewrite_entry
from memory.entries.lineage import DISTILLED, derived_from, earliest_expiry
from memory.erasure.forgotten_tags import erase_tag_names
from memory.events.event_log import REMOVED_COLUMNS, PendingEvent, append_events, removal_event
from memory.keyed_ids.intent_links import IntentLinks
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from memory.tokens import count_tokens
from schemas.erasure import MAX_LISTED_IDS, ErasureReport
from schemas.events import EventType, MemoryLifecycle
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

ARCHIVES = tables.archives
ARCHIVE_TOMBSTONES = tables.archive_tombstones
ENTRIES = tables.entries
LINEAGE = tables.lineage
SNAPSHOTS = tables.snapshots
SNAPSHOT_ITEMS = tables.snapshot_items


@dataclass
class ErasurePass:
    """One memoryRef's erasure in progress."""

    ref: MemoryRef
    now: datetime
    reason: str  # "forget", "delete" or "ttl"
    secrets: MemorySecretRegistry | None
    targets: list[str]
    links: IntentLinks
    erased: set[str] = field(default_factory=set)
    erased_tags: set[str] = field(default_factory=set)
    rewritten: dict[str, str] = field(default_factory=dict)
    before: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    removed_distilled: list[str] = field(default_factory=list)
    archives_rewritten: int = 0
    archives_removed: int = 0
    snapshots_dropped: int = 0
    events_rewritten: int = 0
    index_refreshed: bool = False
    index_versions_removed: int = 0


def _sha(value: Any) -> str:
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def _pairs(facts: dict[str, Any]) -> list[Any]:
    return [part for key, value in facts.items() for part in (key, value)]


def _render(items: Sequence[dict[str, Any]]) -> str:
    return "".join(f"{LINE_PREFIX}{item['text']}\n" for item in items)


async def erase_in_ref(connection: AsyncConnection, state: ErasurePass) -> None:
    state.erased = set(state.targets)
    links = await derived_from(connection, state.ref, state.targets)
    outputs = sorted({link.artifact_id for link in links if link.artifact_kind == DISTILLED})
    archives = {
        row.output_id: row
        for row in (
            await connection.execute(
                select(ARCHIVES)
                .where(scoped(ARCHIVES, state.ref))
                .where(ARCHIVES.c.output_id == any_(texts("outputs", outputs)))
            )
        ).all()
    }
    distillates = {
        row.id: row
        for row in (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.content, ENTRIES.c.created_at).where(
                    scoped(ENTRIES, state.ref), ENTRIES.c.id == any_(texts("outputs", outputs))
                )
            )
        ).all()
    }
    # What erased and rewritten entries said before this erasure, for distillates whose
    # archive was already collected.
    state.before = {
        row.id: row.content for row in (await _current(connection, state, state.targets)).values()
    }

    def made_at(output_id: str) -> tuple[datetime, str]:
        row = archives.get(output_id) or distillates[output_id]
        return (row.created_at, output_id)

    # Oldest first: a recursive distillation is newer than the distillates it read.
    for output_id in sorted(set(archives) | set(distillates), key=made_at):
        if output_id in archives:
            await _rewrite_archive(connection, state, archives[output_id])
        else:
            await _rewrite_without_archive(connection, state, distillates[output_id])
    await _drop_snapshots(connection, state)
    await _delete_rows(connection, state)
    tags = await erase_tag_names(
        connection, state.ref, state.now, state.secrets, state.erased, state.erased_tags
    )
    state.snapshots_dropped += tags.snapshots_dropped
    state.events_rewritten = tags.events_rewritten
    state.index_refreshed = tags.index_refreshed
    state.index_versions_removed = tags.index_versions_removed


async def _rewrite_without_archive(
    connection: AsyncConnection, state: ErasurePass, distillate: Any
) -> None:
    """A distillate whose archive was collected (past archiveRetention): drop the lines
    that were an erased entry's text and swap the ones that were a rewritten distillate's;
    if any erased text is still in it after that (a repeat's text, an embedding), it is
    removed whole, because completeness wins over keeping the rest."""
    content = distillate.content
    for source_id, old in state.before.items():
        new = state.rewritten.get(source_id)
        # The line may hold the text as stored or as the dream redacted it (a secret
        # registered after the write): with the tenant's secrets, match both.
        for said in dict.fromkeys((old, write_redacted(old, state.secrets))):
            line = f"{LINE_PREFIX}{said}\n"
            content = content.replace(line, "" if new is None else f"{LINE_PREFIX}{new}\n")
    erased_texts = [
        text
        for s in state.erased
        if s in state.before
        for text in (state.before[s], write_redacted(state.before[s], state.secrets))
    ]
    if not content or any(text and text in content for text in erased_texts):
        state.erased.add(distillate.id)
        state.removed_distilled.append(distillate.id)
        return
    if content != distillate.content:
        kept = await _still_carried(connection, state, distillate.id)
        await _rewrite_distilled(connection, state, distillate.id, content, None, kept)
        state.before[distillate.id] = distillate.content


async def _still_carried(
    connection: AsyncConnection, state: ErasurePass, output_id: str
) -> list[str]:
    sources = (
        await connection.execute(
            select(LINEAGE.c.source_id).where(
                scoped(LINEAGE, state.ref),
                LINEAGE.c.artifact_kind == DISTILLED,
                LINEAGE.c.artifact_id == output_id,
            )
        )
    ).scalars()
    return sorted(set(sources) - state.erased)


async def _current(
    connection: AsyncConnection, state: ErasurePass, ids: Sequence[str]
) -> dict[str, Any]:
    rows = (
        await connection.execute(
            select(ENTRIES.c.id, ENTRIES.c.content, ENTRIES.c.tags, ENTRIES.c.expires_at).where(
                scoped(ENTRIES, state.ref), ENTRIES.c.id == any_(texts("ids", list(ids)))
            )
        )
    ).all()
    return {row.id: row for row in rows}


async def _rewrite_archive(connection: AsyncConnection, state: ErasurePass, row: Any) -> None:
    document = json.loads(bytes(row.body))
    carried = await _current(
        connection,
        state,
        sorted({s for item in document["items"] for s in item["sourceIds"]} - state.erased),
    )
    items: list[dict[str, Any]] = []
    for item in document["items"]:
        remaining = [s for s in item["sourceIds"] if s not in state.erased]
        if not remaining:
            continue
        lead = remaining[0]
        text = item["text"]
        if lead in state.rewritten:
            text = state.rewritten[lead]
        elif lead != item["sourceIds"][0]:
            # The text was the erased lead's: take a remaining source's own text.
            present = [s for s in remaining if s in carried]
            if not present:
                continue
            text = carried[present[0]].content
        # Tags too: an item keeps only the tags of the sources it still carries. A source
        # deleted since the dream is no entry any more and has no tags to give.
        tags = sorted(
            {
                write_redacted(t, state.secrets)
                for s in remaining
                if s in carried
                for t in carried[s].tags
            }
        )
        if remaining == item["sourceIds"]:
            tags = item["tags"]  # untouched items stay byte-identical
        items.append(
            {
                **item,
                "text": write_redacted(text, state.secrets),
                "sourceIds": remaining,
                "tags": tags,
            }
        )
    if items == document["items"]:
        return
    output_id = row.output_id
    original = [_sha(item) for item in document["items"]]
    kept_hashes = {_sha(item) for item in items}
    tombstone = {
        "tenant": state.ref.tenant,
        "memory_ref": str(state.ref),
        "checksum": row.checksum,
        "reason": state.reason,
        "item_sha256": original,
        "erased_item_sha256": [h for h in original if h not in kept_hashes],
        "erased_at": state.now,
    }
    await connection.execute(
        delete(ARCHIVES).where(scoped(ARCHIVES, state.ref), ARCHIVES.c.checksum == row.checksum)
    )
    if not items:
        await connection.execute(
            insert(ARCHIVE_TOMBSTONES).values(**tombstone, successor_checksum=None)
        )
        state.archives_removed += 1
        state.erased.add(output_id)
        state.removed_distilled.append(output_id)
        return
    kept = {s for item in items for s in item["sourceIds"]}
    output = _render(items)
    input_tokens = sum(count_tokens(item["text"]) for item in items)
    output_tokens = count_tokens(output)
    successor = {
        **document,
        "items": items,
        "sources": [s for s in document["sources"] if s["id"] in kept],
        "output": output,
        "tokens": {
            "input": input_tokens,
            "output": output_tokens,
            "used": input_tokens + output_tokens,
        },
        "supersedes": row.checksum,
    }
    body = rfc8785.dumps(successor)
    checksum = hashlib.sha256(body).hexdigest()
    await connection.execute(
        insert(ARCHIVES).values(
            tenant=row.tenant,
            memory_ref=row.memory_ref,
            checksum=checksum,
            body=body,
            run_key=row.run_key,
            output_id=output_id,
            source_count=len(successor["sources"]),
            token_budget=row.token_budget,
            tokens_used=input_tokens + output_tokens,
            byte_size=len(output.encode("utf-8")),
            created_at=row.created_at,
            expires_at=row.expires_at,
        )
    )
    await connection.execute(
        insert(ARCHIVE_TOMBSTONES).values(**tombstone, successor_checksum=checksum)
    )
    state.archives_rewritten += 1
    previous = (await _current(connection, state, [output_id])).get(output_id)
    if previous is not None:
        state.before[output_id] = previous.content
    await _rewrite_distilled(connection, state, output_id, output, checksum, sorted(kept))


async def _rewrite_distilled(
    connection: AsyncConnection,
    state: ErasurePass,
    output_id: str,
    content: str,
    checksum: str | None,
    sources: list[str],
) -> None:
    content = write_redacted(content, state.secrets)
    facts: dict[str, Any] = {"sourceCount": len(sources)}
    if checksum is not None:
        facts["archiveChecksum"] = checksum
    expiry = earliest_expiry(
        r.expires_at for r in (await _current(connection, state, sources)).values()
    )
    changed = await rewrite_entry(
        connection,
        state.ref,
        output_id,
        state.now,
        content=content,
        values={
            "version": ENTRIES.c.version + 1,
            "updated_at": state.now,
            "expires_at": expiry,
            "metadata": ENTRIES.c.metadata.op("||")(func.jsonb_build_object(*_pairs(facts))),
        },
    )
    if changed is not None:
        state.rewritten[output_id] = content
        state.versions[output_id] = int(changed.version)


async def _drop_snapshots(connection: AsyncConnection, state: ErasurePass) -> None:
    touched = sorted(state.erased | set(state.rewritten))
    holding = (
        select(SNAPSHOT_ITEMS.c.snapshot_id)
        .where(
            scoped(SNAPSHOT_ITEMS, state.ref),
            SNAPSHOT_ITEMS.c.entry_id == any_(texts("touched", touched)),
        )
        .distinct()
    )
    result = await connection.execute(
        delete(SNAPSHOTS).where(scoped(SNAPSHOTS, state.ref), SNAPSHOTS.c.snapshot_id.in_(holding))
    )
    state.snapshots_dropped += int(result.rowcount or 0)


async def _delete_rows(connection: AsyncConnection, state: ErasurePass) -> None:
    removed = (
        await connection.execute(
            delete(ENTRIES)
            .where(
                scoped(ENTRIES, state.ref),
                ENTRIES.c.id == any_(texts("erased", sorted(state.erased))),
            )
            .returning(*REMOVED_COLUMNS, ENTRIES.c.tags)
        )
    ).all()
    state.erased_tags = {tag for row in removed for tag in row.tags}
    gone = sorted(state.erased)
    await connection.execute(
        delete(LINEAGE).where(
            scoped(LINEAGE, state.ref),
            (LINEAGE.c.source_id == any_(texts("gone_sources", gone)))
            | (LINEAGE.c.artifact_id == any_(texts("gone_artifacts", gone))),
        )
    )
    event_type = EventType.MEMORY_EXPIRED if state.reason == "ttl" else EventType.MEMORY_DELETED
    pending = [
        removal_event(
            row,
            event_type,
            state.reason if row.id in state.targets else "erased-source",
            state.links,
        )
        for row in removed
    ]
    pending += [
        PendingEvent(
            EventType.MEMORY_UPDATED,
            MemoryLifecycle(
                memory_ref=str(state.ref),
                memory_id=memory_id,
                tier=Tier.SEMANTIC,
                version=state.versions[memory_id],
                reason="erased-source",
            ),
        )
        for memory_id in sorted(set(state.rewritten) - state.erased)
    ]
    if pending:
        await append_events(connection, state.ref, pending, state.now)


def report(memory_ref: str, dry_run: bool, passes: Sequence[ErasurePass]) -> ErasureReport:
    targets = [t for p in passes for t in p.targets]
    return ErasureReport(
        memory_ref=memory_ref,
        dry_run=dry_run,
        entries=len(targets),
        distilled_rewritten=sum(len(set(p.rewritten) - p.erased) for p in passes),
        distilled_removed=sum(len(p.removed_distilled) for p in passes),
        archives_rewritten=sum(p.archives_rewritten for p in passes),
        archives_removed=sum(p.archives_removed for p in passes),
        snapshots_dropped=sum(p.snapshots_dropped for p in passes),
        events_rewritten=sum(p.events_rewritten for p in passes),
        indexes_refreshed=sum(1 for p in passes if p.index_refreshed),
        index_versions_removed=sum(p.index_versions_removed for p in passes),
        entry_ids=tuple(sorted(targets)[:MAX_LISTED_IDS]),
    )
