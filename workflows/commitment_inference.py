"""CommitmentInferenceWorkflow: find standing intentions in a memoryRef's entries written
since the durable watermark, record each as a commitment once, and start one workflow
per new commitment. A dream runs it as a child after consolidation; on demand:

    temporal workflow start --type CommitmentInferenceWorkflow --task-queue agent-memory \
        --input '{"memoryRef": "mem://acme/agent-1"}'

Entries that read like commitments but cannot be parsed are counted and listed by id in
the result, never guessed.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import ARM_COMMITMENTS, INFER_COMMITMENTS
    from runtime.search_attributes import updates_of
    from runtime.workflow_ids import PLAIN
    from schemas.commitments import (
        ArmCommitmentsRequest,
        CommitmentInferenceInput,
        CommitmentInferenceResult,
        InferCommitmentsRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call


def inference_workflow_id(memory_ref: object) -> str:
    """The readable id (payload encryption off); runtime/workflow_ids.py has both."""
    return PLAIN.inference(str(memory_ref))


@workflow.defn
class CommitmentInferenceWorkflow:
    @workflow.run
    async def run(self, request: CommitmentInferenceInput) -> CommitmentInferenceResult:
        ref = request.memory_ref
        workflow.upsert_search_attributes(updates_of(ref))
        workflow.set_current_details(f"Looking for commitments in {ref}")
        result = await infer_and_arm(InferCommitmentsRequest.model_validate(request.model_dump()))
        inference, armed = result.inference, result.armed
        workflow.logger.info(
            "inference over %s: %d scanned, %d new, %d unparsable, %d started",
            ref,
            inference.scanned,
            inference.created,
            inference.unparsable_count,
            armed.started,
        )
        # What the UI shows: the kinds count every commitment read, new or known.
        workflow.set_current_details(
            f"Done: {inference.scanned} scanned, "
            f"{inference.created + inference.already_known} commitments found "
            f"({inference.time_commitments} time, {inference.predicate_commitments} predicate), "
            f"{inference.created} new, {inference.unparsable_count} not understood, "
            f"{armed.started} workflows started, {armed.deferred} due later left to the "
            "horizon workflow"
        )
        return result


async def infer_and_arm(request: InferCommitmentsRequest) -> CommitmentInferenceResult:
    """The two activities, as this workflow and a dream run them: parse what was written
    since the watermark, then arm (which also resumes commitments an earlier run recorded
    but did not start)."""
    inference = await call(
        INFER_COMMITMENTS,
        request,
        policies.INFER,
        summary="parse intentions written since the watermark",
    )
    armed = await call(
        ARM_COMMITMENTS,
        ArmCommitmentsRequest(memory_ref=request.memory_ref),
        policies.ARM,
        summary="arm the commitments due within the horizon",
    )
    return CommitmentInferenceResult(inference=inference, armed=armed)
