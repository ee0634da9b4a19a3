"""Which models are exported as JSON Schema files (see schemas/export.py)."""

from __future__ import annotations

from pydantic import BaseModel

from schemas import events, memory_entry, snapshot

EXPORTED: dict[str, type[BaseModel]] = {
    "memory-entry": memory_entry.MemoryEntry,
    "memory-list-options": memory_entry.MemoryListOptions,
    "host-memory-entry": memory_entry.HostMemoryEntry,
    "new-memory-entry": memory_entry.NewMemoryEntry,
    "entry-changes": memory_entry.EntryChanges,
    "memory-query": memory_entry.MemoryQuery,
    "forget-request": memory_entry.ForgetRequest,
    "snapshot-info": snapshot.SnapshotInfo,
    "event-record": events.EventRecord,
    "event-memory-written": events.MemoryWritten,
    "event-memory-lifecycle": events.MemoryLifecycle,
    "event-memory-compacted": events.MemoryCompacted,
    "event-workspace-updated": events.WorkspaceUpdated,
    "event-agent-memory-consolidated": events.AgentMemoryConsolidated,
    "event-commitment-fired": events.CommitmentFired,
    "event-commitment-inferred": events.CommitmentInferred,
    "event-commitment-cancelled": events.CommitmentCancelled,
}


def register(name: str, model: type[BaseModel]) -> None:
    """Modules defining further wire shapes (workflow inputs/outputs) add them here."""
    EXPORTED[name] = model
