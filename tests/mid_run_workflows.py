"""A workflow no agent should be: a session that, while it holds its snapshot of a
memoryRef, starts a consolidation of that same memoryRef. Used to show the pass refuses
(RFC 0068: a run must not mutate its own read snapshot mid-run)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CREATE_SNAPSHOT
    from schemas.consolidation import ConsolidationInput, ConsolidationResult
    from schemas.workflow_io import AgentRunInput, SnapshotRequest
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.consolidation import ConsolidationWorkflow


@workflow.defn
class SessionThatConsolidates:
    @workflow.run
    async def run(self, request: AgentRunInput) -> ConsolidationResult:
        info = workflow.info()
        await call(
            CREATE_SNAPSHOT,
            SnapshotRequest(
                memory_ref=request.memory_ref,
                snapshot_id=f"session:{info.workflow_id}/{info.run_id}",
                purpose="session",
            ),
            policies.SNAPSHOT,
            summary="freeze session snapshot",
        )
        return await workflow.execute_child_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=request.memory_ref),
            id=f"{info.workflow_id}/consolidate",
        )
