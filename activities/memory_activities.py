"""Every side effect the workflows need, as Temporal activities over the MemoryAdapter.

Inputs and results are content-free models (schemas/workflow_io.py); memory content
moves only between these activities and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeat import heartbeating
from memory.distillation import distill_snapshot
from memory.distiller import Distiller, TokenBudgetExceeded
from memory.memory_index import INDEX_PATH, read_workspace_file
from memory.retention import collect_garbage
from memory.store import PostgresMemoryStore
from memory.vault import SecretVault, registry_for_tenant
from schemas.errors import InvalidInput
from schemas.memory_entry import Tier
from schemas.memory_ref import parse_memory_ref
from schemas.snapshot import SnapshotInfo
from schemas.workflow_io import (
    DistillationResult,
    DistillRequest,
    GarbageReport,
    IndexDigest,
    IndexRequest,
    SnapshotRequest,
)

# Distillation reads transactional memory (RFC 0062); semantic memory is the output.
TRANSACTIONAL_TIERS = (Tier.WORKING, Tier.EPISODIC)


def _invalid(error: InvalidInput) -> ApplicationError:
    return ApplicationError(str(error), {"field": error.field}, type=error.code, non_retryable=True)


class MemoryActivities:
    def __init__(
        self,
        store: PostgresMemoryStore,
        vault: SecretVault,
        distiller: Distiller | None = None,
    ) -> None:
        self.store = store
        self.vault = vault
        self.distiller = distiller

    @activity.defn
    async def create_snapshot(self, request: SnapshotRequest) -> SnapshotInfo:
        """Freeze the run's input. Idempotent on snapshot_id, so retries agree."""
        try:
            if request.purpose == "session":
                return await self.store.snapshot(request.memory_ref, request.snapshot_id)
            if request.source_ids is not None:
                # Explicit sources may name earlier distilled entries: recursive
                # distillation, re-checked for SR-1 like any other source.
                return await self.store.snapshot(
                    request.memory_ref, request.snapshot_id, entry_ids=request.source_ids
                )
            return await self.store.snapshot(
                request.memory_ref,
                request.snapshot_id,
                tiers=TRANSACTIONAL_TIERS,
                include_distilled=False,
            )
        except InvalidInput as error:
            raise _invalid(error) from None

    @activity.defn
    async def distill(self, request: DistillRequest) -> DistillationResult:
        info = activity.info()
        tenant = parse_memory_ref(request.memory_ref).tenant
        try:
            # A vault secret the registry refuses fails the run (non-retryable) rather
            # than letting content through unredacted.
            registry = registry_for_tenant(
                self.vault, tenant, info.workflow_run_id or info.activity_id
            )
            async with heartbeating() as progress:
                return await distill_snapshot(
                    self.store,
                    request,
                    registry=registry,
                    distiller=self.distiller,
                    progress=progress,
                )
        except TokenBudgetExceeded as error:
            raise ApplicationError(
                str(error),
                {"budget": error.budget, "minimumRequired": error.minimum_required},
                type=TokenBudgetExceeded.code,
                non_retryable=True,
            ) from None
        except InvalidInput as error:
            raise _invalid(error) from None

    @activity.defn
    async def collect_garbage(self, request: IndexRequest) -> GarbageReport:
        return await collect_garbage(self.store, request.memory_ref)

    @activity.defn
    async def load_memory_index(self, request: IndexRequest) -> IndexDigest:
        """What a new session loads at startup; returns only a digest of it."""
        ref = parse_memory_ref(request.memory_ref)
        async with self.store.engine.connect() as connection:
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
