"""A workflow no agent should be: a session that, while it holds its snapshot of a
memoryRef, starts a consolidation of that same memoryRef. Used to show the pass refuses
(RFC 0068: a run must not mutate its own read snapshot mid-run)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from schemas.consolidation import ConsolidationInput, ConsolidationResult
    from schemas.workflow_io import AgentRunInput
    from workflows.agent_run import freeze_session_snapshot
    from workflows.consolidation import ConsolidationWorkflow


@workflow.defn
class SessionThatConsolidates:
    @workflow.run
    async def run(self, request: AgentRunInput) -> ConsolidationResult:
        await freeze_session_snapshot(request.memory_ref)
        return await workflow.execute_child_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=request.memory_ref),
            id=f"{workflow.info().workflow_id}/consolidate",
        )
