"""The MemoryAdapter contracts.

``MemoryAdapter`` is the openwop read surface (list/get) every agent runtime sees;
``HostMemoryStore`` adds the host-internal writes and the read snapshot that the
workflows' activities use. PostgresMemoryStore (memory/store.py) implements both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.redaction import MemorySecretRegistry
from memory.snapshots import SnapshotItem
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


@runtime_checkable
class MemoryAdapter(Protocol):
    async def list(
        self, memory_ref: str, options: MemoryListOptions | None = None
    ) -> list[MemoryEntry]:
        """Entries of memory_ref, newest first; [] for unknown or malformed refs."""
        ...

    async def get(self, memory_ref: str, memory_id: str) -> MemoryEntry | None:
        """One entry, or None when missing, expired, foreign or malformed."""
        ...


@runtime_checkable
class HostMemoryStore(MemoryAdapter, Protocol):
    async def put(
        self,
        memory_ref: str,
        entry: NewMemoryEntry,
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry: ...

    async def put_many(
        self,
        memory_ref: str,
        entries: Sequence[NewMemoryEntry],
        *,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> list[HostMemoryEntry]: ...

    async def update(
        self,
        memory_ref: str,
        memory_id: str,
        changes: EntryChanges,
        *,
        expected_version: int,
        secrets: MemorySecretRegistry | None = None,
        attribution: Attribution | None = None,
    ) -> HostMemoryEntry: ...

    async def delete(self, memory_ref: str, memory_id: str) -> bool: ...

    async def forget(self, memory_ref: str, request: ForgetRequest) -> int: ...

    async def get_entry(self, memory_ref: str, memory_id: str) -> HostMemoryEntry | None: ...

    async def query(self, memory_ref: str, query: MemoryQuery) -> list[HostMemoryEntry]: ...

    async def count(self, memory_ref: str, query: MemoryQuery | None = None) -> int: ...

    async def snapshot(
        self,
        memory_ref: str,
        snapshot_id: str,
        *,
        tiers: Sequence[Tier] | None = None,
        include_distilled: bool = True,
    ) -> SnapshotInfo: ...

    async def read_snapshot(
        self, memory_ref: str, snapshot_id: str, *, start: int = 0, limit: int = 1000
    ) -> list[SnapshotItem]: ...

    async def events(
        self, memory_ref: str, *, after_seq: int = 0, limit: int = 1000
    ) -> list[EventRecord]: ...

    async def gc_expired(self, memory_ref: str | None = None) -> int: ...
