"""DistillationWorkflow: one token-budgeted distillation of a memoryRef (RFC 0062 §B).

One activity selects the best-ranked undistilled entries the budget can hold (ranked in
SQL over an index, so the cost follows the budget, not the backlog), distills them and
commits archive, distilled entry, source claims, index and events in one transaction.
Sources are claimed in that transaction, so two distillations of one memoryRef never
consume the same entry: the later one commits nothing and reports already-consumed.
The workflow itself only sees ids, counts and checksums.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import CREATE_SNAPSHOT, DISTILL_MEMORY, LEGACY_DISTILL
    from schemas.capabilities import MAX_TOKEN_BUDGET
    from schemas.workflow_io import (
        DistillationInput,
        DistillationResult,
        DistillMemoryRequest,
        DistillRequest,
        SnapshotRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call

# Runs recorded before this patch froze the whole backlog into a snapshot first.
BUDGET_BOUNDED_SELECTION = "budget-bounded-selection"


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
        if not workflow.patched(BUDGET_BOUNDED_SELECTION):
            return await self._distill_from_snapshot(request, budget, run_key)
        self._show(f"Distilling {request.memory_ref} under {budget} tokens")
        result = await call(
            DISTILL_MEMORY,
            DistillMemoryRequest(
                memory_ref=request.memory_ref,
                token_budget=budget,
                run_key=run_key,
                sources=request.sources,
                index_emitted=request.index_emitted,
                when_nothing_fits=request.when_nothing_fits,
                trigger=request.trigger,
            ),
            policies.DISTILL,
            summary=f"distill under {budget} tokens",
        )
        self._report(result, budget)
        return result

    def _report(self, result: DistillationResult, budget: int) -> None:
        self._show(
            f"{result.status}: {result.source_count} of {result.snapshot_count} candidates, "
            f"{result.tokens_used}/{budget} tokens, {result.deferred_count} deferred, "
            f"{result.oversized_count} oversized, "
            f"archive {(result.archive_checksum or '-')[:12]}"
        )
        workflow.logger.info(
            "distillation finished",
            extra={
                "status": result.status,
                "sourceCount": result.source_count,
                "tokensUsed": result.tokens_used,
            },
        )

    async def _distill_from_snapshot(
        self, request: DistillationInput, budget: int, run_key: str
    ) -> DistillationResult:
        """The pre-patch command sequence, kept so recorded runs replay unchanged."""
        snapshot = await call(
            CREATE_SNAPSHOT,
            SnapshotRequest(
                memory_ref=request.memory_ref,
                snapshot_id=f"distill:{run_key}",
                source_ids=request.sources,
            ),
            policies.SNAPSHOT,
            summary="freeze input snapshot",
        )
        if snapshot.entry_count == 0:
            return DistillationResult(
                memory_ref=str(request.memory_ref),
                status="nothing-to-distill",
                snapshot_id=snapshot.snapshot_id,
                snapshot_checksum=snapshot.checksum,
                snapshot_count=0,
                token_budget=budget,
            )
        result = await call(
            LEGACY_DISTILL,
            DistillRequest(
                memory_ref=request.memory_ref,
                snapshot_id=snapshot.snapshot_id,
                token_budget=budget,
                run_key=run_key,
                index_emitted=request.index_emitted,
            ),
            policies.DISTILL,
            summary=f"distill {snapshot.entry_count} entries",
        )
        self._report(result, budget)
        return result
