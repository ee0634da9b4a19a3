"""Starting the agent run a firing enqueues: at most once per occurrence, in the source
memory's tenant (RFC 0068 §C.4)."""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from runtime.search_attributes import attributes_of
    from schemas.memory_ref import MemoryRef
    from schemas.workflow_io import AgentRunInput
    from workflows.agent_run import AgentRunWorkflow


async def enqueue_agent_run(memory_ref: MemoryRef, run_id: str) -> None:
    """Start AgentRunWorkflow under the id the commitment.fired event names. The id
    derives from the occurrence and duplicates are rejected, so a retried firing or a
    reset workflow never starts a second run; the run outlives the commitment."""
    try:
        await workflow.start_child_workflow(
            AgentRunWorkflow.run,
            AgentRunInput(memory_ref=memory_ref),
            id=run_id,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            parent_close_policy=ParentClosePolicy.ABANDON,
            search_attributes=attributes_of(memory_ref),
            static_summary="agent run enqueued by a commitment",
        )
    except WorkflowAlreadyStartedError:
        workflow.logger.info("the run for this occurrence was already started")
