"""DistillationWorkflow: one token-budgeted distillation of a memoryRef (RFC 0062 §B).

Two steps, both activities: freeze the input (a read snapshot) and distill it, where the
second commits archive, distilled entry, index and events in one idempotent transaction.
The workflow itself only sees ids, counts and checksums.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.memory_activities import MemoryActivities
    from schemas.capabilities import MAX_TOKEN_BUDGET
    from schemas.workflow_io import (
        DistillationInput,
        DistillationResult,
        DistillRequest,
        SnapshotRequest,
    )
    from workflows import policies


def effective_budget(requested: int | None) -> int:
    """RFC 0062 §B.2: clamp to maxTokenBudget; absent means maxTokenBudget."""
    return min(requested or MAX_TOKEN_BUDGET, MAX_TOKEN_BUDGET)


@workflow.defn
class DistillationWorkflow:
    def __init__(self) -> None:
        self._details = "starting"

    @workflow.query
    def progress(self) -> str:
        return self._details

    def _show(self, details: str) -> None:
        self._details = details
        workflow.set_current_details(details)

    @workflow.run
    async def run(self, request: DistillationInput) -> DistillationResult:
        budget = effective_budget(request.token_budget)
        info = workflow.info()
        run_key = f"{info.workflow_id}/{info.run_id}"
        self._show(f"Freezing the input of {request.memory_ref} (budget {budget} tokens)")
        snapshot = await workflow.execute_activity_method(
            MemoryActivities.create_snapshot,
            SnapshotRequest(
                memory_ref=request.memory_ref,
                snapshot_id=f"distill:{run_key}",
                source_ids=request.sources,
            ),
            start_to_close_timeout=policies.SNAPSHOT_TIMEOUT,
            retry_policy=policies.STORE_RETRY,
            summary="freeze input snapshot",
        )
        if snapshot.entry_count == 0:
            self._show("Nothing new to distill")
            return DistillationResult(
                memory_ref=request.memory_ref,
                status="nothing-to-distill",
                snapshot_id=snapshot.snapshot_id,
                snapshot_checksum=snapshot.checksum,
                snapshot_count=0,
                token_budget=budget,
            )
        self._show(f"Distilling {snapshot.entry_count} entries under {budget} tokens")
        result = await workflow.execute_activity_method(
            MemoryActivities.distill,
            DistillRequest(
                memory_ref=request.memory_ref,
                snapshot_id=snapshot.snapshot_id,
                token_budget=budget,
                run_key=run_key,
                index_emitted=request.index_emitted,
            ),
            start_to_close_timeout=policies.DISTILL_TIMEOUT,
            heartbeat_timeout=policies.HEARTBEAT_TIMEOUT,
            retry_policy=policies.STORE_RETRY,
            summary=f"distill {snapshot.entry_count} entries",
        )
        self._show(
            f"Distilled {result.source_count} of {snapshot.entry_count} entries, "
            f"{result.tokens_used}/{budget} tokens, archive {(result.archive_checksum or '-')[:12]}"
        )
        workflow.logger.info(
            "distillation finished",
            extra={"sourceCount": result.source_count, "tokensUsed": result.tokens_used},
        )
        return result
