"""DreamWorkflow: the nightly routine a Temporal schedule starts.

It runs distillation as a child workflow whose id is derived from the memoryRef, so two
dreams for one memoryRef never run at once (a second one finds the child running and
returns "skipped-overlap"), then collects garbage. Garbage collection runs whether the
distillation succeeded or failed: a failing distillation must not also stop TTL and
retention. Consolidation and commitment inference plug in as further children here.

The input is validated by the data converter before this code runs: a bad memoryRef or
budget fails the run at once, naming the field (runtime/converter.py).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import COLLECT_GARBAGE
    from runtime.search_attributes import MEMORY_REF, TENANT
    from schemas.memory_ref import MemoryRef
    from schemas.workflow_io import (
        DistillationInput,
        DistillationResult,
        DreamInput,
        DreamResult,
        GarbageReport,
        IndexRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.distillation import DistillationWorkflow


def distillation_workflow_id(memory_ref: MemoryRef | str) -> str:
    return f"distill/{memory_ref}"


@workflow.defn
class DreamWorkflow:
    @workflow.run
    async def run(self, request: DreamInput) -> DreamResult:
        ref = request.memory_ref
        workflow.upsert_search_attributes(
            [MEMORY_REF.value_set(str(ref)), TENANT.value_set(ref.tenant)]
        )
        workflow.set_current_details(f"Dreaming over {ref}")
        try:
            distillation = await self._distill(ref, request.token_budget)
        except WorkflowAlreadyStartedError:
            # The dream that is running collects garbage itself.
            workflow.logger.warning("another dream is distilling this memoryRef; skipping")
            workflow.set_current_details("Skipped: a dream for this memoryRef is running")
            return DreamResult(memory_ref=str(ref), tenant=ref.tenant, status="skipped-overlap")
        except ChildWorkflowError:
            # The run still fails visibly, but TTL and retention do not stop with it.
            workflow.set_current_details("Distillation failed; collecting garbage anyway")
            await self._collect_garbage(ref)
            raise
        garbage = await self._collect_garbage(ref)
        workflow.set_current_details(
            f"Done: {distillation.status}, {distillation.source_count} sources, "
            f"{distillation.tokens_used} tokens"
        )
        return DreamResult(
            memory_ref=str(ref),
            tenant=ref.tenant,
            status="completed",
            distillation=distillation,
            garbage=garbage,
        )

    async def _distill(self, ref: MemoryRef, token_budget: int | None) -> DistillationResult:
        pairs = [SearchAttributePair(MEMORY_REF, str(ref)), SearchAttributePair(TENANT, ref.tenant)]
        return await workflow.execute_child_workflow(
            DistillationWorkflow.run,
            # Unattended: an entry too large for the budget is reported, never a failure.
            DistillationInput(memory_ref=ref, token_budget=token_budget, when_nothing_fits="defer"),
            id=distillation_workflow_id(ref),
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=TypedSearchAttributes(pairs),
            static_summary=f"distill {ref}",
        )

    async def _collect_garbage(self, ref: MemoryRef) -> GarbageReport:
        return await call(
            COLLECT_GARBAGE,
            IndexRequest(memory_ref=ref),
            policies.MAINTENANCE,
            summary="expire entries, archives and snapshots",
        )
