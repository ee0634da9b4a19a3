"""MEMORY-INDEX.json: the content-free manifest the next session loads at startup.

It lists archives (checksum, output id, counts), entry counts per tier, a tag histogram,
the time range of live memory and the facts that changed (how many entries a later one
supersedes, how many pairs conflict, the latest supersessions by id); never entry text.
Its size in tokens is part of the document and is capped at MEMORY_INDEX_MAX_TOKENS:
when a corpus has more archives or tags than fit, the oldest archives and rarest tags
are left out (and counted as omitted), so loading the index costs a known, bounded
number of tokens.

Each write is a new monotonic version of the workspace file (RFC 0059) and records
workspace.updated {path, version}. A human-readable MEMORY-INDEX.md sibling is written
alongside; the JSON is normative.

An index version is a derived copy like an archive: when an erasure forgets a tag, a new
version is written without it and the earlier versions that named it are removed
(``remove_versions_naming``), JSON and .md alike; see docs/architecture.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import rfc8785
from sqlalchemy import Integer, any_, bindparam, delete, func, insert, literal, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.rows import live
from memory.events.event_log import PendingEvent
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from memory.tokens import TOKENIZER_NAME, count_tokens
from schemas.base import format_instant
from schemas.capabilities import MEMORY_INDEX_MAX_TOKENS
from schemas.events import EventType, WorkspaceUpdated
from schemas.memory_ref import MemoryRef
from schemas.workflow_io import IndexDigest

INDEX_PATH = "MEMORY-INDEX.json"
INDEX_MD_PATH = "MEMORY-INDEX.md"
INDEX_FORMAT = "memory-index/1"
MAX_TAGS = 50
ENTRIES = tables.entries
ARCHIVES = tables.archives
WORKSPACE_FILES = tables.workspace_files
TIER_COUNTS = tables.tier_counts
TAG_COUNTS = tables.tag_counts
UPDATES = tables.updates
CONFLICTS = tables.conflicts
# The latest supersessions an index names (ids only); their count is always there.
MAX_LISTED_UPDATES = 10


@dataclass(frozen=True, slots=True)
class WrittenFile:
    path: str
    version: int
    sha256: str
    size_tokens: int


def _instant(value: datetime | None) -> str | None:
    return format_instant(value) if value else None


async def _tier_counts(
    connection: AsyncConnection, ref: MemoryRef, now: datetime
) -> dict[str, int]:
    """Live entries per tier: the trigger-maintained counts, less the few entries that
    have expired but are not collected yet (found over the expiry index)."""
    stored = (
        await connection.execute(
            select(TIER_COUNTS.c.tier, TIER_COUNTS.c.entries).where(scoped(TIER_COUNTS, ref))
        )
    ).all()
    expired = (
        await connection.execute(
            select(ENTRIES.c.tier, func.count())
            .where(
                scoped(ENTRIES, ref),
                ENTRIES.c.invalidated_at.is_(None),
                ENTRIES.c.expires_at <= now,
            )
            .group_by(ENTRIES.c.tier)
        )
    ).all()
    counts = {tier: int(n) for tier, n in stored}
    for tier, n in expired:
        counts[tier] = counts.get(tier, 0) - int(n)
    return counts


async def _top_tags(connection: AsyncConnection, ref: MemoryRef, now: datetime) -> list[Any]:
    """The MAX_TAGS most used tags of live entries, from the maintained tag counts."""
    tag = func.unnest(ENTRIES.c.tags).label("tag")
    expired = (
        select(tag, func.count().label("n"))
        .where(
            scoped(ENTRIES, ref), ENTRIES.c.invalidated_at.is_(None), ENTRIES.c.expires_at <= now
        )
        .group_by("tag")
        .subquery("expired")
    )
    live_count = (TAG_COUNTS.c.entries - func.coalesce(expired.c.n, 0)).label("n")
    return list(
        (
            await connection.execute(
                select(TAG_COUNTS.c.tag, live_count)
                .select_from(TAG_COUNTS.outerjoin(expired, expired.c.tag == TAG_COUNTS.c.tag))
                .where(scoped(TAG_COUNTS, ref), live_count > 0)
                .order_by(live_count.desc(), TAG_COUNTS.c.tag)
                .limit(MAX_TAGS)
            )
        ).all()
    )


def _redacted_histogram(
    rows: list[Any], secrets: MemorySecretRegistry | None
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for row in rows:
        tag = write_redacted(row.tag, secrets)
        counts[tag] = counts.get(tag, 0) + int(row.n)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"tag": tag, "count": n} for tag, n in ordered]


async def _gather(
    connection: AsyncConnection,
    ref: MemoryRef,
    now: datetime,
    secrets: MemorySecretRegistry | None = None,
) -> dict[str, Any]:
    tiers = await _tier_counts(connection, ref, now)
    span = (
        await connection.execute(
            select(func.min(ENTRIES.c.created_at), func.max(ENTRIES.c.created_at)).where(
                scoped(ENTRIES, ref), live(now)
            )
        )
    ).one()
    tag_rows = await _top_tags(connection, ref, now)
    archives = (
        await connection.execute(
            select(
                ARCHIVES.c.checksum,
                ARCHIVES.c.output_id,
                ARCHIVES.c.source_count,
                ARCHIVES.c.tokens_used,
                ARCHIVES.c.byte_size,
                ARCHIVES.c.created_at,
                ARCHIVES.c.expires_at,
            )
            .where(scoped(ARCHIVES, ref), ARCHIVES.c.expires_at > now)
            .order_by(ARCHIVES.c.created_at.desc(), ARCHIVES.c.checksum)
        )
    ).all()
    return {
        "changedFacts": await _changed_facts(connection, ref, now),
        "entryCounts": {
            tier: int(tiers.get(tier, 0)) for tier in ("working", "episodic", "semantic")
        },
        "timeRange": {"oldest": _instant(span[0]), "newest": _instant(span[1])},
        "tags": _redacted_histogram(tag_rows, secrets),
        "archives": [
            {
                "checksum": row.checksum,
                "outputId": row.output_id,
                "sourceCount": row.source_count,
                "tokensUsed": row.tokens_used,
                "byteSize": row.byte_size,
                "createdAt": _instant(row.created_at),
                "expiresAt": _instant(row.expires_at),
            }
            for row in archives
        ],
    }


def _same_ref(entries: Any, links: Any) -> Any:
    return entries.c.memory_ref == links.c.memory_ref


async def _changed_facts(
    connection: AsyncConnection, ref: MemoryRef, now: datetime
) -> dict[str, Any]:
    """Facts that changed (memory/search/update_marks.py), by id only: how many live
    entries a later live one supersedes, how many live pairs conflict, and the latest
    supersessions (older -> newer), so a session knows which values are stale before it
    reads any entry."""
    older, newer = ENTRIES.alias("older"), ENTRIES.alias("newer")
    links = (
        select(UPDATES.c.older_id, UPDATES.c.newer_id, UPDATES.c.recorded_at)
        .join(
            older, (older.c.memory_ref == UPDATES.c.memory_ref) & (older.c.id == UPDATES.c.older_id)
        )
        .join(
            newer, (newer.c.memory_ref == UPDATES.c.memory_ref) & (newer.c.id == UPDATES.c.newer_id)
        )
        .where(scoped(UPDATES, ref), live(now, older), live(now, newer))
    )
    rows = (
        await connection.execute(
            links.order_by(UPDATES.c.recorded_at.desc(), UPDATES.c.older_id, UPDATES.c.newer_id)
        )
    ).all()
    first, second = ENTRIES.alias("first"), ENTRIES.alias("second")
    conflicts = (
        await connection.execute(
            select(func.count())
            .select_from(CONFLICTS)
            .join(
                first,
                (first.c.memory_ref == CONFLICTS.c.memory_ref)
                & (first.c.id == CONFLICTS.c.first_id),
            )
            .join(
                second,
                (second.c.memory_ref == CONFLICTS.c.memory_ref)
                & (second.c.id == CONFLICTS.c.second_id),
            )
            .where(scoped(CONFLICTS, ref), live(now, first), live(now, second))
        )
    ).scalar_one()
    return {
        "superseded": len({row.older_id for row in rows}),
        "openConflicts": int(conflicts),
        "latestSupersessions": [
            {"older": row.older_id, "newer": row.newer_id} for row in rows[:MAX_LISTED_UPDATES]
        ],
    }


def _render(document: dict[str, Any]) -> bytes:
    return rfc8785.dumps(document)


def _with_size(document: dict[str, Any]) -> tuple[bytes, int]:
    """Set sizeTokens to the token count of the document that contains it (fixpoint)."""
    size = 0
    for _ in range(8):
        document["sizeTokens"] = size
        body = _render(document)
        actual = count_tokens(body.decode("utf-8"))
        if actual == size:
            return body, size
        size = actual
    # Oscillating by a token: settle on the larger figure, which is an honest bound.
    document["sizeTokens"] = max(size, actual)
    return _render(document), int(document["sizeTokens"])


def build_index_document(ref: MemoryRef, facts: dict[str, Any]) -> tuple[bytes, int]:
    archives = list(facts["archives"])
    tags = list(facts["tags"])
    omitted = {"archives": 0, "tags": 0}
    while True:
        document = {
            "indexFormat": INDEX_FORMAT,
            "memoryRef": str(ref),
            "tokenizer": TOKENIZER_NAME,
            "maxSizeTokens": MEMORY_INDEX_MAX_TOKENS,
            "entryCounts": facts["entryCounts"],
            "changedFacts": facts["changedFacts"],
            "timeRange": facts["timeRange"],
            "archiveCount": len(facts["archives"]),
            "archives": archives,
            "tags": tags,
            "omitted": dict(omitted),
        }
        body, size = _with_size(document)
        if size <= MEMORY_INDEX_MAX_TOKENS or not (archives or tags):
            return body, size
        # Drop what a new session needs least: the rarest tags, then the oldest archives.
        if len(tags) > 10:
            tags.pop()
            omitted["tags"] += 1
        elif archives:
            archives.pop()
            omitted["archives"] += 1
        else:
            tags.pop()
            omitted["tags"] += 1


def counted_tiers(counts: dict[str, int]) -> str:
    """{"working": 0, "episodic": 89} -> "89 episodic, 0 working" (largest first)."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n:,} {tier}" for tier, n in ordered) or "none"


def render_markdown(document: dict[str, Any]) -> bytes:
    lines = [
        f"# Memory index for {document['memoryRef']}",
        "",
        "- entries: " + counted_tiers(document["entryCounts"]),
        f"- time range: {document['timeRange']['oldest']} .. {document['timeRange']['newest']}",
        f"- archives: {document['archiveCount']} (index size {document['sizeTokens']} tokens)",
        f"- changed facts: {document['changedFacts']['superseded']} superseded by a later "
        f"entry, {document['changedFacts']['openConflicts']} open conflicts",
        "",
        "| archive | sources | tokens | created |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| `{a['checksum'][:16]}` | {a['sourceCount']} | {a['tokensUsed']} | {a['createdAt']} |"
        for a in document["archives"]
    ]
    lines += ["", "Top tags: " + ", ".join(f"{t['tag']} ({t['count']})" for t in document["tags"])]
    return ("\n".join(lines) + "\n").encode("utf-8")


async def write_workspace_file(
    connection: AsyncConnection,
    ref: MemoryRef,
    path: str,
    body: bytes,
    now: datetime,
    size_tokens: int,
) -> tuple[WrittenFile, PendingEvent]:
    sha = hashlib.sha256(body).hexdigest()
    # The next version and the row in one statement (every dream writes two files).
    next_version = select(
        literal(ref.tenant, WORKSPACE_FILES.c.tenant.type),
        literal(str(ref), WORKSPACE_FILES.c.memory_ref.type),
        literal(path, WORKSPACE_FILES.c.path.type),
        func.coalesce(func.max(WORKSPACE_FILES.c.version), 0) + 1,
        literal(body, WORKSPACE_FILES.c.body.type),
        literal(sha, WORKSPACE_FILES.c.sha256.type),
        literal(now, WORKSPACE_FILES.c.created_at.type),
    ).where(scoped(WORKSPACE_FILES, ref), WORKSPACE_FILES.c.path == path)
    columns = ["tenant", "memory_ref", "path", "version", "body", "sha256", "created_at"]
    statement = (
        insert(WORKSPACE_FILES)
        .from_select(columns, next_version)
        .returning(WORKSPACE_FILES.c.version)
    )
    version = int((await connection.execute(statement)).scalar_one())
    event = PendingEvent(EventType.WORKSPACE_UPDATED, WorkspaceUpdated(path=path, version=version))
    return WrittenFile(path, version, sha, size_tokens), event


async def refresh_index(
    connection: AsyncConnection,
    ref: MemoryRef,
    now: datetime,
    secrets: MemorySecretRegistry | None = None,
) -> tuple[WrittenFile, list[PendingEvent]]:
    """Write new versions of MEMORY-INDEX.json and .md; caller commits and logs events.
    Tag names pass the run's SR-1 secrets (a tag stored before its secret was
    registered is shown redacted)."""
    body, size = build_index_document(ref, await _gather(connection, ref, now, secrets))
    written, json_event = await write_workspace_file(connection, ref, INDEX_PATH, body, now, size)
    markdown = render_markdown(json.loads(body))
    _, md_event = await write_workspace_file(
        connection, ref, INDEX_MD_PATH, markdown, now, count_tokens(markdown.decode("utf-8"))
    )
    return written, [json_event, md_event]


async def index_exists(connection: AsyncConnection, ref: MemoryRef) -> bool:
    found = await connection.execute(
        select(WORKSPACE_FILES.c.version)
        .where(scoped(WORKSPACE_FILES, ref), WORKSPACE_FILES.c.path == INDEX_PATH)
        .limit(1)
    )
    return found.first() is not None


# Above this many names, a LIKE per name and version costs more than reading the
# versions and looking the names up in a set.
_PREFILTER_NAMES = 64


def _like_any(names: Collection[str]) -> list[str]:
    """LIKE patterns finding a name in the JSON as written there (JSON-escaped)."""
    forms = {json.dumps(name, ensure_ascii=False)[1:-1] for name in names}
    escaped = (f.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for f in forms)
    return sorted(f"%{form}%" for form in escaped)


async def remove_versions_naming(
    connection: AsyncConnection, ref: MemoryRef, names: Collection[str], before_version: int
) -> int:
    """Delete the MEMORY-INDEX versions older than ``before_version`` whose JSON lists
    one of ``names`` as a tag (not merely contains the string, say inside a longer tag),
    and their .md siblings: ``refresh_index`` writes both with the same version number,
    and the .md lists only what its JSON lists. Returns the number of files removed."""
    if not names:
        return 0
    query = select(WORKSPACE_FILES.c.version, WORKSPACE_FILES.c.body).where(
        scoped(WORKSPACE_FILES, ref),
        WORKSPACE_FILES.c.path == INDEX_PATH,
        WORKSPACE_FILES.c.version < before_version,
    )
    if len(names) <= _PREFILTER_NAMES:
        body = func.convert_from(WORKSPACE_FILES.c.body, "UTF8")
        query = query.where(body.like(any_(texts("patterns", _like_any(names)))))
    wanted = set(names)
    versions = [
        row.version
        for row in (await connection.execute(query)).all()
        if any(t.get("tag") in wanted for t in json.loads(row.body).get("tags", []))
    ]
    if not versions:
        return 0
    removed = await connection.execute(
        delete(WORKSPACE_FILES).where(
            scoped(WORKSPACE_FILES, ref),
            WORKSPACE_FILES.c.path == any_(texts("paths", [INDEX_PATH, INDEX_MD_PATH])),
            WORKSPACE_FILES.c.version
            == any_(bindparam("versions", versions, type_=ARRAY(Integer))),
        )
    )
    return int(removed.rowcount or 0)


async def read_workspace_file(
    connection: AsyncConnection, ref: MemoryRef, path: str, version: int | None = None
) -> tuple[int, bytes] | None:
    query = select(WORKSPACE_FILES.c.version, WORKSPACE_FILES.c.body).where(
        scoped(WORKSPACE_FILES, ref), WORKSPACE_FILES.c.path == path
    )
    query = (
        query.where(WORKSPACE_FILES.c.version == version)
        if version is not None
        else query.order_by(WORKSPACE_FILES.c.version.desc()).limit(1)
    )
    row = (await connection.execute(query)).first()
    return (int(row.version), bytes(row.body)) if row else None


async def index_digest(connection: AsyncConnection, ref: MemoryRef) -> IndexDigest:
    """What a session learns from the latest MEMORY-INDEX.json, without its text."""
    found = await read_workspace_file(connection, ref, INDEX_PATH)
    if found is None:
        return IndexDigest(present=False)
    version, body = found
    document = json.loads(body)
    return IndexDigest(
        present=True,
        version=version,
        sha256=hashlib.sha256(body).hexdigest(),
        size_tokens=int(document["sizeTokens"]),
        archive_count=int(document["archiveCount"]),
        entry_count=sum(int(n) for n in document["entryCounts"].values()),
    )
