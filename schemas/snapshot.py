"""Content-free description of a read snapshot: safe to carry in workflow history."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from schemas.base import Instant, WireModel


class SnapshotInfo(WireModel):
    # A result of activities: tolerate fields a newer worker adds (rolling deploys).
    model_config = ConfigDict(extra="ignore")

    snapshot_id: str = Field(min_length=1)
    memory_ref: str
    entry_count: int = Field(ge=0)
    checksum: str
    as_of: Instant
