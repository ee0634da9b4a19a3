"""What an erasure (forget, or TTL reaching derived data) did or would do, and where an
entry's text went (lineage): counts and ids only, never content."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.workflow_io import WireResult

ArtifactKind = Literal["distilled-entry", "archive", "snapshot", "merged-into"]
MAX_LISTED_IDS = 100


class LineageLink(WireResult):
    """``source_id`` went into the artifact ``artifact_id`` of kind ``artifact_kind``."""

    source_id: str
    artifact_kind: ArtifactKind
    artifact_id: str


class ErasureReport(WireResult):
    """Counts by artifact kind. With ``dry_run`` nothing was changed: the counts are what
    the erasure would do."""

    memory_ref: str
    dry_run: bool
    entries: int = Field(default=0, ge=0)
    distilled_rewritten: int = Field(default=0, ge=0)
    distilled_removed: int = Field(default=0, ge=0)
    archives_rewritten: int = Field(default=0, ge=0)
    archives_removed: int = Field(default=0, ge=0)
    snapshots_dropped: int = Field(default=0, ge=0)
    # Forgotten tags (carried by erased entries, by no remaining one): event payloads in
    # which they were replaced by a marker, memoryRefs whose MEMORY-INDEX got a new
    # version, and earlier index versions (JSON and .md files) removed for naming one.
    events_rewritten: int = Field(default=0, ge=0)
    indexes_refreshed: int = Field(default=0, ge=0)
    index_versions_removed: int = Field(default=0, ge=0)
    # The erased source ids, up to MAX_LISTED_IDS (entries counts them all).
    entry_ids: tuple[str, ...] = ()
