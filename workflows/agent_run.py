"""AgentRunWorkflow: a minimal agent session start. It loads MEMORY-INDEX.json and
freezes a memory snapshot, the way the next session after a dream begins, and returns a
content-free digest of what it saw."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.memory_activities import MemoryActivities
    from schemas.workflow_io import AgentRunDigest, AgentRunInput, IndexRequest, SnapshotRequest
    from workflows import policies


@workflow.defn
class AgentRunWorkflow:
    @workflow.run
    async def run(self, request: AgentRunInput) -> AgentRunDigest:
        info = workflow.info()
        index = await workflow.execute_activity_method(
            MemoryActivities.load_memory_index,
            IndexRequest(memory_ref=request.memory_ref),
            start_to_close_timeout=policies.INDEX_TIMEOUT,
            retry_policy=policies.STORE_RETRY,
            summary="load MEMORY-INDEX.json",
        )
        snapshot = await workflow.execute_activity_method(
            MemoryActivities.create_snapshot,
            SnapshotRequest(
                memory_ref=request.memory_ref,
                snapshot_id=f"session:{info.workflow_id}/{info.run_id}",
                purpose="session",
            ),
            start_to_close_timeout=policies.SNAPSHOT_TIMEOUT,
            retry_policy=policies.STORE_RETRY,
            summary="freeze session snapshot",
        )
        return AgentRunDigest(
            memory_ref=request.memory_ref,
            index=index,
            snapshot_id=snapshot.snapshot_id,
            snapshot_entry_count=snapshot.entry_count,
            snapshot_checksum=snapshot.checksum,
            started_at=workflow.now(),
        )
