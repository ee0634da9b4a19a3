"""Every side effect the workflows need, as Temporal activities over the memory store.

Names and types come from activities/contracts.py (what workflows import); inputs and
results are content-free models (schemas/workflow_io.py); memory content moves only
between these activities and PostgreSQL. Every activity runs inside ``content_free``.
The dream's steps write inside ``maintenance_writes``: what they derive is not new work
for the next dream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.boundary import content_free
from activities.contracts import (
    COLLECT_GARBAGE,
    CONSOLIDATE_MEMORY,
    CREATE_SNAPSHOT,
    DISTILL_MEMORY,
    LEGACY_DISTILL,
    LOAD_MEMORY_INDEX,
)
from activities.heartbeat import progress
from memory.adapter import HostMemoryStore
from memory.distillation.packing import Distiller
from memory.fleet.maintenance_writes import maintenance_writes
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.redaction.vault import SecretVault, registry_for_tenant
from runtime.product_metrics import ProductMetrics
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.errors import InvalidInput
from schemas.snapshot import SnapshotInfo
from schemas.workflow_io import (
    DistillationResult,
    DistillMemoryRequest,
    DistillRequest,
    GarbageReport,
    IndexDigest,
    IndexRequest,
    SnapshotRequest,
)


class MemoryActivities:
    def __init__(
        self,
        store: HostMemoryStore,
        vault: SecretVault,
        distiller: Distiller | None = None,
    ) -> None:
        self.store = store
        self.vault = vault
        self.distiller = distiller

    @activity.defn(name=DISTILL_MEMORY.name)
    @content_free
    async def distill_memory(self, request: DistillMemoryRequest) -> DistillationResult:
        info = activity.info()
        # A vault secret the registry refuses fails the run (non-retryable) rather
        # than letting content through unredacted.
        secrets = registry_for_tenant(
            self.vault, request.memory_ref.tenant, info.workflow_run_id or info.activity_id
        )
        with maintenance_writes():
            result = await self.store.distill(
                request, secrets=secrets, distiller=self.distiller, progress=progress()
            )
        ProductMetrics.in_activity().distillation(result)
        return result

    @activity.defn(name=LEGACY_DISTILL.name)
    @content_free
    async def distill_legacy(self, request: DistillRequest) -> DistillationResult:
        """For runs recorded before budget-bounded selection: their snapshot is not
        read; the run distills from the live queue like any newer run."""
        return await self.distill_memory(
            DistillMemoryRequest(
                memory_ref=request.memory_ref,
                token_budget=request.token_budget,
                run_key=request.run_key,
                index_emitted=request.index_emitted,
            )
        )

    @activity.defn(name=CONSOLIDATE_MEMORY.name)
    @content_free
    async def consolidate_memory(self, request: ConsolidateMemoryRequest) -> ConsolidationResult:
        """One pass; survivors' content is redacted again with the tenant's secrets."""
        info = activity.info()
        secrets = registry_for_tenant(
            self.vault, request.memory_ref.tenant, info.workflow_run_id or info.activity_id
        )
        with maintenance_writes():
            result = await self.store.consolidate(request, secrets=secrets, progress=progress())
        ProductMetrics.in_activity().consolidation(result)
        return result

    @activity.defn(name=CREATE_SNAPSHOT.name)
    @content_free
    async def create_snapshot(self, request: SnapshotRequest) -> SnapshotInfo:
        """Freeze a session's view. Idempotent on snapshot_id, so retries agree."""
        return await self.store.snapshot(
            request.memory_ref, request.snapshot_id, entry_ids=request.source_ids
        )

    @activity.defn(name=COLLECT_GARBAGE.name)
    @content_free
    async def collect_garbage(self, request: IndexRequest) -> GarbageReport:
        # The tenant's secrets, so erasing expired sources also finds lines a dream
        # redacted with a secret registered after the write. A vault that refuses a
        # secret fails distillation, but must not stop TTL and retention: collect
        # without it then (matching lines by their stored text only).
        info = activity.info()
        secrets: MemorySecretRegistry | None = None
        try:
            secrets = registry_for_tenant(
                self.vault, request.memory_ref.tenant, info.workflow_run_id or info.activity_id
            )
        except InvalidInput as error:
            activity.logger.warning("secrets vault refused for garbage collection: %s", error.code)
        with maintenance_writes():
            report = await self.store.collect_garbage(request.memory_ref, secrets=secrets)
        ProductMetrics.in_activity().erased(report.expired_entries, reason="ttl")
        return report

    @activity.defn(name=LOAD_MEMORY_INDEX.name)
    @content_free
    async def load_memory_index(self, request: IndexRequest) -> IndexDigest:
        """What a new session loads at startup; returns only a digest of it."""
        return await self.store.index_digest(request.memory_ref)

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.distill_memory,
            self.distill_legacy,
            self.consolidate_memory,
            self.create_snapshot,
            self.collect_garbage,
            self.load_memory_index,
        ]
