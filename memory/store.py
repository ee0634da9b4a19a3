"""PostgresMemoryStore: the MemoryAdapter on PostgreSQL, a thin facade.

It parses the memoryRef once (schemas/memory_ref.py, CTI-1) and hands the typed
``MemoryRef`` to one repository per concern, each in its concern's folder (entries/,
search/, distillation/, consolidation/, erasure/, snapshots/, events/, commitments/,
proposals/, fleet/). Reads with a malformed ref find nothing ([] / None / 0); writes
raise InvalidMemoryRef. Inputs are checked by memory/input_gate.py, tenant scoping is
built by memory/storage/tenant_scope.py, locks by memory/storage/locks.py, every write of
content passes the SR-1 chokepoint (memory/redaction/chokepoint.py) and its one writer
(memory/entries/content.py). Callers may pass a parsed MemoryRef or its string form.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.entries.entry_ids import new_entry_id
from memory.entries.limits import StoreLimits
from memory.fleet.maintenance_writes import declare_maintenance_on
from memory.input_gate import checked
from memory.storage.database import Database, utc_now
from schemas.memory_ref import MemoryRef, parse_memory_ref, try_parse_memory_ref
from schemas.search import SearchRequest, SearchResult

if TYPE_CHECKING:
    from memory.adapter import HostMemoryStore
    from memory.commitments.store import CommitmentStore
    from memory.consolidation.passes import Consolidations
    from memory.consolidation.update_judge import UpdateJudge
    from memory.distillation.distillations import Distillations
    from memory.distillation.packing import Distiller
    from memory.embeddings.model import Embedder
    from memory.entries.writes import EntryWrites
    from memory.erasure.forget import Erasure
    from memory.erasure.retention import Retention
    from memory.events.reads import Events
    from memory.fixture_runs.records import FixtureRuns
    from memory.fleet.selection import FleetSelection
    from memory.indexes.vectors import EntryVectors
    from memory.keyed_ids.intent_links import IntentLinks
    from memory.proposals.store import ProposalStore
    from memory.redaction.chokepoint import MemorySecretRegistry
    from memory.search.queries import EntryQueries
    from memory.search.ranking import EntrySearch
    from memory.snapshots.frozen import SnapshotItem
    from memory.snapshots.sessions import Snapshots
    from schemas.consolidation import (
        ConflictRecord,
        ConsolidateMemoryRequest,
        ConsolidationResult,
        SupersededEntry,
        UndoReport,
    )
    from schemas.erasure import ErasureReport, LineageLink
    from schemas.events import EventRecord
    from schemas.memory_entry import (
        Attribution,
        EntryChanges,
        ForgetRequest,
        HostMemoryEntry,
        MemoryEntry,
        MemoryListOptions,
        MemoryQuery,
        NewMemoryEntry,
        Tier,
    )
    from schemas.snapshot import SnapshotInfo
    from schemas.workflow_io import (
        DistillationResult,
        DistillMemoryRequest,
        GarbageReport,
        IndexDigest,
    )

__all__ = ["PostgresMemoryStore", "StoreLimits", "new_entry_id", "utc_now"]

Ref = MemoryRef | str
Progress = Callable[[dict[str, object]], None]
_parse, _try = parse_memory_ref, try_parse_memory_ref


class PostgresMemoryStore:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        limits: StoreLimits | None = None,
        clock: Callable[[], datetime] = utc_now,
        id_factory: Callable[[], str] = new_entry_id,
        intent_links: IntentLinks | None = None,
        embedder: Embedder | Literal["configured"] | None = "configured",
        update_judge: UpdateJudge | Literal["configured"] | None = "configured",
    ) -> None:
        """``intent_links``: the key linking events to OpenIntent intents; every store of
        one deployment passes the same (runtime/intent_link_keys.py intent_links_for, and a
        store made from another passes ``other.db.intent_links``). ``embedder``: the model
        that gives entries their vectors; by default the one the environment configures
        (memory/embeddings/choice.py), ``None`` for none (search is then full-text only).
        ``update_judge``: asked about the conflicts consolidation's update rules leave
        open; by default the one the environment configures (off unless set: memory/
        consolidation/update_judge.py)."""
        self.engine = engine
        self.limits = limits or StoreLimits()
        self.db = Database(engine, clock, intent_links)
        self._clock = clock
        self._id_factory = id_factory
        self._embedder = embedder
        self._update_judge = update_judge
        declare_maintenance_on(engine)

    # The repositories are built, and their modules imported, on first use: a command
    # that lists entries does not load the commitment grammar, the consolidation
    # planner or an embedding model (memoryctl answers in about a second).

    @cached_property
    def vectors(self) -> EntryVectors:
        from memory.embeddings.choice import configured_embedder
        from memory.indexes.vectors import EntryVectors

        embedder = configured_embedder() if self._embedder == "configured" else self._embedder
        return EntryVectors(self.db, embedder)

    @cached_property
    def searches(self) -> EntrySearch:
        from memory.search.ranking import EntrySearch

        return EntrySearch(self.db, self.vectors)

    @cached_property
    def queries(self) -> EntryQueries:
        from memory.search.queries import EntryQueries

        return EntryQueries(self.db, self.limits, self.searches)

    @cached_property
    def entries(self) -> EntryWrites:
        from memory.entries.writes import EntryWrites

        return EntryWrites(self.db, self.limits, self.vectors, self._id_factory)

    @cached_property
    def erasure(self) -> Erasure:
        from memory.erasure.forget import Erasure

        return Erasure(self.db, self.vectors)

    @cached_property
    def retention(self) -> Retention:
        from memory.erasure.retention import Retention

        return Retention(self.db, self.erasure)

    @cached_property
    def snapshots(self) -> Snapshots:
        from memory.snapshots.sessions import Snapshots

        return Snapshots(self.db)

    @cached_property
    def event_log(self) -> Events:
        from memory.events.reads import Events

        return Events(self.db)

    @cached_property
    def distillations(self) -> Distillations:
        from memory.distillation.distillations import Distillations

        return Distillations(self.db, self.vectors)

    @cached_property
    def consolidations(self) -> Consolidations:
        from memory.consolidation.passes import Consolidations
        from memory.consolidation.update_judge import configured_judge

        judge = configured_judge() if self._update_judge == "configured" else self._update_judge
        return Consolidations(self.db, self.vectors, judge)

    @cached_property
    def commitments(self) -> CommitmentStore:
        from memory.commitments.store import CommitmentStore

        return CommitmentStore(self.engine, self._clock)

    @cached_property
    def proposals(self) -> ProposalStore:
        from memory.proposals.store import ProposalStore

        return ProposalStore(self.db)

    @cached_property
    def fixture_runs(self) -> FixtureRuns:
        from memory.fixture_runs.records import FixtureRuns

        return FixtureRuns(self.engine, self._clock)

    @cached_property
    def fleet_selection(self) -> FleetSelection:
        from memory.fleet.selection import FleetSelection

        return FleetSelection(self.db)

    # Their requests carry a parsed MemoryRef already: nothing to add on the way.
    async def distill(
        self,
        request: DistillMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        distiller: Distiller | None = None,
        progress: Progress = lambda _: None,
    ) -> DistillationResult:
        return await self.distillations.distill(
            request, secrets=secrets, distiller=distiller, progress=progress
        )

    async def consolidate(
        self,
        request: ConsolidateMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        progress: Progress = lambda _: None,
    ) -> ConsolidationResult:
        return await self.consolidations.consolidate(request, secrets=secrets, progress=progress)

    def now(self) -> datetime:
        return self.db.now()

    async def ping(self) -> None:
        """Raise when the database cannot answer a trivial query (health probes)."""
        async with self.db.reading() as connection:
            await connection.execute(select(1))

    # ------------------------------------------------------------------ reads

    async def list(
        self, memory_ref: Ref, options: MemoryListOptions | None = None
    ) -> builtins.list[MemoryEntry]:
        ref = _try(memory_ref)
        return await self.queries.list(ref, options) if ref else []

    async def get(self, memory_ref: Ref, memory_id: str) -> MemoryEntry | None:
        ref = _try(memory_ref)
        return await self.queries.get(ref, memory_id) if ref else None

    async def get_entry(
        self, memory_ref: Ref, memory_id: str, *, touch: bool = True
    ) -> HostMemoryEntry | None:
        ref = _try(memory_ref)
        return await self.queries.get_entry(ref, memory_id, touch=touch) if ref else None

    async def get_by_key(self, memory_ref: Ref, namespace: str, key: str) -> HostMemoryEntry | None:
        ref = _try(memory_ref)
        return await self.queries.get_by_key(ref, namespace, key) if ref else None

    async def query(self, memory_ref: Ref, query: MemoryQuery) -> builtins.list[HostMemoryEntry]:
        ref = _try(memory_ref)
        return await self.queries.query(ref, query) if ref else []

    async def count(self, memory_ref: Ref, query: MemoryQuery | None = None) -> int:
        ref = _try(memory_ref)
        return await self.queries.count(ref, query) if ref else 0

    async def search(self, memory_ref: Ref, request: SearchRequest) -> SearchResult:
        """Hybrid search over one memoryRef (memory/search/ranking.py)."""
        ref = _try(memory_ref)
        if ref is None:
            return SearchResult(mode=checked(SearchRequest, request).mode, hits=())
        return await self.searches.search(ref, request)

    # ------------------------------------------------------------------ writes

    async def put(
        self,
        memory_ref: Ref,
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
        memory_ref: Ref,
        entries: Sequence[NewMemoryEntry],
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> builtins.list[HostMemoryEntry]:
        return await self.entries.put_many(
            _parse(memory_ref), entries, secrets=secrets, attribution=attribution
        )

    async def update(
        self,
        memory_ref: Ref,
        memory_id: str,
        changes: EntryChanges,
        *,
        expected_version: int,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry:
        return await self.entries.update(
            _parse(memory_ref),
            memory_id,
            changes,
            expected_version=expected_version,
            secrets=secrets,
            attribution=attribution,
        )

    async def delete(self, memory_ref: Ref, memory_id: str) -> bool:
        return await self.erasure.delete(_parse(memory_ref), memory_id)

    async def archive_working_memory(self, memory_ref: Ref) -> int:
        return await self.entries.archive_working_memory(_parse(memory_ref))

    # ------------------------------------------------------------------ erasure, retention

    async def forget(self, memory_ref: Ref, request: ForgetRequest) -> int:
        """Erase by ids, tag or subject; returns how many entries matched."""
        return (await self.erase(memory_ref, request)).entries

    async def erase(
        self,
        memory_ref: Ref,
        request: ForgetRequest,
        *,
        dry_run: bool = False,
        secrets: MemorySecretRegistry | None = None,
    ) -> ErasureReport:
        ref = _parse(memory_ref)
        return await self.erasure.erase(ref, request, dry_run=dry_run, secrets=secrets)

    async def expire(
        self, memory_ref: Ref, *, secrets: MemorySecretRegistry | None = None
    ) -> ErasureReport:
        return await self.erasure.expire(_parse(memory_ref), secrets=secrets)

    async def lineage(self, memory_ref: Ref, entry_id: str) -> builtins.list[LineageLink]:
        ref = _try(memory_ref)
        return await self.erasure.lineage(ref, entry_id) if ref else []

    async def gc_expired(self, memory_ref: Ref | None = None, *, batch_size: int = 5000) -> int:
        ref = _parse(memory_ref) if memory_ref is not None else None
        return await self.retention.gc_expired(ref, batch_size=batch_size)

    async def collect_garbage(
        self, memory_ref: Ref, *, secrets: MemorySecretRegistry | None = None
    ) -> GarbageReport:
        return await self.retention.collect_garbage(_parse(memory_ref), secrets=secrets)

    # ------------------------------------------------------------------ snapshots, events

    async def snapshot(
        self,
        memory_ref: Ref,
        snapshot_id: str,
        *,
        tiers: Sequence[Tier] | None = None,
        entry_ids: Sequence[str] | None = None,
    ) -> SnapshotInfo:
        ref = _parse(memory_ref)
        return await self.snapshots.create(ref, snapshot_id, tiers=tiers, entry_ids=entry_ids)

    async def snapshot_info(self, memory_ref: Ref, snapshot_id: str) -> SnapshotInfo | None:
        ref = _try(memory_ref)
        return await self.snapshots.info(ref, snapshot_id) if ref else None

    async def read_snapshot(
        self, memory_ref: Ref, snapshot_id: str, *, start: int = 0, limit: int = 1000
    ) -> builtins.list[SnapshotItem]:
        ref = _try(memory_ref)
        return await self.snapshots.read(ref, snapshot_id, start=start, limit=limit) if ref else []

    async def events(
        self,
        memory_ref: Ref,
        *,
        after_seq: int = 0,
        limit: int = 1000,
        types: Sequence[str] | None = None,
    ) -> builtins.list[EventRecord]:
        ref = _try(memory_ref)
        if ref is None:
            return []
        return await self.event_log.read(ref, after_seq=after_seq, limit=limit, types=types)

    # ------------------------------------------------------------------ distillation

    async def archive_checksum(self, memory_ref: Ref, output_id: str) -> str | None:
        ref = _try(memory_ref)
        return await self.distillations.archive_checksum(ref, output_id) if ref else None

    async def index_digest(self, memory_ref: Ref) -> IndexDigest:
        return await self.distillations.index_digest(_parse(memory_ref))

    async def index_file(
        self, memory_ref: Ref, version: int | None = None
    ) -> tuple[int, bytes] | None:
        ref = _try(memory_ref)
        return await self.distillations.index_file(ref, version) if ref else None

    # ------------------------------------------------------------------ consolidation

    async def undo_consolidation(self, memory_ref: Ref, pass_id: str) -> UndoReport:
        return await self.consolidations.undo(_parse(memory_ref), pass_id)

    async def superseded(
        self, memory_ref: Ref, *, pass_id: str | None = None, limit: int = 1000
    ) -> builtins.list[SupersededEntry]:
        ref = _try(memory_ref)
        if ref is None:
            return []
        return await self.consolidations.superseded(ref, pass_id=pass_id, limit=limit)

    async def conflicts(
        self, memory_ref: Ref, *, limit: int = 1000
    ) -> builtins.list[ConflictRecord]:
        ref = _try(memory_ref)
        return await self.consolidations.conflicts(ref, limit=limit) if ref else []


def _implements_the_adapter(store: PostgresMemoryStore) -> HostMemoryStore:
    """Never called: mypy checks here that the store implements the protocol the
    activities depend on (memory/adapter.py), so the two cannot drift apart."""
    return store
