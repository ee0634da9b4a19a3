"""CommitmentWorkflow: one time commitment ("remind me in 5 days", "every Thursday at
17:00"), workflow id ``commitment/<commitmentId>``.

Arming starts it with a Temporal start delay that holds the run back until a few
seconds before the due instant (START_LEAD in activities/commitment_activities.py), so
10,000 armed commitments cost no workflow task and no worker cache until then. The run
then sleeps on a durable timer for what is left (the whole wait for a run started early,
by a cancel, or as the next run of a recurrence), and one activity claims the occurrence
in the store's ledger and writes commitment.fired in the same transaction
(memory/commitments/firing.py). A recurring commitment then continues as new with its
next instant: each run holds one occurrence, so history stays a dozen events however
long the commitment lives. We chose this loop over a Temporal Schedule per commitment
because the rrule (every other week on Mon and Wed, DST-correct local times) is the
source of truth in one place, the catch-up policy is ours (a late firing accounts for
every instant it slept through, each fired or recorded missed by its own lateness; see
docs/commitments.md, Late firings), cancel is one workflow cancel, and one-off and
recurring commitments share the same code path.

Start it from the Temporal CLI only through inference (the arming activity derives the
id and input). Cancelling it (``temporal workflow cancel --workflow-id commitment/<id>``
or `memoryctl commitments cancel`) cancels the commitment in the store as well.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import FIRE_COMMITMENT
    from runtime.search_attributes import updates_of
    from schemas.commitments import (
        COMMITMENT_WORKFLOW,
        CommitmentInput,
        CommitmentRunResult,
        FireCommitmentRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.commitment_cancel import cancelling_the_commitment_if_cancelled
    from workflows.commitment_runs import enqueue_agent_run


# Enqueue the runs of the instants a late firing caught up on. A history recorded before
# it never saw any (its outcomes had none), so it replays unchanged either way.
CATCH_UP_RUNS = "commitment-catch-up-runs"


@workflow.defn(name=COMMITMENT_WORKFLOW)
class CommitmentWorkflow:
    @workflow.run
    async def run(self, request: CommitmentInput) -> CommitmentRunResult:
        ref = request.memory_ref
        workflow.upsert_search_attributes(updates_of(ref))
        return await cancelling_the_commitment_if_cancelled(
            request.commitment_id, ref, self._occurrence(request)
        )

    async def _occurrence(self, request: CommitmentInput) -> CommitmentRunResult:
        ref = request.memory_ref
        wait = request.due_at - workflow.now()
        workflow.set_current_details(f"Armed: due {request.due_at.isoformat()}")
        if wait.total_seconds() > 0:
            await workflow.sleep(wait, summary="until the commitment is due")
        outcome = await call(
            FIRE_COMMITMENT,
            FireCommitmentRequest(
                commitment_id=request.commitment_id,
                memory_ref=ref,
                due_at=request.due_at,
                fired_at=workflow.now(),
                grace_seconds=request.grace_seconds,
            ),
            policies.FIRE,
            summary="claim the occurrence and record commitment.fired",
        )
        workflow.logger.info(
            "commitment %s occurrence %s: %s",
            request.commitment_id,
            outcome.occurrence,
            outcome.status,
        )
        if outcome.enqueued_run_id is not None:
            await enqueue_agent_run(ref, outcome.enqueued_run_id)
        if outcome.catch_up_run_ids and workflow.patched(CATCH_UP_RUNS):
            # Each id derives from its occurrence and rejects a second start.
            for run_id in outcome.catch_up_run_ids:
                await enqueue_agent_run(ref, run_id)
        if outcome.next_at is None:
            workflow.set_current_details(f"Done: {outcome.status}, state {outcome.state}")
            return CommitmentRunResult(commitment_id=request.commitment_id, last=outcome)
        workflow.continue_as_new(
            CommitmentInput(
                commitment_id=request.commitment_id,
                memory_ref=ref,
                due_at=outcome.next_at,
                grace_seconds=request.grace_seconds,
            )
        )
