"""Fleet dreams' activities: find the memoryRefs with work, and dream a batch of agents in
one activity.

A dream of one agent is the steps a DreamWorkflow schedules, declared once in
activities/dream_steps.py (distill under the budget, consolidate, infer commitments, arm
them, propose automations of recurring requests, collect garbage), run here in that
order by calling the very same activity methods, so the two paths cannot drift. What changes is the
Temporal cost: one activity for a batch of agents instead of four workflows and a dozen
activities per agent. What stays:

- Exactly once per agent: every step is keyed by ``<runKey>/<memoryRef>`` or claims what
  it consumes in the database (distillation's source claims, the consolidation pass's
  run key, inference's watermark, arming's reject-duplicate workflow ids, proposals'
  derived ids), so a batch
  retried after a crash applies each agent once.
- Commitments due beyond the arming horizon go to the fleet's horizon workflow, one
  signal per batch (workflows/commitment_horizon.py), not one horizon run per agent.
- Progress: the heartbeat carries how many agents of the batch are done, and a retry
  resumes after them.
- One failing agent does not stop the others: a step that fails for that agent (bad
  data, a vault that refuses a secret) is reported by its error code and the agent stays
  due; only the database being unavailable fails the batch, whose retry rides it out.
- Every write is maintenance (memory/fleet/maintenance_writes.py), and an agent is marked
  dreamed up to the work it read before its first step, so a write that lands while it
  is dreamed keeps it due.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.boundary import content_free
from activities.commitment_activities import CommitmentActivities
from activities.contracts import DREAM_AGENTS, FIND_DUE_REFS
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
from activities.heartbeat import progress
from activities.memory_activities import MemoryActivities
from activities.proposal_activities import ProposalActivities
from memory.fleet.maintenance_writes import maintenance_writes
from memory.fleet.selection import FleetSelection
from runtime.product_metrics import DreamOutcome, ProductMetrics
from schemas.commitments import (
    ArmCommitmentsRequest,
    ArmReport,
    InferCommitmentsRequest,
    InferenceResult,
)
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.errors import ErrorCode
from schemas.fleet import (
    AgentDream,
    AgentStatus,
    DreamAgentsRequest,
    DreamAgentsResult,
    DueRefs,
    DueRefsRequest,
)
from schemas.memory_ref import MemoryRef
from schemas.proposals import SynthesisRequest, SynthesisResult
from schemas.workflow_io import (
    DistillationResult,
    DistillMemoryRequest,
    GarbageReport,
    IndexRequest,
)

T = TypeVar("T")


class FleetActivities:
    def __init__(
        self,
        work: FleetSelection,
        memory: MemoryActivities,
        commitments: CommitmentActivities,
        proposals: ProposalActivities,
    ) -> None:
        self.work = work
        self.memory = memory
        self.commitments = commitments
        self.proposals = proposals

    @activity.defn(name=FIND_DUE_REFS.name)
    @content_free
    async def find_due_refs(self, request: DueRefsRequest) -> DueRefs:
        refs = await self.work.due(tenant=request.tenant, after=request.after, limit=request.limit)
        known: bool | None = None
        if not refs and request.tenant is not None and request.after is None:
            known = await self.work.tenant_has_memory(request.tenant)
        return DueRefs(memory_refs=tuple(str(ref) for ref in refs), tenant_has_memory=known)

    @activity.defn(name=DREAM_AGENTS.name)
    @content_free
    async def dream_agents(self, request: DreamAgentsRequest) -> DreamAgentsResult:
        # A retry resumes after the agents its earlier attempts finished; their results
        # travel in the heartbeat so the batch still reports every agent.
        finished = _resumed(activity.info().heartbeat_details)
        # Each agent's result is dumped once, not the whole list again at every beat.
        reported = [_reported(agent) for agent in finished]
        beat = progress()
        refs = request.memory_refs
        try:
            for ref in refs[len(finished) :]:
                finished.append(await self._dream_one(ref, request))
                reported.append(_reported(finished[-1]))
                beat.hold({"done": len(finished), "of": len(refs), "agents": list(reported)})
        finally:
            # Also when the batch fails: the agents it finished are marked dreamed, so
            # their deferred commitments must reach the horizon now.
            await self._hand_to_horizon(finished)
        return DreamAgentsResult(agents=tuple(finished))

    async def _hand_to_horizon(self, finished: list[AgentDream]) -> None:
        """One signal to the fleet's horizon for the whole batch: the earliest deferred
        instant of its agents. The horizon's pass reads every memoryRef's deferred
        commitments from the store, so the earliest is all it needs to wake in time."""
        deferred = [a.next_deferred_at for a in finished if a.next_deferred_at is not None]
        if deferred:
            await self.commitments.hand_to_fleet_horizon(min(deferred))

    async def _dream_one(self, ref: MemoryRef, request: DreamAgentsRequest) -> AgentDream:
        failed: list[str] = []

        async def step(name: str, call: Callable[[], Awaitable[T]]) -> T | None:
            try:
                return await call()
            except ApplicationError as error:
                if error.type == ErrorCode.STORE_UNAVAILABLE.value:
                    raise  # the batch retries; every agent would fail the same way
                failed.append(f"{name}:{error.type}")
                return None

        run_key = f"{request.run_key}/{ref}"
        calls = self._step_calls(ref, request, run_key)
        done: dict[str, Any] = {}
        with maintenance_writes():
            work_seq = await self.work.work_seq(ref)
            for dream_step in DREAM_STEPS:
                done[dream_step.name] = await step(dream_step.name, calls[dream_step.name])
            distilled: DistillationResult | None = done[DISTILL.name]
            more_left = distilled is not None and distilled.deferred_count > 0
            if not failed and not more_left:
                await self.work.mark_dreamed(ref, work_seq)
        consolidated: ConsolidationResult | None = done[CONSOLIDATE.name]
        inferred: InferenceResult | None = done[INFER.name]
        armed: ArmReport | None = done[ARM.name]
        proposed: SynthesisResult | None = done[PROPOSE.name]
        garbage: GarbageReport | None = done[COLLECT_GARBAGE_STEP.name]
        status: AgentStatus = "failed" if failed else "more-left" if more_left else "dreamed"
        ProductMetrics.in_activity().dream("fleet", _DREAM_OUTCOMES[status])
        return AgentDream(
            memory_ref=str(ref),
            status=status,
            sources=distilled.source_count if distilled else 0,
            tokens_used=distilled.tokens_used if distilled else 0,
            merged=consolidated.merged_count if consolidated else 0,
            superseded=consolidated.superseded_count if consolidated else 0,
            commitments_created=inferred.created if inferred else 0,
            workflows_started=armed.started if armed else 0,
            proposals_created=len(proposed.created) if proposed else 0,
            expired=garbage.expired_entries if garbage else 0,
            failed_steps=tuple(failed),
            next_deferred_at=armed.next_deferred_at if armed else None,
        )

    def _step_calls(
        self, ref: MemoryRef, request: DreamAgentsRequest, run_key: str
    ) -> dict[str, Callable[[], Awaitable[Any]]]:
        """How the batch runs each declared step for one agent."""
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            DISTILL.name: lambda: self.memory.distill_memory(
                DistillMemoryRequest(
                    memory_ref=ref,
                    token_budget=request.token_budget,
                    run_key=run_key,
                    # Unattended: an entry too large for the budget is reported.
                    when_nothing_fits="defer",
                )
            ),
            CONSOLIDATE.name: lambda: self.memory.consolidate_memory(
                ConsolidateMemoryRequest(memory_ref=ref, run_key=run_key, trigger="scheduled")
            ),
            INFER.name: lambda: self.commitments.infer_commitments(
                InferCommitmentsRequest(memory_ref=ref)
            ),
            # The batch hands its deferred commitments to the fleet's horizon at once.
            ARM.name: lambda: self.commitments.arm_commitments(
                ArmCommitmentsRequest(memory_ref=ref, from_horizon=True)
            ),
            PROPOSE.name: lambda: self.proposals.synthesize_proposals(
                SynthesisRequest(memory_ref=ref, run_id=run_key)
            ),
            COLLECT_GARBAGE_STEP.name: lambda: self.memory.collect_garbage(
                IndexRequest(memory_ref=ref)
            ),
        }
        runs_every_step("the fleet's batch", calls)
        return calls

    def all(self) -> list[Callable[..., Any]]:
        return [self.find_due_refs, self.dream_agents]


# An agent's status in the batch's result, as the dreams series names its outcome.
_DREAM_OUTCOMES: dict[AgentStatus, DreamOutcome] = {
    "dreamed": "completed",
    "more-left": "more-left",
    "failed": "failed",
}


def _reported(agent: AgentDream) -> dict[str, Any]:
    return agent.model_dump(mode="json", by_alias=True)


def _resumed(details: Any) -> list[AgentDream]:
    """The agents an earlier attempt of this batch finished, from its last heartbeat."""
    if not details:
        return []
    last = details[-1] if isinstance(details, list | tuple) else details
    if not isinstance(last, dict):
        return []
    return [AgentDream.model_validate(agent) for agent in last.get("agents", [])]
