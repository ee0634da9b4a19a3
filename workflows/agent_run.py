"""AgentRunWorkflow: a minimal agent session start. It loads MEMORY-INDEX.json and
freezes a memory snapshot, the way the next session after a dream begins, and returns a
content-free digest of what it saw."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CREATE_SNAPSHOT, LOAD_MEMORY_INDEX
    from schemas.memory_ref import MemoryRef
    from schemas.snapshot import SnapshotInfo
    from schemas.workflow_io import AgentRunDigest, AgentRunInput, IndexRequest, SnapshotRequest
    from workflows import policies
    from workflows.activity_calls import call


def session_snapshot_id(workflow_id: str, run_id: str) -> str:
    """The snapshot a run reads its memory from: a consolidation started by that run
    finds it under this id and refuses (workflows/consolidation.py)."""
    return f"session:{workflow_id}/{run_id}"


async def freeze_session_snapshot(memory_ref: MemoryRef) -> SnapshotInfo:
    """Freeze this run's view of its memoryRef (idempotent on the run's own id)."""
    info = workflow.info()
    return await call(
        CREATE_SNAPSHOT,
        SnapshotRequest(
            memory_ref=memory_ref,
            snapshot_id=session_snapshot_id(info.workflow_id, info.run_id),
            purpose="session",
        ),
        policies.SNAPSHOT,
        summary="freeze session snapshot",
    )


@workflow.defn
class AgentRunWorkflow:
    @workflow.run
    async def run(self, request: AgentRunInput) -> AgentRunDigest:
        index = await call(
            LOAD_MEMORY_INDEX,
            IndexRequest(memory_ref=request.memory_ref),
            policies.INDEX,
            summary="load MEMORY-INDEX.json",
        )
        snapshot = await freeze_session_snapshot(request.memory_ref)
        return AgentRunDigest(
            memory_ref=str(request.memory_ref),
            index=index,
            snapshot_id=snapshot.snapshot_id,
            snapshot_entry_count=snapshot.entry_count,
            snapshot_checksum=snapshot.checksum,
            started_at=workflow.now(),
        )
