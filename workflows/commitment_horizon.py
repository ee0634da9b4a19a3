"""CommitmentHorizonWorkflow: arms a memoryRef's time commitments that were too far
ahead to start when they were inferred, as their instants come within ARM_HORIZON.
Workflow id ``commitment-horizon/<memoryRef>`` (or its keyed hash with payload
encryption).

Arming starts a CommitmentWorkflow only for a commitment due within ARM_HORIZON (24 h);
a later one stays armed in the store, and arming signal-with-starts this workflow with
its instant. The workflow sleeps until half a horizon before the earliest deferred
instant, then runs the same arming activity, which starts everything now within the
horizon and answers with the earliest instant still deferred; it sleeps again, and
finishes when nothing is deferred. So the run costs one activity per half horizon at
most, however many commitments it arms, and nothing at all when a memoryRef has nothing
deferred. A commitment inferred while it sleeps arrives as a signal; an earlier instant
moves its wake, a later one waits for the store's answer. The store is the source of
truth: the workflow holds only the earliest instant, so a lost wake-up is made good by
the next pass, and a commitment cancelled or forgotten meanwhile is simply not started.

Every deferred commitment is started at least half a horizon before its instant (its own
run is then held back by Temporal's start delay until just before it), so a worker
outage shorter than 12 h delays nothing. A failed pass (an outage longer than the
activity's hour of retries) is retried after RETRY_AFTER rather than failing the run,
since no one else would arm those commitments.

Arming starts it (one run per memoryRef at a time); find a memoryRef's run in the UI with
``WorkflowType = 'CommitmentHorizonWorkflow' AND MemoryRef = '<ref>'``.

The fleet's horizon (``commitment-horizon/fleet``, input without a memoryRef) is the same
workflow over every memoryRef. A fleet dream arms its agents' near commitments itself and
signals this one run once per batch of agents with the batch's earliest deferred instant,
instead of one horizon run per agent (a workflow start, its tasks and a timer each). Its
pass (the arm_deferred activity) finds, through one index, every memoryRef with a
deferred commitment now within the horizon, arms each, and answers with the earliest
instant still deferred anywhere. A memoryRef dreamed both ways is covered by both
horizons, which is harmless: a commitment's workflow id admits one run, ever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import ARM_COMMITMENTS, ARM_DEFERRED
    from runtime.search_attributes import updates_of
    from schemas.commitments import (
        ARM_HORIZON,
        COMMITMENT_HORIZON_WORKFLOW,
        DEFERRED_ENDED_SIGNAL,
        DEFERRED_SIGNAL,
        ArmCommitmentsRequest,
        ArmDeferredReport,
        ArmDeferredRequest,
        ArmReport,
        CommitmentHorizonInput,
        CommitmentHorizonResult,
        DeferredNotice,
    )
    from schemas.memory_ref import MemoryRef
    from workflows import policies
    from workflows.activity_calls import call

# A pass starts what is due within ARM_HORIZON, so the next one can wait until half a
# horizon before the earliest instant left: at most one pass per half horizon.
WAKE_BEFORE = ARM_HORIZON / 2
RETRY_AFTER = timedelta(minutes=10)
PASSES_PER_RUN = 100


@workflow.defn(name=COMMITMENT_HORIZON_WORKFLOW)
class CommitmentHorizonWorkflow:
    def __init__(self) -> None:
        # The earliest instant signalled since the current pass began (or since start).
        self._signalled: datetime | None = None
        # A deferred commitment ended before its start (its entry forgotten, the promise
        # cancelled): the instant waited for may be gone, so a pass runs now to re-read.
        self._ended = False

    @workflow.signal(name=DEFERRED_ENDED_SIGNAL)
    def deferred_ended(self) -> None:
        self._ended = True

    @workflow.signal(name=DEFERRED_SIGNAL)
    def deferred(self, notice: DeferredNotice) -> None:
        if self._signalled is None or notice.at < self._signalled:
            self._signalled = notice.at

    @workflow.run
    async def run(self, request: CommitmentHorizonInput) -> CommitmentHorizonResult:
        ref = request.memory_ref
        if ref is not None:
            workflow.upsert_search_attributes(updates_of(ref))
        earliest: datetime | None = request.earliest_at
        started = request.started_so_far
        for _ in range(PASSES_PER_RUN):
            earliest = self._with_signalled(earliest)
            if earliest is None:
                return self._done(ref, started)
            await self._sleep_until_wake(earliest, started)
            self._signalled = None
            report = await self._pass(ref)
            if report is None:
                await workflow.sleep(RETRY_AFTER, summary="retry the failed arming pass")
                continue
            started += report.started
            # A signal delivered with the activity's result runs its handler before the
            # decision to finish; one after it restarts this workflow (signal-with-start).
            await asyncio.sleep(0)
            earliest = report.next_deferred_at
            if workflow.info().is_continue_as_new_suggested():
                break
        earliest = self._with_signalled(earliest)
        if earliest is None:
            return self._done(ref, started)
        workflow.continue_as_new(
            CommitmentHorizonInput(memory_ref=ref, earliest_at=earliest, started_so_far=started)
        )

    def _done(self, ref: MemoryRef | None, started: int) -> CommitmentHorizonResult:
        # The details outlive the run in the UI: they name no instant of a promise gone.
        workflow.set_current_details(f"Done: no deferred commitment left; {started} started")
        return CommitmentHorizonResult(memory_ref=_named(ref), started=started)

    def _with_signalled(self, earliest: datetime | None) -> datetime | None:
        signalled, self._signalled = self._signalled, None
        if signalled is None:
            return earliest
        return signalled if earliest is None else min(earliest, signalled)

    async def _sleep_until_wake(self, earliest: datetime, started: int) -> None:
        """Sleep until WAKE_BEFORE the earliest instant; a signal with an earlier one
        moves the wake, and one that a deferred commitment ended ends the sleep (the pass
        that follows re-reads what is still deferred)."""
        while (wait := earliest - WAKE_BEFORE - workflow.now()) > timedelta():
            if self._ended:
                self._ended = False
                return
            workflow.set_current_details(
                f"Waiting: next deferred commitment due {earliest.isoformat()}, armed "
                f"from {(earliest - WAKE_BEFORE).isoformat()}; {started} started so far"
            )
            try:
                await workflow.wait_condition(
                    self._earlier_than(earliest),
                    timeout=wait,
                    timeout_summary="until the next deferred commitment comes within the horizon",
                )
            except TimeoutError:
                return
            earliest = self._with_signalled(earliest) or earliest

    def _earlier_than(self, due: datetime) -> Callable[[], bool]:
        return lambda: self._ended or (self._signalled is not None and self._signalled < due)

    async def _pass(self, ref: MemoryRef | None) -> ArmReport | ArmDeferredReport | None:
        """Arm what is now within the horizon: the memoryRef's, or every memoryRef's."""
        workflow.set_current_details("Arming the commitments now within the horizon")
        summary = "start the workflows of commitments now within the horizon"
        try:
            report: ArmReport | ArmDeferredReport
            if ref is None:
                report = await call(
                    ARM_DEFERRED,
                    ArmDeferredRequest(as_of=workflow.now()),
                    policies.ARM_FLEET,
                    summary=f"{summary}, in every memoryRef",
                )
            else:
                report = await call(
                    ARM_COMMITMENTS,
                    ArmCommitmentsRequest(memory_ref=ref, from_horizon=True, as_of=workflow.now()),
                    policies.ARM,
                    summary=summary,
                )
        except ActivityError:
            workflow.logger.warning("arming pass failed; retrying in %s", RETRY_AFTER)
            return None
        workflow.logger.info(
            "horizon pass: %d started, %d still deferred", report.started, report.deferred
        )
        return report


def _named(ref: MemoryRef | None) -> str | None:
    return None if ref is None else str(ref)
