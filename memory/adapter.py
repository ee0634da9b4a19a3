"""The MemoryAdapter contracts.

``MemoryAdapter`` is the openwop read surface (list/get) every agent runtime sees;
``HostMemoryStore`` adds the host-internal writes, the read snapshot and the maintenance
operations the workflows' activities call. Activities depend on this protocol only;
PostgresMemoryStore (memory/store.py) implements both, and mypy checks it does
(memory/store.py ends with the assignment that makes it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from memory.distillation.packing import Distiller
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.snapshots.frozen import SnapshotItem
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
from schemas.memory_ref import MemoryRef
from schemas.snapshot import SnapshotInfo
from schemas.workflow_io import DistillationResult, DistillMemoryRequest, GarbageReport, IndexDigest

Progress = Callable[[dict[str, object]], None]


@runtime_checkable
class MemoryAdapter(Protocol):
    async def list(
        self, memory_ref: MemoryRef | str, options: MemoryListOptions | None = None
    ) -> list[MemoryEntry]:
        """Entries of memory_ref, newest first; [] for unknown or malformed refs."""
        ...

    async def get(self, memory_ref: MemoryRef | str, memory_id: str) -> MemoryEntry | None:
        """One entry, or None when missing, expired, foreign or malformed."""
        ...


@runtime_checkable
class HostMemoryStore(MemoryAdapter, Protocol):
    async def put(
        self,
        memory_ref: MemoryRef | str,
        entry: NewMemoryEntry,
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry: ...

    async def put_many(
        self,
        memory_ref: MemoryRef | str,
        entries: Sequence[NewMemoryEntry],
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> list[HostMemoryEntry]: ...

    async def update(
        self,
        memory_ref: MemoryRef | str,
        memory_id: str,
        changes: EntryChanges,
        *,
        expected_version: int,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry: ...

    async def delete(self, memory_ref: MemoryRef | str, memory_id: str) -> bool: ...

    async def forget(self, memory_ref: MemoryRef | str, request: ForgetRequest) -> int: ...

    async def erase(
        self,
        memory_ref: MemoryRef | str,
        request: ForgetRequest,
        *,
        dry_run: bool = False,
        secrets: MemorySecretRegistry | None = None,
    ) -> ErasureReport:
        """Forget reaching every derived copy, in one transaction (memory/erasure/copies.py)."""
        ...

    async def lineage(self, memory_ref: MemoryRef | str, entry_id: str) -> list[LineageLink]: ...

    async def get_entry(
        self, memory_ref: MemoryRef | str, memory_id: str
    ) -> HostMemoryEntry | None: ...

    async def query(
        self, memory_ref: MemoryRef | str, query: MemoryQuery
    ) -> list[HostMemoryEntry]: ...

    async def count(self, memory_ref: MemoryRef | str, query: MemoryQuery | None = None) -> int: ...

    async def snapshot(
        self,
        memory_ref: MemoryRef | str,
        snapshot_id: str,
        *,
        tiers: Sequence[Tier] | None = None,
        entry_ids: Sequence[str] | None = None,
    ) -> SnapshotInfo: ...

    async def read_snapshot(
        self, memory_ref: MemoryRef | str, snapshot_id: str, *, start: int = 0, limit: int = 1000
    ) -> list[SnapshotItem]: ...

    async def events(
        self,
        memory_ref: MemoryRef | str,
        *,
        after_seq: int = 0,
        limit: int = 1000,
        types: Sequence[str] | None = None,
    ) -> list[EventRecord]: ...

    async def gc_expired(self, memory_ref: str | None = None, *, batch_size: int = 5000) -> int: ...

    # ------------------------------------------------------------ maintenance

    async def distill(
        self,
        request: DistillMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        distiller: Distiller | None = None,
        progress: Progress = ...,
    ) -> DistillationResult:
        """One budget-bounded distillation (memory/distillation/run.py)."""
        ...

    async def collect_garbage(
        self, memory_ref: MemoryRef | str, *, secrets: MemorySecretRegistry | None = None
    ) -> GarbageReport:
        """TTL, archives past retention, old snapshots (memory/erasure/retention.py)."""
        ...

    async def index_digest(self, memory_ref: MemoryRef | str) -> IndexDigest:
        """A content-free digest of the latest MEMORY-INDEX.json."""
        ...

    async def consolidate(
        self,
        request: ConsolidateMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        progress: Progress = ...,
    ) -> ConsolidationResult:
        """One consolidation pass (memory/consolidation/apply.py)."""
        ...

    async def undo_consolidation(self, memory_ref: MemoryRef | str, pass_id: str) -> UndoReport: ...

    async def superseded(
        self, memory_ref: MemoryRef | str, *, pass_id: str | None = None, limit: int = 1000
    ) -> list[SupersededEntry]: ...

    async def conflicts(
        self, memory_ref: MemoryRef | str, *, limit: int = 1000
    ) -> list[ConflictRecord]: ...
