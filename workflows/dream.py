"""DreamWorkflow: the nightly routine a Temporal schedule starts.

It runs distillation as a child workflow whose id is derived from the memoryRef, so two
dreams for one memoryRef never run at once (a second one finds the child running and
returns "skipped-overlap"), then consolidation of the long-term memory, then commitment
inference and arming (after consolidation, so an intention merged into a survivor is
inferred from the survivor), then synthesizes proposals from recurring requests (inert
until a reviewer applies one, workflows/proposal.py), then collects garbage.
Consolidation, inference and garbage collection are activities of the dream, each shown
in the UI with its summary: as child workflows they cost the Temporal server three more
workflows per dream for nothing a user sees (a pass started by hand meanwhile is
serialised with this one by the database's per-memoryRef lock, and the second finds
nothing left to merge). Dreams recorded before that (patch ``dream-steps-as-activities``)
replay with their children.
Every step runs whether the one before succeeded or failed: one failing step must not
also stop the others; the dream then fails with the first failure.

With payload encryption the children's ids carry a keyed hash instead of the memoryRef
(runtime/workflow_ids.py): child ids are recorded in clear in this history. The worker
holds the key, so the workflow asks it for the ids with a local activity.

The input is validated by the data converter before this code runs: a bad memoryRef or
budget fails the run at once, naming the field (runtime/converter.py).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    FailureError,
    WorkflowAlreadyStartedError,
)

with workflow.unsafe.imports_passed_through():
    from activities.contracts import (
        CHILD_WORKFLOW_IDS,
        COLLECT_GARBAGE,
        CONSOLIDATE_MEMORY,
        SYNTHESIZE_PROPOSALS,
    )
    from runtime.product_metrics import DreamOutcome, ProductMetrics
    from runtime.search_attributes import attributes_of, updates_of
    from runtime.workflow_ids import PLAIN
    from schemas.commitments import (
        CommitmentInferenceInput,
        CommitmentInferenceResult,
        InferCommitmentsRequest,
    )
    from schemas.consolidation import (
        ConsolidateMemoryRequest,
        ConsolidationInput,
        ConsolidationResult,
    )
    from schemas.memory_ref import MemoryRef
    from schemas.proposals import SynthesisRequest, SynthesisResult
    from schemas.workflow_ids import ChildWorkflowIds, ChildWorkflowIdsRequest
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
    from workflows.commitment_inference import CommitmentInferenceWorkflow, infer_and_arm
    from workflows.consolidation import ConsolidationWorkflow
    from workflows.distillation import DistillationWorkflow


# Consolidation, inference and arming as the dream's own activities (before: children).
STEPS_AS_ACTIVITIES = "dream-steps-as-activities"
# Reviewable learning (RFC 0096): recurring requests become inert proposals.
SYNTHESIZE_STEP = "dream-proposals"


def distillation_workflow_id(memory_ref: MemoryRef | str) -> str:
    """The readable id (payload encryption off); runtime/workflow_ids.py has both."""
    return PLAIN.distillation(memory_ref)


def dream_workflow_id(memory_ref: MemoryRef | str) -> str:
    """A dream started by hand (memoryctl dream run); scheduled ones carry the
    schedule's id. Both distil under distillation_workflow_id, so never at once."""
    return PLAIN.dream(memory_ref)


@workflow.defn
class DreamWorkflow:
    @workflow.run
    async def run(self, request: DreamInput) -> DreamResult:
        metrics = ProductMetrics.in_workflow()
        try:
            result = await self._dream(request)
        except FailureError:  # what fails the run (a bug fails the task, retried)
            metrics.dream("workflow", "failed")
            raise
        metrics.dream("workflow", _outcome(result))
        return result

    async def _dream(self, request: DreamInput) -> DreamResult:
        ref = request.memory_ref
        workflow.upsert_search_attributes(updates_of(ref))
        workflow.set_current_details(f"Dreaming over {ref}")
        failure: ChildWorkflowError | ActivityError | None = None
        distillation: DistillationResult | None = None
        self._ids = await self._child_ids(ref)
        try:
            distillation = await self._distill(ref, request.token_budget)
        except WorkflowAlreadyStartedError:
            # The dream that is running consolidates and collects garbage itself.
            workflow.logger.warning("another dream is distilling this memoryRef; skipping")
            workflow.set_current_details("Skipped: a dream for this memoryRef is running")
            return DreamResult(memory_ref=str(ref), tenant=ref.tenant, status="skipped-overlap")
        except ChildWorkflowError as error:
            # The run still fails visibly, but the other maintenance does not stop with it.
            workflow.set_current_details("Distillation failed; maintenance goes on")
            failure = error
        consolidation: ConsolidationResult | None = None
        # Dreams recorded before consolidation joined them replay without it.
        if workflow.patched("dream-consolidation"):
            try:
                consolidation = await self._consolidate(ref)
            except WorkflowAlreadyStartedError:
                workflow.logger.warning("a consolidation of this memoryRef is running; skipping")
            except (ChildWorkflowError, ActivityError) as error:
                failure = failure or error
        commitments: CommitmentInferenceResult | None = None
        if workflow.patched("dream-commitments"):
            try:
                commitments = await self._infer_commitments(ref)
            except WorkflowAlreadyStartedError:
                workflow.logger.warning("a commitment inference of this memoryRef is running")
            except (ChildWorkflowError, ActivityError) as error:
                failure = failure or error
        proposals: SynthesisResult | None = None
        # Dreams recorded before reviewable learning replay without synthesis.
        if workflow.patched(SYNTHESIZE_STEP):
            try:
                proposals = await self._synthesize_proposals(ref)
            except ActivityError as error:
                failure = failure or error
        garbage = await self._collect_garbage(ref)
        if failure is not None or distillation is None:
            raise failure or ApplicationError("distillation returned nothing")
        details = (
            f"Done: {distillation.status}, {distillation.source_count} sources, "
            f"{distillation.tokens_used} tokens"
        )
        if consolidation is not None:
            details += f"; {consolidation.input_count} -> {consolidation.output_count} entries"
        workflow.set_current_details(details)
        return DreamResult(
            memory_ref=str(ref),
            tenant=ref.tenant,
            status="completed",
            distillation=distillation,
            consolidation=consolidation,
            commitments=commitments,
            proposals=proposals,
            garbage=garbage,
        )

    async def _child_ids(self, ref: MemoryRef) -> ChildWorkflowIds:
        # Dreams recorded before opaque ids replay with the readable ones.
        if not workflow.patched("dream-child-ids"):
            return PLAIN.children(ref)
        return await workflow.execute_local_activity(
            CHILD_WORKFLOW_IDS.name,
            ChildWorkflowIdsRequest(memory_ref=ref),
            result_type=CHILD_WORKFLOW_IDS.result_type,
            start_to_close_timeout=timedelta(seconds=10),
            summary="child workflow ids",
        )

    async def _distill(self, ref: MemoryRef, token_budget: int | None) -> DistillationResult:
        return await workflow.execute_child_workflow(
            DistillationWorkflow.run,
            # Unattended: an entry too large for the budget is reported, never a failure.
            DistillationInput(memory_ref=ref, token_budget=token_budget, when_nothing_fits="defer"),
            id=self._ids.distillation,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"distill {ref}",
        )

    async def _consolidate(self, ref: MemoryRef) -> ConsolidationResult:
        if workflow.patched(STEPS_AS_ACTIVITIES):
            info = workflow.info()
            return await call(
                CONSOLIDATE_MEMORY,
                ConsolidateMemoryRequest(
                    memory_ref=ref,
                    run_key=f"{info.workflow_id}/{info.run_id}",
                    trigger="scheduled",
                ),
                policies.CONSOLIDATE,
                summary="consolidate: merge duplicates, supersede stale keys, record conflicts",
            )
        return await workflow.execute_child_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=ref, trigger="scheduled"),
            id=self._ids.consolidation,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"consolidate {ref}",
        )

    async def _infer_commitments(self, ref: MemoryRef) -> CommitmentInferenceResult:
        if workflow.patched(STEPS_AS_ACTIVITIES):
            return await infer_and_arm(InferCommitmentsRequest(memory_ref=ref))
        return await workflow.execute_child_workflow(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref),
            id=self._ids.inference,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"infer commitments of {ref}",
        )

    async def _synthesize_proposals(self, ref: MemoryRef) -> SynthesisResult:
        info = workflow.info()
        return await call(
            SYNTHESIZE_PROPOSALS,
            SynthesisRequest(memory_ref=ref, run_id=f"{info.workflow_id}/{info.run_id}"),
            policies.SYNTHESIZE,
            summary="propose automations for recurring requests (inert until applied)",
        )

    async def _collect_garbage(self, ref: MemoryRef) -> GarbageReport:
        return await call(
            COLLECT_GARBAGE,
            IndexRequest(memory_ref=ref),
            policies.MAINTENANCE,
            summary="expire entries, archives and snapshots",
        )


def _outcome(result: DreamResult) -> DreamOutcome:
    if result.status == "skipped-overlap":
        return "skipped-overlap"
    more_left = result.distillation is not None and result.distillation.deferred_count > 0
    return "more-left" if more_left else "completed"
