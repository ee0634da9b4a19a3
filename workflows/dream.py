"""DreamWorkflow: the nightly routine a Temporal schedule starts.

Its steps and their order are declared once, in activities/dream_steps.py, which the fleet's
batch runs too: distillation, then consolidation of the long-term memory, then commitment
inference and arming (after consolidation, so an intention merged into a survivor is
inferred from the survivor), then proposals from recurring requests (inert until a reviewer
applies one, workflows/proposal.py), then garbage collection. Distillation runs as a child
workflow whose id is derived from the memoryRef, so two dreams for one memoryRef never run
at once (a second one finds the child running and returns "skipped-overlap"). Consolidation,
inference and garbage collection are activities of the dream, each shown in the UI with its
summary: as child workflows they cost the Temporal server three more workflows per dream for
nothing a user sees (a pass started by hand meanwhile is serialised with this one by the
database's per-memoryRef lock, and the second finds nothing left to merge). Dreams recorded
before that (patch ``dream-steps-as-activities``) replay with their children. Every step
runs whether the one before succeeded or failed: one failing step must not also stop the
others; the dream then fails with the first failure.

With payload encryption the children's ids carry a keyed hash instead of the memoryRef
(runtime/workflow_ids.py): child ids are recorded in clear in this history. The worker
holds the key, so the workflow asks it for the ids with a local activity.

The input is validated by the data converter before this code runs: a bad memoryRef or
budget fails the run at once, naming the field (runtime/converter.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

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
        ARM_COMMITMENTS,
        CHILD_WORKFLOW_IDS,
        COLLECT_GARBAGE,
        CONSOLIDATE_MEMORY,
        INFER_COMMITMENTS,
        SYNTHESIZE_PROPOSALS,
    )
    from activities.dream_steps import (
        ARM,
        COLLECT_GARBAGE_STEP,
        CONSOLIDATE,
        DISTILL,
        DREAM_STEPS,
        INFER,
        PROPOSE,
        runs_every_step,
    )
    from runtime.product_metrics import DreamOutcome, ProductMetrics
    from runtime.search_attributes import attributes_of, updates_of
    from runtime.workflow_ids import PLAIN
    from schemas.commitments import (
        ArmCommitmentsRequest,
        ArmReport,
        CommitmentInferenceInput,
        CommitmentInferenceResult,
        InferCommitmentsRequest,
        InferenceResult,
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
    from workflows.commitment_inference import CommitmentInferenceWorkflow
    from workflows.consolidation import ConsolidationWorkflow
    from workflows.distillation import DistillationWorkflow


# Consolidation, inference and arming as the dream's own activities (before: children).
STEPS_AS_ACTIVITIES = "dream-steps-as-activities"
# Reviewable learning (RFC 0096): recurring requests become inert proposals.
SYNTHESIZE_STEP = "dream-proposals"
# The steps declared once (activities/dream_steps.py): arming runs after a failed
# inference, as in the fleet's batch.
ARM_AFTER_FAILED_INFERENCE = "dream-arm-after-failed-inference"


def distillation_workflow_id(memory_ref: MemoryRef | str) -> str:
    """The readable id (payload encryption off); runtime/workflow_ids.py has both."""
    return PLAIN.distillation(memory_ref)


def dream_workflow_id(memory_ref: MemoryRef | str) -> str:
    """A dream started by hand (memoryctl dream run); scheduled ones carry the
    schedule's id. Both distil under distillation_workflow_id, so never at once."""
    return PLAIN.dream(memory_ref)


@workflow.defn
class DreamWorkflow:
    def __init__(self) -> None:
        # What the commitment steps pass on: arming reports with the inference before it.
        self._inference: InferenceResult | None = None
        self._inferred_by_child: CommitmentInferenceResult | None = None

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
        self._ids = await self._child_ids(ref)
        done: dict[str, Any] = {}
        # The steps and their order come from activities/dream_steps.py, as the fleet's.
        for step in DREAM_STEPS:
            try:
                done[step.name] = await self._steps[step.name](request)
            except WorkflowAlreadyStartedError:
                if step is DISTILL:
                    # The dream that is running consolidates and collects garbage itself.
                    workflow.logger.warning("another dream is distilling this memoryRef")
                    workflow.set_current_details("Skipped: a dream for this memoryRef is running")
                    return DreamResult(
                        memory_ref=str(ref), tenant=ref.tenant, status="skipped-overlap"
                    )
                workflow.logger.warning("a %s of this memoryRef is running; skipping", step.name)
            except (ChildWorkflowError, ActivityError) as error:
                if step is DISTILL:
                    # The run still fails visibly, but the other maintenance goes on.
                    workflow.set_current_details("Distillation failed; maintenance goes on")
                failure = failure or error
        distillation: DistillationResult | None = done.get(DISTILL.name)
        if failure is not None or distillation is None:
            raise failure or ApplicationError("distillation returned nothing")
        consolidation: ConsolidationResult | None = done.get(CONSOLIDATE.name)
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
            commitments=self._commitments(done),
            proposals=done.get(PROPOSE.name),
            garbage=done.get(COLLECT_GARBAGE_STEP.name),
        )

    def _commitments(self, done: dict[str, Any]) -> CommitmentInferenceResult | None:
        """Inference and arming, reported together (DreamResult.commitments)."""
        if self._inferred_by_child is not None:
            return self._inferred_by_child
        inference, armed = done.get(INFER.name), done.get(ARM.name)
        if inference is None or armed is None:
            return None
        return CommitmentInferenceResult(inference=inference, armed=armed)

    @property
    def _steps(self) -> dict[str, Callable[[DreamInput], Awaitable[Any]]]:
        """How this workflow runs each declared step (activities/dream_steps.py)."""
        table: dict[str, Callable[[DreamInput], Awaitable[Any]]] = {
            DISTILL.name: self._distill,
            CONSOLIDATE.name: self._consolidate,
            INFER.name: self._infer,
            ARM.name: self._arm,
            PROPOSE.name: self._synthesize_proposals,
            COLLECT_GARBAGE_STEP.name: self._collect_garbage,
        }
        runs_every_step("DreamWorkflow", table)
        return table

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

    async def _distill(self, request: DreamInput) -> DistillationResult:
        ref, token_budget = request.memory_ref, request.token_budget
        return await workflow.execute_child_workflow(
            DistillationWorkflow.run,
            # Unattended: an entry too large for the budget is reported, never a failure.
            DistillationInput(memory_ref=ref, token_budget=token_budget, when_nothing_fits="defer"),
            id=self._ids.distillation,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"distill {ref}",
        )

    async def _consolidate(self, request: DreamInput) -> ConsolidationResult | None:
        ref = request.memory_ref
        # Dreams recorded before consolidation joined them replay without it.
        if not workflow.patched("dream-consolidation"):
            return None
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
                summary=CONSOLIDATE.summary,
            )
        return await workflow.execute_child_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=ref, trigger="scheduled"),
            id=self._ids.consolidation,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"consolidate {ref}",
        )

    async def _infer(self, request: DreamInput) -> InferenceResult | None:
        ref = request.memory_ref
        if not workflow.patched("dream-commitments"):
            return None
        if workflow.patched(STEPS_AS_ACTIVITIES):
            self._inference = await call(
                INFER_COMMITMENTS,
                InferCommitmentsRequest(memory_ref=ref),
                policies.INFER,
                summary=INFER.summary,
            )
            return self._inference
        # Dreams recorded before then ran inference and arming as one child workflow.
        self._inferred_by_child = await workflow.execute_child_workflow(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref),
            id=self._ids.inference,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=attributes_of(ref),
            static_summary=f"infer commitments of {ref}",
        )
        return self._inferred_by_child.inference

    async def _arm(self, request: DreamInput) -> ArmReport | None:
        if not workflow.patched("dream-commitments") or self._inferred_by_child is not None:
            return None  # not yet a step, or armed by the inference child of older dreams
        # Arming resumes what earlier runs recorded, so it runs after a failed inference
        # too (the fleet always did); dreams recorded before skipped it then.
        if self._inference is None and not workflow.patched(ARM_AFTER_FAILED_INFERENCE):
            return None
        return await call(
            ARM_COMMITMENTS,
            ArmCommitmentsRequest(memory_ref=request.memory_ref),
            policies.ARM,
            summary=ARM.summary,
        )

    async def _synthesize_proposals(self, request: DreamInput) -> SynthesisResult | None:
        # Dreams recorded before reviewable learning replay without synthesis.
        if not workflow.patched(SYNTHESIZE_STEP):
            return None
        ref = request.memory_ref
        info = workflow.info()
        return await call(
            SYNTHESIZE_PROPOSALS,
            SynthesisRequest(memory_ref=ref, run_id=f"{info.workflow_id}/{info.run_id}"),
            policies.SYNTHESIZE,
            summary=PROPOSE.summary,
        )

    async def _collect_garbage(self, request: DreamInput) -> GarbageReport:
        return await call(
            COLLECT_GARBAGE,
            IndexRequest(memory_ref=request.memory_ref),
            policies.MAINTENANCE,
            summary=COLLECT_GARBAGE_STEP.summary,
        )


def _outcome(result: DreamResult) -> DreamOutcome:
    if result.status == "skipped-overlap":
        return "skipped-overlap"
    more_left = result.distillation is not None and result.distillation.deferred_count > 0
    return "more-left" if more_left else "completed"
