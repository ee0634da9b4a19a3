"""PredicateWatchWorkflow: one predicate commitment ("follow up when the contract is
signed"), workflow id ``commitment/<commitmentId>``.

It evaluates the predicate when it starts and then again each time it is signalled
``memory_changed``, with no timer: a watch with nothing changing costs no workflow task.
The worker's change listener sends that signal after every committed write that changes
the watch's memoryRef (runtime/change_listener.py; a PostgreSQL trigger notifies it, so
no write path can forget), and its safety sweep re-sends it to any watch that missed a
change. A host that knows something else changed (a predicate of its own reading its
CRM) sends it too:
``temporal workflow signal --workflow-id commitment/<id> --name memory_changed``. The
evaluation activity compares with the state the store recorded and fires once per
false -> true transition, claiming ``transition:<n>`` in the ledger in the same
transaction as commitment.fired, so a duplicate signal fires nothing. The watch continues
as new when Temporal suggests it (or every MAX_EVALUATIONS_PER_RUN evaluations), so its
history stays bounded.

Runs started before change notifications evaluated every ``cadenceSeconds`` as well;
``workflow.patched(NOTIFIED)`` keeps them (and their recorded histories) on that path
until they continue as new.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import EVALUATE_PREDICATE
    from runtime.search_attributes import updates_of
    from schemas.commitments import (
        PREDICATE_WATCH_WORKFLOW,
        EvaluatePredicateRequest,
        PredicateOutcome,
        PredicateWatchInput,
        PredicateWatchStatus,
    )
    from workflows import policies
    from workflows.activity_calls import call
    from workflows.commitment_cancel import cancelling_the_commitment_if_cancelled
    from workflows.commitment_runs import enqueue_agent_run

MAX_EVALUATIONS_PER_RUN = 200
# Runs that record this marker wait for a memory_changed signal with no cadence timer.
NOTIFIED = "predicate-watch-waits-for-notifications"


@workflow.defn(name=PREDICATE_WATCH_WORKFLOW)
class PredicateWatchWorkflow:
    def __init__(self) -> None:
        self._changed = False
        self._status: PredicateWatchStatus | None = None

    @workflow.signal(name="memory_changed")
    def memory_changed(self) -> None:
        self._changed = True

    @workflow.query(name="status")
    def status(self) -> PredicateWatchStatus | None:
        return self._status

    @workflow.run
    async def run(self, request: PredicateWatchInput) -> PredicateWatchStatus:
        ref = request.memory_ref
        workflow.upsert_search_attributes(updates_of(ref))
        return await cancelling_the_commitment_if_cancelled(
            request.commitment_id, ref, self._watch(request)
        )

    async def _watch(self, request: PredicateWatchInput) -> PredicateWatchStatus:
        ref = request.memory_ref
        evaluations, fires = request.evaluations, request.fires
        for _ in range(MAX_EVALUATIONS_PER_RUN):
            self._changed = False
            outcome = await self._evaluate(request)
            evaluations += 1
            if outcome.fired:
                fires += 1
                if outcome.enqueued_run_id is not None:
                    await enqueue_agent_run(ref, outcome.enqueued_run_id)
            self._status = PredicateWatchStatus(
                commitment_id=request.commitment_id,
                evaluations=evaluations,
                fires=fires,
                holds=outcome.holds,
                state=outcome.state,
            )
            if outcome.status != "evaluated":
                workflow.set_current_details(f"Done: {outcome.status}")
                return self._status
            workflow.set_current_details(
                f"Watching: holds={outcome.holds}, {fires} fired, {evaluations} evaluations"
            )
            if workflow.info().is_continue_as_new_suggested():
                break
            await self._until_changed(request)
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(
            PredicateWatchInput(
                commitment_id=request.commitment_id,
                memory_ref=ref,
                cadence_seconds=request.cadence_seconds,
                evaluations=evaluations,
                fires=fires,
            )
        )

    async def _until_changed(self, request: PredicateWatchInput) -> None:
        if workflow.patched(NOTIFIED):
            # No timer: the change listener signals after a committed write, and its
            # sweep bounds a lost notification (docs/commitments.md, Predicate watches).
            await workflow.wait_condition(lambda: self._changed)
            return
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: self._changed,
                timeout=timedelta(seconds=request.cadence_seconds),
                timeout_summary="until the next evaluation",
            )

    async def _evaluate(self, request: PredicateWatchInput) -> PredicateOutcome:
        return await call(
            EVALUATE_PREDICATE,
            EvaluatePredicateRequest(
                commitment_id=request.commitment_id,
                memory_ref=request.memory_ref,
                evaluated_at=workflow.now(),
            ),
            policies.FIRE,
            summary="evaluate the predicate; fire on false -> true",
        )
