"""PostgresMemoryStore: the MemoryAdapter on PostgreSQL (SQLAlchemy 2 async + asyncpg).

Three rules shape every method:
- CTI-1: the memoryRef is parsed once by schemas.memory_ref; reads with a malformed ref return
  []/None, writes raise InvalidMemoryRef; every statement is scoped by tenant + ref.
- SR-1: every write of content, tags and metadata goes through memory.redaction.write_redacted
  (memory/field_redaction.py); identifiers holding a registered secret are refused.
- TTL: every read filters by memory.rows.live(now), so an expired entry never surfaces.
Each write and the events describing it commit in one transaction.

Every value from a caller passes the input gate below before any SQL runs: a write with a
value PostgreSQL cannot hold raises InvalidInput naming the field and the rule; a read
with an id or key no valid entry can have finds nothing. No driver error escapes for bad
input, so none can quote the value.
"""

from __future__ import annotations

import builtins
import hashlib
import secrets as _random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, StringConstraints, TypeAdapter, ValidationError
from sqlalchemy import ColumnElement, case, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from memory import tables
from memory.adapter import HostMemoryStore
from memory.capacity import evict_over_capacity, lock_tier
from memory.commitments.store import CommitmentStore
from memory.consolidation.apply import consolidate
from memory.consolidation.undo import open_conflicts, superseded_entries, undo_pass
from memory.distillation import distill
from memory.distiller import Distiller
from memory.erasure import ErasurePass, erase_in_ref
from memory.erasure import report as erasure_report
from memory.event_log import PendingEvent, append_events, read_events, removal_event
from memory.field_redaction import (
    redact_metadata,
    redact_tags,
    refuse_secret,
    refuse_secret_in_attribution,
)
from memory.lineage import DISTILLED, derived_from, marked_under
from memory.memory_index import index_digest
from memory.redaction import MemorySecretRegistry, write_redacted
from memory.removal_reason import declare_removal_reason
from memory.retention import collect_garbage
from memory.rows import live, scoped, to_host_entry
from memory.snapshots import (
    SnapshotItem,
    create_snapshot,
    get_snapshot_info,
    read_snapshot_items,
)
from schemas.base import floor_ms
from schemas.consolidation import (
    ConflictRecord,
    ConsolidateMemoryRequest,
    ConsolidationResult,
    SupersededEntry,
    UndoReport,
)
from schemas.erasure import ErasureReport, LineageLink
from schemas.errors import (
    ContentTooLarge,
    DuplicateKey,
    EntryNotFound,
    InvalidInput,
    PassNotFound,
    VersionConflict,
)
from schemas.events import EventRecord, EventType, MemoryLifecycle, MemoryWritten
from schemas.input_rules import CHECK_TEXT, invalid_input
from schemas.memory_entry import (
    MAX_CONTENT_BYTES,
    MAX_LIST_LIMIT,
    Attribution,
    EntryChanges,
    EntryId,
    ForgetRequest,
    HostMemoryEntry,
    MemoryEntry,
    MemoryListOptions,
    MemoryQuery,
    Name,
    NewMemoryEntry,
    Tag,
    Tier,
)
from schemas.memory_ref import MemoryRef, parse_memory_ref, try_parse_memory_ref
from schemas.snapshot import SnapshotInfo
from schemas.workflow_io import DistillationResult, DistillMemoryRequest, GarbageReport, IndexDigest

E = tables.entries
L = tables.lineage
Progress = Callable[[dict[str, object]], None]
DEFAULT_LIST_LIMIT = 100
# What a deletion returns to describe each removed entry in its lifecycle event.
_REMOVED = (E.c.memory_ref, E.c.id, E.c.tier, E.c.namespace, E.c.key, E.c.version)


def utc_now() -> datetime:
    return floor_ms(datetime.now(UTC))


def new_entry_id() -> str:
    """Sortable, unguessable ids: 48-bit millisecond time + 80 random bits."""
    return f"m{int(time.time() * 1000):012x}{_random.token_hex(10)}"


@dataclass(frozen=True)
class StoreLimits:
    max_content_bytes: int = MAX_CONTENT_BYTES
    # RFC-0015: working and episodic tiers are capped per agent (default 1,000 entries);
    # semantic memory has no automatic capacity limit.
    capacity: Mapping[Tier, int] = field(
        default_factory=lambda: {Tier.WORKING: 1000, Tier.EPISODIC: 1000}
    )
    # RFC-0015 §9.4: a full episodic tier evicts (LRU); a full working tier rejects the
    # write (429 Memory Capacity Exceeded) and makes room only from expired entries.
    evicting: frozenset[Tier] = frozenset({Tier.EPISODIC})


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- input gate
#
# Every value a caller hands the store passes through these helpers before any SQL runs,
# so a bad value becomes InvalidInput naming the field and the rule (never the value), and
# never a driver error that may quote the statement's data. Models are re-validated
# because a caller may have built them with model_construct or mutated them.

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
_ENTRY_ID: TypeAdapter[str] = TypeAdapter(EntryId)
_NAME: TypeAdapter[str] = TypeAdapter(Name)
_PASS_ID: TypeAdapter[str] = TypeAdapter(
    Annotated[str, StringConstraints(pattern=r"^cp-[0-9a-f]{20}$")]
)
_TAG: TypeAdapter[str] = TypeAdapter(Tag)
# Snapshot ids and event types have no grammar of their own: any text PostgreSQL can hold.
_TEXT_ID: TypeAdapter[str] = TypeAdapter(
    Annotated[str, StringConstraints(min_length=1, max_length=512), CHECK_TEXT]
)
_TIER: TypeAdapter[Tier] = TypeAdapter(Tier)
# The fields a read matches entries by: a value no entry can hold there finds nothing.
_LIST_MATCH = frozenset({"tag"})
_QUERY_MATCH = frozenset(
    {"tagsAll", "tagsAny", "tier", "namespace", "subject", "key", "namespacePrefix"}
)


def _checked(model: type[M], value: object) -> M:
    """``value`` validated as ``model``, or InvalidInput naming the first broken rule."""
    data = value.__dict__ if isinstance(value, BaseModel) else value
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise invalid_input(error, model) from None


def _checked_value(adapter: TypeAdapter[T], value: object, field: str, strict: bool = True) -> T:
    try:
        return adapter.validate_python(value, strict=strict)
    except ValidationError as error:
        raise invalid_input(error, field=field) from None


def _possible(adapter: TypeAdapter[str], value: object) -> bool:
    """Could a stored entry hold ``value`` (an id, a namespace, a key)? Reads answer
    "nothing there" for a value no valid entry can hold instead of raising."""
    try:
        adapter.validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def _read_filter(model: type[M], value: object, matched_by: frozenset[str]) -> M | None:
    """A read's options: None when a field entries are matched by holds a value no entry
    can hold (the read finds nothing); any other bad value (a limit) is InvalidInput."""
    try:
        return _checked(model, value)
    except InvalidInput as error:
        if error.field in matched_by:
            return None
        raise


def _read_query(query: object) -> MemoryQuery | None:
    """A query's filters, or None when it can match nothing (see _read_filter). tagsAny is
    an OR: a tag no entry can carry drops out, and only when none is left does the
    query match nothing (an empty tagsAny would mean "any tags at all")."""
    data = dict(query.__dict__) if isinstance(query, BaseModel) else query
    if isinstance(data, dict) and isinstance(data.get("tags_any"), tuple | list):
        possible = tuple(tag for tag in data["tags_any"] if _possible(_TAG, tag))
        if data["tags_any"] and not possible:
            return None
        data["tags_any"] = possible
    return _read_filter(MemoryQuery, data, _QUERY_MATCH)


def _checked_int(field: str, value: object, low: int, high: int) -> int:
    # bool is an int subclass; a flag passed as a count is a caller bug, not a count.
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidInput(field, f"must be an integer from {low} to {high}")
    return value


class PostgresMemoryStore:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        limits: StoreLimits | None = None,
        clock: Callable[[], datetime] = utc_now,
        id_factory: Callable[[], str] = new_entry_id,
    ) -> None:
        self.engine = engine
        # Single-statement reads (and the get-with-touch CTE, atomic on its own) skip the
        # BEGIN/COMMIT round trips a transaction would add.
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.limits = limits or StoreLimits()
        self._clock = clock
        self._new_id = id_factory
        # Inferred commitments over the same engine and clock (memory/commitments/).
        self.commitments = CommitmentStore(engine, clock)

    def now(self) -> datetime:
        return self._clock()

    # ------------------------------------------------------------------ openwop reads

    async def list(
        self, memory_ref: str, options: MemoryListOptions | None = None
    ) -> builtins.list[MemoryEntry]:
        ref = try_parse_memory_ref(memory_ref)
        checked = _read_filter(MemoryListOptions, options or MemoryListOptions(), _LIST_MATCH)
        if ref is None or checked is None:
            return []
        options = checked
        limit = min(options.limit or DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT)
        query = (
            select(E.c.id, E.c.content, E.c.tags, E.c.created_at, E.c.expires_at)
            .where(scoped(ref), live(self.now()))
            .order_by(E.c.created_at.desc(), E.c.id.desc())
            .limit(limit)
        )
        if options.tag is not None:
            query = query.where(E.c.tags.contains([options.tag]))
        async with self._autocommit.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            MemoryEntry(
                id=row.id,
                content=row.content,
                tags=tuple(row.tags),
                created_at=row.created_at,
                expires_at=row.expires_at,
            )
            for row in rows
        ]

    async def get(self, memory_ref: str, memory_id: str) -> MemoryEntry | None:
        entry = await self.get_entry(memory_ref, memory_id)
        return entry.to_memory_entry() if entry else None

    # ------------------------------------------------------------------ host reads

    async def get_entry(
        self, memory_ref: str, memory_id: str, *, touch: bool = True
    ) -> HostMemoryEntry | None:
        """Read one entry; ``touch`` records the access for LRU eviction."""
        ref = try_parse_memory_ref(memory_ref)
        if ref is None or not _possible(_ENTRY_ID, memory_id):
            return None
        now = self.now()
        hit = select(E).where(scoped(ref), E.c.id == memory_id, live(now))
        async with self._autocommit.connect() as connection:
            row = (await connection.execute(hit)).first()
            # Record the access only for capacity-limited tiers, the only ones LRU
            # eviction reads: touching semantic entries would turn every read into a
            # write of all the row's indexes. (Measured: cheaper than one CTE doing both.)
            if row is not None and touch and row.tier in {t.value for t in self.limits.capacity}:
                await connection.execute(
                    update(E).where(scoped(ref), E.c.id == memory_id).values(last_accessed_at=now)
                )
        return to_host_entry(row) if row else None

    async def get_by_key(self, memory_ref: str, namespace: str, key: str) -> HostMemoryEntry | None:
        ref = try_parse_memory_ref(memory_ref)
        if ref is None or not (_possible(_NAME, namespace) and _possible(_NAME, key)):
            return None
        query = select(E).where(
            scoped(ref), E.c.namespace == namespace, E.c.key == key, live(self.now())
        )
        async with self._autocommit.connect() as connection:
            row = (await connection.execute(query)).first()
        return to_host_entry(row) if row else None

    def _query_filter(
        self, ref: MemoryRef, query: MemoryQuery
    ) -> builtins.list[ColumnElement[bool]]:
        clauses = [scoped(ref), live(self.now())]
        if query.tags_all:
            clauses.append(E.c.tags.contains(list(query.tags_all)))
        if query.tags_any:
            clauses.append(E.c.tags.overlap(list(query.tags_any)))
        if query.tier is not None:
            clauses.append(E.c.tier == query.tier.value)
        if query.namespace is not None:
            clauses.append(E.c.namespace == query.namespace)
        if query.pinned is not None:
            clauses.append(E.c.pinned.is_(query.pinned))
        if query.subject is not None:
            clauses.append(E.c.subject == query.subject)
        if query.key is not None:
            clauses.append(E.c.key == query.key)
        if query.namespace_prefix is not None:
            clauses.append(E.c.namespace.startswith(query.namespace_prefix, autoescape=True))
        if query.updated_after is not None:
            clauses.append(E.c.updated_at > query.updated_after)
        if query.updated_before is not None:
            clauses.append(E.c.updated_at < query.updated_before)
        return clauses

    async def query(self, memory_ref: str, query: MemoryQuery) -> builtins.list[HostMemoryEntry]:
        """OpenIntent tag query (tagsAll AND, tagsAny OR), newest first."""
        ref = try_parse_memory_ref(memory_ref)
        checked = _read_query(query)
        if ref is None or checked is None:
            return []
        query = checked
        statement = (
            select(E)
            .where(*self._query_filter(ref, query))
            .order_by(E.c.created_at.desc(), E.c.id.desc())
            .limit(query.limit)
            .offset(query.offset)
        )
        async with self._autocommit.connect() as connection:
            rows = (await connection.execute(statement)).all()
        return [to_host_entry(row) for row in rows]

    async def count(self, memory_ref: str, query: MemoryQuery | None = None) -> int:
        ref = try_parse_memory_ref(memory_ref)
        checked = _read_query(query or MemoryQuery())
        if ref is None or checked is None:
            return 0
        statement = select(func.count()).where(*self._query_filter(ref, checked))
        async with self._autocommit.connect() as connection:
            return int((await connection.execute(statement)).scalar_one())

    # ------------------------------------------------------------------ writes

    def _checked_content(self, content: str, registry: MemorySecretRegistry | None) -> str:
        # NUL and surrogates were refused by the model rules (schemas/memory_entry.py).
        limit = self.limits.max_content_bytes
        size = len(content.encode("utf-8"))
        if size > limit:
            raise ContentTooLarge(limit, size)
        redacted = write_redacted(content, registry)
        redacted_size = len(redacted.encode("utf-8"))
        if redacted_size > limit:
            raise ContentTooLarge(limit, redacted_size)
        return redacted

    def _check_expiry(self, expires_at: datetime | None, now: datetime) -> None:
        if expires_at is not None and expires_at <= now:
            raise InvalidInput("expiresAt", "must be in the future")

    def _new_row(
        self,
        ref: MemoryRef,
        entry: NewMemoryEntry,
        registry: MemorySecretRegistry | None,
        attribution: Attribution | None,
        now: datetime,
    ) -> dict[str, Any]:
        if (entry.namespace is None) != (entry.key is None):
            raise InvalidInput("key", "namespace and key must be given together")
        self._check_expiry(entry.expires_at, now)
        for name, value in (
            ("id", entry.id),
            ("namespace", entry.namespace),
            ("key", entry.key),
            ("subject", entry.subject),
        ):
            refuse_secret(name, value, registry)
        content = self._checked_content(entry.content, registry)
        return {
            "tenant": ref.tenant,
            "memory_ref": str(ref),
            "id": entry.id or self._new_id(),
            "content": content,
            "content_sha256": _sha256(content),
            "tags": redact_tags(entry.tags, registry),
            "tier": entry.tier.value,
            "namespace": entry.namespace,
            "key": entry.key,
            "version": 1,
            "pinned": entry.pinned,
            "priority": entry.priority.rank,
            "subject": entry.subject,
            "metadata": redact_metadata(entry.metadata, registry),
            "attribution": attribution.to_wire() if attribution else None,
            "created_at": now,
            "updated_at": now,
            "last_accessed_at": now,
            "expires_at": entry.expires_at,
        }

    @staticmethod
    def _write_events(
        ref: MemoryRef,
        row: Mapping[str, Any],
        event_type: EventType,
        attribution: Attribution | None,
        previous_version: int | None = None,
    ) -> builtins.list[PendingEvent]:
        tags = tuple(row["tags"])
        return [
            PendingEvent(
                event_type,
                MemoryLifecycle(
                    memory_ref=str(ref),
                    memory_id=row["id"],
                    tier=Tier(row["tier"]),
                    namespace=row["namespace"],
                    key=row["key"],
                    version=row["version"],
                    previous_version=previous_version,
                    tags=tags,
                ),
            ),
            PendingEvent(
                EventType.MEMORY_WRITTEN,
                MemoryWritten(
                    memory_ref=str(ref),
                    memory_id=row["id"],
                    node_id=attribution.node_id if attribution else None,
                    agent_id=attribution.agent_id if attribution else None,
                    tags=tags,
                ),
            ),
        ]

    async def put(
        self,
        memory_ref: str,
        entry: NewMemoryEntry,
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry:
        (stored,) = await self.put_many(
            memory_ref, [entry], secrets=secrets, attribution=attribution
        )
        return stored

    async def put_many(
        self,
        memory_ref: str,
        entries: Sequence[NewMemoryEntry],
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> builtins.list[HostMemoryEntry]:
        """Insert entries atomically: all of them (with their events) or none."""
        ref = parse_memory_ref(memory_ref)
        entries = [_checked(NewMemoryEntry, entry) for entry in entries]
        if attribution is not None:
            attribution = _checked(Attribution, attribution)
            refuse_secret_in_attribution(attribution, secrets)
        now = self.now()
        rows = [self._new_row(ref, entry, secrets, attribution, now) for entry in entries]
        if not rows:
            return []
        ids = [row["id"] for row in rows]
        if len(set(ids)) != len(ids):
            raise InvalidInput("id", "must be unique within one batch")
        pending: builtins.list[PendingEvent] = []
        for row in rows:
            pending.extend(self._write_events(ref, row, EventType.MEMORY_CREATED, attribution))
        capped_tiers = sorted(
            {Tier(row["tier"]) for row in rows} & set(self.limits.capacity), key=str
        )
        async with self.engine.begin() as connection:
            for tier in capped_tiers:
                await lock_tier(connection, ref, tier)
            await self._insert_rows(connection, rows)
            for tier in capped_tiers:
                pending.extend(
                    await evict_over_capacity(
                        connection,
                        ref,
                        tier,
                        self.limits.capacity[tier],
                        now,
                        ids,
                        evict_live=tier in self.limits.evicting,
                    )
                )
            await append_events(connection, ref, pending, now)
        return [to_host_entry(_RowView(row)) for row in rows]

    @staticmethod
    async def _insert_rows(
        connection: AsyncConnection, rows: builtins.list[dict[str, Any]]
    ) -> None:
        try:
            async with connection.begin_nested():
                await connection.execute(insert(E), rows)
        except IntegrityError as error:
            # Name the field, never the content. The savepoint keeps the outer
            # transaction usable so the caller's rollback is clean.
            if "ix_entries_ref_key" in str(error.orig):
                raise DuplicateKey("key", "(namespace, key)") from None
            raise DuplicateKey("id", "entry id") from None

    async def update(
        self,
        memory_ref: str,
        memory_id: str,
        changes: EntryChanges,
        *,
        expected_version: int,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry:
        """Optimistic-concurrency update: succeeds only at ``expected_version``."""
        ref = parse_memory_ref(memory_ref)
        memory_id = _checked_value(_ENTRY_ID, memory_id, "id")
        expected_version = _checked_int("expectedVersion", expected_version, 1, MAX_INT32)
        changes = _checked(EntryChanges, changes)
        if attribution is not None:
            attribution = _checked(Attribution, attribution)
            refuse_secret_in_attribution(attribution, secrets)
        now = self.now()
        values: dict[str, Any] = {
            "version": E.c.version + 1,
            "updated_at": now,
            "last_accessed_at": now,
        }
        if changes.content is not None:
            content = self._checked_content(changes.content, secrets)
            values["content"] = content
            values["content_sha256"] = _sha256(content)
            # Edited content has not been distilled: clearing the consumed mark puts the
            # entry back in the distillation queue. Re-sending identical content is no edit.
            unchanged = E.c.content_sha256 == values["content_sha256"]
            values["distilled_into"] = case((unchanged, E.c.distilled_into), else_=None)
            # Its size changed too: a parked "too large for the budget" mark is stale.
            values["distill_cost"] = case((unchanged, E.c.distill_cost), else_=None)
        if changes.tags is not None:
            values["tags"] = redact_tags(changes.tags, secrets)
        if changes.pinned is not None:
            values["pinned"] = changes.pinned
        if changes.priority is not None:
            values["priority"] = changes.priority.rank
        if changes.metadata is not None:
            values["metadata"] = redact_metadata(changes.metadata, secrets)
        if changes.expires_at is not None:
            self._check_expiry(changes.expires_at, now)
            values["expires_at"] = changes.expires_at
        if attribution is not None:
            values["attribution"] = attribution.to_wire()
        where = (scoped(ref), E.c.id == memory_id, live(now))
        async with self.engine.begin() as connection:
            row = (
                await connection.execute(
                    update(E)
                    .where(*where, E.c.version == expected_version)
                    .values(**values)
                    .returning(*E.c)
                )
            ).first()
            if row is None:
                current = (
                    await connection.execute(select(E.c.version).where(*where))
                ).scalar_one_or_none()
                if current is None:
                    raise EntryNotFound(memory_id)
                raise VersionConflict(memory_id, expected_version, current)
            await append_events(
                connection,
                ref,
                self._write_events(
                    ref, dict(row._mapping), EventType.MEMORY_UPDATED, attribution, expected_version
                ),
                now,
            )
        return to_host_entry(row)

    async def delete(self, memory_ref: str, memory_id: str) -> bool:
        ref = parse_memory_ref(memory_ref)
        if not _possible(_ENTRY_ID, memory_id):
            return False
        async with self._autocommit.connect() as connection:
            hidden = await marked_under(connection, ref, [memory_id])
        # The visible entry and the copies consolidation merged into it, which would
        # otherwise stay hidden forever (or come back on undo).
        removed = await self._delete_where(ref, [E.c.id.in_([memory_id, *hidden])], reason="delete")
        return removed >= 1

    async def forget(self, memory_ref: str, request: ForgetRequest) -> int:
        """Erase by ids, tag or subject (RFC 0080 retention.forget), every derived copy
        included (see erase); returns how many entries matched."""
        return (await self.erase(memory_ref, request)).entries

    async def erase(
        self,
        memory_ref: str,
        request: ForgetRequest,
        *,
        dry_run: bool = False,
        secrets: MemorySecretRegistry | None = None,
    ) -> ErasureReport:
        """Forget, reaching every copy in one transaction (memory/erasure.py): the
        entries, the archives and distilled entries holding their text (rewritten, or
        removed when nothing else remains) and snapshots holding them. ``dry_run``
        computes the same report and rolls back."""
        ref = parse_memory_ref(memory_ref)
        request = _checked(ForgetRequest, request)
        if not (request.ids or request.tag or request.subject):
            raise InvalidInput("forget", "give at least one of ids, tag or subject")
        if request.tenant_wide and (request.ids or request.tag or not request.subject):
            raise InvalidInput("tenantWide", "applies to a subject forget only")
        clauses: builtins.list[ColumnElement[bool]] = []
        if request.ids:
            clauses.append(E.c.id.in_(list(request.ids)))
        if request.tag:
            clauses.append(E.c.tags.contains([request.tag]))
        if request.subject:
            clauses.append(E.c.subject == request.subject)
        scope = (E.c.tenant == ref.tenant) if request.tenant_wide else scoped(ref)
        return await self._erase(str(ref), [scope, *clauses], "forget", dry_run, secrets)

    async def _erase(
        self,
        memory_ref: str,
        clauses: Sequence[ColumnElement[bool]],
        reason: str,
        dry_run: bool,
        secrets: MemorySecretRegistry | None,
    ) -> ErasureReport:
        now = self.now()
        passes: builtins.list[ErasurePass] = []
        try:
            async with self.engine.begin() as connection:
                await declare_removal_reason(connection, reason)
                matched = (
                    await connection.execute(
                        select(E.c.memory_ref, E.c.id)
                        .where(*clauses)
                        .order_by(E.c.memory_ref, E.c.id)
                    )
                ).all()
                by_ref: dict[str, builtins.list[str]] = {}
                for row in matched:
                    by_ref.setdefault(row.memory_ref, []).append(row.id)
                for raw_ref, ids in sorted(by_ref.items()):
                    target = parse_memory_ref(raw_ref)
                    # The hidden copies consolidation kept of what these entries say.
                    ids = sorted({*ids, *await marked_under(connection, target, ids)})
                    # Serialised with distillation commits of the same memoryRef.
                    await connection.execute(
                        select(
                            func.pg_advisory_xact_lock(
                                func.hashtextextended(f"distill|{target}", 0)
                            )
                        )
                    )
                    state = ErasurePass(target, now, reason, secrets, ids)
                    await erase_in_ref(connection, state)
                    passes.append(state)
                if dry_run:
                    raise _DryRun()
        except _DryRun:
            pass
        return erasure_report(memory_ref, dry_run, passes)

    async def expire(
        self, memory_ref: str | MemoryRef, *, secrets: MemorySecretRegistry | None = None
    ) -> ErasureReport:
        """TTL reaches derived data: erase the ref's expired entries like forgotten ones
        (derived copies rewritten without them). Distilled entries are not targets: they
        expire with their earliest source and are rewritten here, not dropped."""
        ref = parse_memory_ref(memory_ref)
        distilled = select(L.c.artifact_id).where(
            L.c.memory_ref == str(ref), L.c.artifact_kind == DISTILLED
        )
        clauses = [scoped(ref), E.c.expires_at <= self.now(), E.c.id.not_in(distilled)]
        return await self._erase(str(ref), clauses, "ttl", False, secrets)

    async def lineage(self, memory_ref: str, entry_id: str) -> builtins.list[LineageLink]:
        """Where an entry's text went: every derived artifact, transitively (audit)."""
        ref = try_parse_memory_ref(memory_ref)
        # An id no entry can have (NUL, a lone surrogate) has no lineage; it must not
        # reach the driver, whose error would quote it.
        if ref is None or not _possible(_TEXT_ID, entry_id):
            return []
        async with self._autocommit.connect() as connection:
            return await derived_from(connection, ref, [entry_id])

    async def archive_working_memory(self, memory_ref: str) -> int:
        """Task end (RFC-0015 §2.1): record memory.archived for every working-tier entry
        of the ref and clear them. Events carry ids and versions, not values."""
        ref = parse_memory_ref(memory_ref)
        return await self._delete_where(
            ref,
            [E.c.tier == Tier.WORKING.value],
            reason="task-complete",
            event_type=EventType.MEMORY_ARCHIVED,
        )

    async def _delete_where(
        self,
        ref: MemoryRef,
        clauses: Sequence[ColumnElement[bool]],
        *,
        reason: str,
        tenant_wide: bool = False,
        event_type: EventType = EventType.MEMORY_DELETED,
    ) -> int:
        scope = (E.c.tenant == ref.tenant) if tenant_wide else scoped(ref)
        now = self.now()
        async with self.engine.begin() as connection:
            removed = (
                await connection.execute(delete(E).where(scope, *clauses).returning(*_REMOVED))
            ).all()
            await self._record_removals(connection, removed, event_type, reason, now)
        return len(removed)

    @staticmethod
    async def _record_removals(
        connection: AsyncConnection,
        removed: Sequence[Any],
        event_type: EventType,
        reason: str,
        now: datetime,
    ) -> None:
        by_ref: dict[str, builtins.list[PendingEvent]] = {}
        for row in removed:
            by_ref.setdefault(row.memory_ref, []).append(removal_event(row, event_type, reason))
        for raw_ref, pending in sorted(by_ref.items()):
            await append_events(connection, parse_memory_ref(raw_ref), pending, now)

    async def gc_expired(self, memory_ref: str | None = None, *, batch_size: int = 5000) -> int:
        """Delete rows past expiresAt and record memory.expired for each; returns count.

        Reads never depend on this (they filter by expiry); GC only reclaims space."""
        ref = parse_memory_ref(memory_ref) if memory_ref is not None else None
        batch_size = _checked_int("batchSize", batch_size, 1, MAX_INT32)
        total = 0
        while True:
            now = self.now()
            victims = select(E.c.memory_ref, E.c.id).where(E.c.expires_at <= now)
            if ref is not None:
                victims = victims.where(scoped(ref))
            victims = victims.limit(batch_size)
            async with self.engine.begin() as connection:
                await declare_removal_reason(connection, "ttl")
                removed = (
                    await connection.execute(
                        delete(E)
                        .where(func.row(E.c.memory_ref, E.c.id).in_(victims))
                        .returning(*_REMOVED)
                    )
                ).all()
                await self._record_removals(
                    connection, removed, EventType.MEMORY_EXPIRED, "ttl", now
                )
            total += len(removed)
            if len(removed) < batch_size:
                return total

    # ------------------------------------------------------------------ snapshots, events

    async def snapshot(
        self,
        memory_ref: str,
        snapshot_id: str,
        *,
        tiers: Sequence[Tier] | None = None,
        entry_ids: Sequence[str] | None = None,
    ) -> SnapshotInfo:
        """Freeze the live entries (optionally only some tiers or ids) under snapshot_id."""
        ref = parse_memory_ref(memory_ref)
        snapshot_id = _checked_value(_TEXT_ID, snapshot_id, "snapshotId")
        if tiers is not None:
            tiers = [_checked_value(_TIER, tier, "tiers", strict=False) for tier in tiers]
        if entry_ids is not None:
            entry_ids = [_checked_value(_ENTRY_ID, entry_id, "entryIds") for entry_id in entry_ids]
        async with self.engine.begin() as connection:
            return await create_snapshot(
                connection,
                ref,
                snapshot_id,
                self.now(),
                tiers=tiers,
                entry_ids=entry_ids,
            )

    async def snapshot_info(self, memory_ref: str, snapshot_id: str) -> SnapshotInfo | None:
        ref = try_parse_memory_ref(memory_ref)
        if ref is None or not _possible(_TEXT_ID, snapshot_id):
            return None
        async with self._autocommit.connect() as connection:
            return await get_snapshot_info(connection, ref, snapshot_id)

    async def read_snapshot(
        self, memory_ref: str, snapshot_id: str, *, start: int = 0, limit: int = 1000
    ) -> builtins.list[SnapshotItem]:
        ref = try_parse_memory_ref(memory_ref)
        start = _checked_int("start", start, 0, MAX_INT32)
        limit = _checked_int("limit", limit, 1, MAX_INT32)
        if ref is None or not _possible(_TEXT_ID, snapshot_id):
            return []
        async with self._autocommit.connect() as connection:
            return await read_snapshot_items(connection, ref, snapshot_id, start=start, limit=limit)

    async def events(
        self,
        memory_ref: str,
        *,
        after_seq: int = 0,
        limit: int = 1000,
        types: Sequence[str] | None = None,
    ) -> builtins.list[EventRecord]:
        ref = try_parse_memory_ref(memory_ref)
        after_seq = _checked_int("afterSeq", after_seq, 0, MAX_INT64)
        limit = _checked_int("limit", limit, 1, MAX_INT32)
        if ref is None or (types is not None and not all(_possible(_TEXT_ID, t) for t in types)):
            return []
        async with self._autocommit.connect() as connection:
            return await read_events(connection, ref, after_seq=after_seq, limit=limit, types=types)

    # ------------------------------------------------------------------ maintenance

    async def distill(
        self,
        request: DistillMemoryRequest,
        *,
        registry: MemorySecretRegistry | None = None,
        distiller: Distiller | None = None,
        progress: Progress = lambda _: None,
    ) -> DistillationResult:
        return await distill(
            self, request, registry=registry, distiller=distiller, progress=progress
        )

    async def archive_checksum(self, memory_ref: str, output_id: str) -> str | None:
        """The checksum of the live archive whose distilled entry is ``output_id``."""
        ref = try_parse_memory_ref(memory_ref)
        if ref is None or not _possible(_TEXT_ID, output_id):
            return None
        A = tables.archives
        query = select(A.c.checksum).where(
            A.c.tenant == ref.tenant, A.c.memory_ref == str(ref), A.c.output_id == output_id
        )
        async with self._autocommit.connect() as connection:
            found = (await connection.execute(query)).scalar_one_or_none()
        return str(found) if found is not None else None

    async def collect_garbage(
        self, memory_ref: str | MemoryRef, *, secrets: MemorySecretRegistry | None = None
    ) -> GarbageReport:
        return await collect_garbage(self, memory_ref, secrets=secrets)

    async def index_digest(self, memory_ref: str | MemoryRef) -> IndexDigest:
        async with self._autocommit.connect() as connection:
            return await index_digest(connection, parse_memory_ref(memory_ref))

    # ------------------------------------------------------------ consolidation

    async def consolidate(
        self,
        request: ConsolidateMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        progress: Progress = lambda details: None,
    ) -> ConsolidationResult:
        """One consolidation pass over the ref's long-term entries, committed in one
        transaction (memory/consolidation/apply.py)."""
        request = _checked(ConsolidateMemoryRequest, request)
        async with self.engine.begin() as connection:
            return await consolidate(
                connection, request, now=self.now(), registry=secrets, progress=progress
            )

    async def undo_consolidation(self, memory_ref: str, pass_id: str) -> UndoReport:
        ref = parse_memory_ref(memory_ref)
        if not _possible(_PASS_ID, pass_id):
            raise PassNotFound("(malformed)")
        async with self.engine.begin() as connection:
            return await undo_pass(connection, ref, pass_id, self.now())

    async def superseded(
        self, memory_ref: str, *, pass_id: str | None = None, limit: int = 1000
    ) -> builtins.list[SupersededEntry]:
        """Audit: rows consolidation marked (merged or superseded), oldest mark first."""
        ref = try_parse_memory_ref(memory_ref)
        limit = _checked_int("limit", limit, 1, MAX_LIST_LIMIT)
        if ref is None or (pass_id is not None and not _possible(_PASS_ID, pass_id)):
            return []
        async with self._autocommit.connect() as connection:
            return await superseded_entries(connection, ref, pass_id, limit)

    async def conflicts(
        self, memory_ref: str, *, limit: int = 1000
    ) -> builtins.list[ConflictRecord]:
        """Look-alike pairs consolidation left unmerged, while both are live."""
        ref = try_parse_memory_ref(memory_ref)
        limit = _checked_int("limit", limit, 1, MAX_LIST_LIMIT)
        if ref is None:
            return []
        async with self._autocommit.connect() as connection:
            return await open_conflicts(connection, ref, self.now(), limit)


class _DryRun(Exception):
    """Raised inside an erasure's transaction to roll a dry run back."""


class _RowView:
    """Attribute access over a freshly inserted row dict (same shape as a DB row)."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.__dict__.update(row)


def _implements_the_adapter(store: PostgresMemoryStore) -> HostMemoryStore:
    """Never called: mypy checks here that the store implements the protocol the
    activities depend on (memory/adapter.py), so the two cannot drift apart."""
    return store
