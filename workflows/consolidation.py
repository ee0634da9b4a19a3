"""ConsolidationWorkflow: one consolidation pass over a memoryRef's long-term entries
(RFC 0068 §D). Started by a dream (trigger "scheduled"), by memoryctl or from the
Temporal CLI (trigger "on-demand"):

    temporal workflow start --type ConsolidationWorkflow --task-queue agent-memory \
        --input '{"memoryRef": "mem://acme/agent-1"}'

The pass is one activity: reading, planning and committing happen next to the database,
and the workflow carries only ids and counts. Its run key (workflow id + run id) makes a
retried activity return the recorded pass; a reset run is a new pass, which over an
unchanged corpus changes nothing. A run that starts this workflow as its child while it
holds a session snapshot of the same memoryRef is refused (consolidation_refused): a run
must not mutate what it is reading mid-run (RFC 0068, replay ruling).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CONSOLIDATE_MEMORY
    from runtime.search_attributes import updates_of
    from runtime.workflow_ids import PLAIN
    from schemas.consolidation import (
        ConsolidateMemoryRequest,
        ConsolidationInput,
        ConsolidationResult,
    )
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.agent_run import session_snapshot_id


def consolidation_workflow_id(memory_ref: object) -> str:
    """The readable id (payload encryption off); runtime/workflow_ids.py has both."""
    return PLAIN.consolidation(str(memory_ref))


@workflow.defn
class ConsolidationWorkflow:
    @workflow.run
    async def run(self, request: ConsolidationInput) -> ConsolidationResult:
        info = workflow.info()
        ref = request.memory_ref
        workflow.upsert_search_attributes(updates_of(ref))
        workflow.set_current_details(f"Consolidating the long-term memory of {ref}")
        parent = info.parent
        result = await call(
            CONSOLIDATE_MEMORY,
            ConsolidateMemoryRequest(
                memory_ref=ref,
                run_key=f"{info.workflow_id}/{info.run_id}",
                trigger=request.trigger,
                paraphrases=request.paraphrases,
                requested_by_session=(
                    session_snapshot_id(parent.workflow_id, parent.run_id) if parent else None
                ),
            ),
            policies.CONSOLIDATE,
            summary="merge duplicates, supersede stale keys, record conflicts",
        )
        workflow.logger.info(
            "consolidation pass %s: %d -> %d entries",
            result.pass_id,
            result.input_count,
            result.output_count,
        )
        workflow.set_current_details(
            f"Done: {result.input_count} -> {result.output_count} entries "
            f"({result.merged_count} merged, {result.superseded_count} superseded, "
            f"{result.conflict_count} new conflicts, {result.skipped_clusters} left for later)"
        )
        return result
