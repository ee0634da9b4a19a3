"""DreamWorkflow: the nightly routine a Temporal schedule starts.

It runs distillation as a child workflow whose id is derived from the memoryRef, so two
dreams for one memoryRef never run at once (a second one finds the child running and
returns "skipped-overlap"), then collects garbage. Consolidation and commitment
inference plug in as further children here.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    from activities.memory_activities import MemoryActivities
    from runtime.search_attributes import MEMORY_REF, TENANT
    from schemas.errors import InvalidMemoryRef
    from schemas.memory_ref import parse_memory_ref
    from schemas.workflow_io import DistillationInput, DreamInput, DreamResult, IndexRequest
    from workflows import policies
    from workflows.distillation import DistillationWorkflow


def distillation_workflow_id(memory_ref: str) -> str:
    return f"distill/{memory_ref}"


@workflow.defn
class DreamWorkflow:
    @workflow.run
    async def run(self, request: DreamInput) -> DreamResult:
        try:
            ref = parse_memory_ref(request.memory_ref)
        except InvalidMemoryRef as error:
            raise ApplicationError(
                str(error), {"field": "memoryRef"}, type=error.code, non_retryable=True
            ) from None
        pairs = [SearchAttributePair(MEMORY_REF, str(ref)), SearchAttributePair(TENANT, ref.tenant)]
        workflow.upsert_search_attributes(
            [MEMORY_REF.value_set(str(ref)), TENANT.value_set(ref.tenant)]
        )
        workflow.set_current_details(f"Dreaming over {ref}")
        try:
            distillation = await workflow.execute_child_workflow(
                DistillationWorkflow.run,
                DistillationInput(memory_ref=str(ref), token_budget=request.token_budget),
                id=distillation_workflow_id(str(ref)),
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                search_attributes=TypedSearchAttributes(pairs),
                static_summary=f"distill {ref}",
            )
        except WorkflowAlreadyStartedError:
            workflow.logger.warning("another dream is distilling this memoryRef; skipping")
            workflow.set_current_details("Skipped: a dream for this memoryRef is running")
            return DreamResult(memory_ref=str(ref), tenant=ref.tenant, status="skipped-overlap")
        garbage = await workflow.execute_activity_method(
            MemoryActivities.collect_garbage,
            IndexRequest(memory_ref=str(ref)),
            start_to_close_timeout=policies.MAINTENANCE_TIMEOUT,
            retry_policy=policies.STORE_RETRY,
            summary="expire entries, archives and snapshots",
        )
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
