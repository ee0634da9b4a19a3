"""Commitments' activities: infer, arm (start one workflow per commitment due within
ARM_HORIZON, hand the later ones to the memoryRef's horizon workflow, or a fleet dream's
to the fleet's), the fleet horizon's pass, fire a time occurrence, evaluate a predicate.

Arming is an activity with a Temporal client rather than child workflows: an inference
over thousands of new commitments would otherwise put two history events per commitment
into the inference's history, and the workflows must outlive it anyway. Each start uses
the commitment's own workflow id with a reuse policy that rejects duplicates, so a
retried or repeated arm starts nothing twice; the occurrence ledger guards firing even
after Temporal's retention has forgotten a closed run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.common import (
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

from activities.boundary import content_free
from activities.contracts import (
    ARM_COMMITMENTS,
    ARM_DEFERRED,
    CANCEL_COMMITMENT,
    EVALUATE_PREDICATE,
    FIRE_COMMITMENT,
    INFER_COMMITMENTS,
)
from activities.heartbeat import progress
from memory.commitments.records import UnarmedCommitment
from memory.commitments.store import CommitmentStore
from memory.fleet.maintenance_writes import maintenance_writes
from runtime.product_metrics import ProductMetrics
from runtime.search_attributes import attributes_of
from runtime.workflow_ids import PLAIN, WorkflowIds
from schemas.commitments import (
    ARM_HORIZON,
    COMMITMENT_HORIZON_WORKFLOW,
    COMMITMENT_WORKFLOW,
    DEFERRED_SIGNAL,
    PREDICATE_WATCH_WORKFLOW,
    ArmCommitmentsRequest,
    ArmDeferredReport,
    ArmDeferredRequest,
    ArmReport,
    CancelCommitmentRequest,
    CancelOutcome,
    CommitmentHorizonInput,
    CommitmentInput,
    DeferredNotice,
    EvaluatePredicateRequest,
    FireCommitmentRequest,
    FireOutcome,
    InferCommitmentsRequest,
    InferenceResult,
    PredicateOutcome,
    PredicateWatchInput,
    commitment_workflow_id,
)
from schemas.memory_ref import MemoryRef

ARM_BATCH = 500
# MemoryRefs read per query by the fleet's horizon pass.
REFS_PER_PAGE = 500
# Starts in flight at once per arming activity. Sequential starts armed about 50/s (one
# dev-server round trip each); concurrent ones reach the server's own start rate, which
# measured the same at 4, 16 and 64 in flight. 16 keeps 20 arming runs' queue of starts
# short enough that a start's round trip never used more than 0.6 s of START_LEAD
# (docs/performance.md, Commitments).
ARM_CONCURRENCY = 16
# How long before its instant a held-back time commitment's run begins. The start delay
# counts from when the server handles the start, which a burst of arming delays by up to
# seconds; the run's own timer absorbs that, measured from its first task.
START_LEAD = timedelta(seconds=5)


@dataclass
class _Tally:
    """What an arming activity has done so far, for its heartbeat and its report."""

    started: int = 0
    already: int = 0
    # The fleet's pass also reports the memoryRefs it has armed.
    counts_refs: bool = False
    refs: int = 0

    def details(self) -> dict[str, int]:
        details = {"started": self.started, "alreadyRunning": self.already}
        if self.counts_refs:
            details["memoryRefs"] = self.refs
        return details


class CommitmentActivities:
    def __init__(
        self,
        commitments: CommitmentStore,
        client: Client,
        task_queue: str,
        ids: WorkflowIds = PLAIN,
    ) -> None:
        self.commitments = commitments
        self.client = client
        self.task_queue = task_queue
        self.ids = ids

    @activity.defn(name=INFER_COMMITMENTS.name)
    @content_free
    async def infer_commitments(self, request: InferCommitmentsRequest) -> InferenceResult:
        with maintenance_writes():
            return await self.commitments.infer(request)

    @activity.defn(name=ARM_COMMITMENTS.name)
    @content_free
    async def arm_commitments(self, request: ArmCommitmentsRequest) -> ArmReport:
        ref = request.memory_ref
        tally = _Tally()
        # Later ones stay in the store for the horizon workflow; a pass that runs across
        # the boundary only starts a little early, which the start delay absorbs.
        now = request.as_of or datetime.now(UTC)
        horizon_end = now + ARM_HORIZON
        await self._arm(ref, now, horizon_end, tally)
        deferred, next_deferred_at = await self.commitments.deferred(ref, horizon_end)
        if next_deferred_at is not None and not request.from_horizon:
            await self._hand_to_horizon(ref, next_deferred_at)
        ProductMetrics.in_activity().armed(tally.started)
        return ArmReport(
            memory_ref=str(ref),
            started=tally.started,
            already_running=tally.already,
            deferred=deferred,
            next_deferred_at=next_deferred_at,
        )

    @activity.defn(name=ARM_DEFERRED.name)
    @content_free
    async def arm_deferred(self, request: ArmDeferredRequest) -> ArmDeferredReport:
        """The fleet's horizon pass: arm every memoryRef with a deferred commitment now
        within the horizon, page by page, then report the earliest one left anywhere."""
        tally = _Tally(counts_refs=True)
        horizon_end = request.as_of + ARM_HORIZON
        after: MemoryRef | None = None
        while refs := await self.commitments.refs_to_arm(horizon_end, after, REFS_PER_PAGE):
            for ref in refs:
                await self._arm(ref, request.as_of, horizon_end, tally)
                tally.refs += 1
            after = refs[-1]
        deferred, next_deferred_at = await self.commitments.deferred(None, horizon_end)
        ProductMetrics.in_activity().armed(tally.started)
        return ArmDeferredReport(
            memory_refs=tally.refs,
            started=tally.started,
            already_running=tally.already,
            deferred=deferred,
            next_deferred_at=next_deferred_at,
        )

    async def _arm(
        self, ref: MemoryRef, now: datetime, horizon_end: datetime, tally: _Tally
    ) -> None:
        """Start the workflows of ``ref``'s commitments due before ``horizon_end``."""
        slots = asyncio.Semaphore(ARM_CONCURRENCY)

        async def start(row: UnarmedCommitment) -> bool:
            async with slots:
                fresh = await self._start(ref, row, now)
            if fresh:
                tally.started += 1
            else:
                tally.already += 1
            progress()(tally.details())
            return fresh

        while batch := await self.commitments.unarmed(ref, ARM_BATCH, due_before=horizon_end):
            # Every start of the batch runs to its end before anything is marked: a start
            # that failed leaves its commitment unarmed for the activity's retry, whose
            # second start of the ones that did start is a no-op (REJECT_DUPLICATE).
            results = await asyncio.gather(*(start(row) for row in batch), return_exceptions=True)
            done = [
                row.commitment_id
                for row, r in zip(batch, results, strict=True)
                if r is True or r is False
            ]
            await self.commitments.mark_armed(ref, done)
            failed = [r for r in results if isinstance(r, BaseException)]
            if failed:
                raise ApplicationError(
                    f"{len(failed)} of {len(batch)} commitment workflow starts failed "
                    f"({type(failed[0]).__name__}); {len(done)} armed, the rest retry",
                    type="ArmStartFailed",
                )

    async def _hand_to_horizon(self, ref: MemoryRef, earliest: datetime) -> None:
        """Signal-with-start the memoryRef's horizon workflow: a running one takes the
        instant as a signal (re-planning its wake if it is earlier); otherwise a new run
        starts with it. The deferred rows were committed before this call, so whichever
        run gets the signal arms them (workflows/commitment_horizon.py)."""
        await self._signal_horizon(
            CommitmentHorizonInput(memory_ref=ref, earliest_at=earliest),
            self.ids.commitment_horizon(ref),
            attributes_of(ref),
            f"arms the time commitments of {ref}",
        )

    async def hand_to_fleet_horizon(self, earliest: datetime) -> None:
        """The same for a fleet dream's batch: one signal to the fleet's horizon, whose
        pass arms every memoryRef's deferred commitments from the store."""
        await self._signal_horizon(
            CommitmentHorizonInput(earliest_at=earliest),
            self.ids.fleet_commitment_horizon(),
            None,
            "arms the deferred time commitments of every memoryRef",
        )

    async def _signal_horizon(
        self,
        start: CommitmentHorizonInput,
        workflow_id: str,
        search_attributes: TypedSearchAttributes | None,
        what: str,
    ) -> None:
        await self.client.start_workflow(
            COMMITMENT_HORIZON_WORKFLOW,
            start,
            id=workflow_id,
            task_queue=self.task_queue,
            start_signal=DEFERRED_SIGNAL,
            start_signal_args=[DeferredNotice(at=start.earliest_at)],
            # One run at a time per horizon; a closed one is replaced by a new run.
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=search_attributes,
            static_summary=(
                f"{what} as they come within "
                f"{int(ARM_HORIZON.total_seconds() // 3600)} h of their instant"
            ),
            task_timeout=timedelta(seconds=10),
        )

    async def _start(self, ref: MemoryRef, row: UnarmedCommitment, now: datetime) -> bool:
        workflow: str
        argument: CommitmentInput | PredicateWatchInput
        delay: timedelta | None = None
        if row.condition == "time":
            workflow = COMMITMENT_WORKFLOW
            argument = CommitmentInput(
                commitment_id=row.commitment_id, memory_ref=ref, due_at=row.next_at
            )
            # Temporal holds the run back until START_LEAD before the instant, so arming
            # runs no workflow task and a worker holds no armed run. The run's own durable
            # timer covers the lead and is the guard: a cancel or signal that starts the
            # run early still waits for the instant (docs/performance.md, Commitments).
            if row.next_at is not None:
                ahead = row.next_at - START_LEAD - now
                delay = ahead if ahead > timedelta() else None
        else:
            workflow = PREDICATE_WATCH_WORKFLOW
            argument = PredicateWatchInput(commitment_id=row.commitment_id, memory_ref=ref)
        try:
            await self.client.start_workflow(
                workflow,
                argument,
                id=commitment_workflow_id(row.commitment_id),
                task_queue=self.task_queue,
                # A commitment's workflow runs once, ever: neither a running nor a
                # closed run with this id may be started again.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                search_attributes=attributes_of(ref),
                # What inference understood, ids and instants only (no text): the UI
                # shows it before the run starts (a held-back start has no details yet).
                static_summary=row.summary(ref),
                # Not bounded by an execution timeout: a recurring commitment continues
                # as new for as long as it is armed; cancel ends it.
                task_timeout=timedelta(seconds=10),
                start_delay=delay,
            )
        except WorkflowAlreadyStartedError:
            return False
        return True

    @activity.defn(name=FIRE_COMMITMENT.name)
    @content_free
    async def fire_commitment(self, request: FireCommitmentRequest) -> FireOutcome:
        outcome = await self.commitments.fire(request)
        ProductMetrics.in_activity().fired(outcome, request.fired_at - request.due_at)
        return outcome

    @activity.defn(name=EVALUATE_PREDICATE.name)
    @content_free
    async def evaluate_predicate(self, request: EvaluatePredicateRequest) -> PredicateOutcome:
        # A retry reports the firing its first attempt committed (memory/commitments/firing.py).
        return await self.commitments.evaluate(request, retried=activity.info().attempt > 1)

    @activity.defn(name=CANCEL_COMMITMENT.name)
    @content_free
    async def cancel_commitment(self, request: CancelCommitmentRequest) -> CancelOutcome:
        """A cancelled workflow cancels its commitment too, so `temporal workflow
        cancel` and `memoryctl commitments cancel` leave the same state."""
        record = await self.commitments.cancel(str(request.memory_ref), request.commitment_id)
        return CancelOutcome(
            commitment_id=request.commitment_id, state=record.state if record else None
        )

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.infer_commitments,
            self.arm_commitments,
            self.arm_deferred,
            self.fire_commitment,
            self.evaluate_predicate,
            self.cancel_commitment,
        ]
