"""Proposal activities: a dream's synthesis, and the steps of a proposal's lifecycle.

Each step is idempotent, so duplicate delivery and a retry after the commit are
harmless: synthesis inserts by derived id; a transition made already returns the
proposal as it is; an install creates the schedule under the proposal's one schedule
id (finding it there already, it checks the schedule runs the same artifact) and then
marks the proposal applied, once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.client import Client, ScheduleAlreadyRunningError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

from activities.automation_schedules import installed_checksum, schedule_of
from activities.boundary import content_free
from activities.contracts import (
    INSTALL_PROPOSAL,
    READ_PROPOSAL,
    SYNTHESIZE_PROPOSALS,
    TRANSITION_PROPOSAL,
)
from memory.fleet.maintenance_writes import maintenance_writes
from memory.proposals.store import ProposalStore
from memory.redaction.vault import SecretVault, registry_for_tenant
from runtime.product_metrics import ProductMetrics
from runtime.search_attributes import attributes_of
from runtime.workflow_ids import PLAIN, WorkflowIds
from schemas.errors import ErrorCode
from schemas.memory_ref import parse_memory_ref
from schemas.proposals import (
    OPEN_STATES,
    PROPOSAL_WORKFLOW,
    ActivationMode,
    AutomationArtifact,
    InstallRequest,
    Proposal,
    ProposalKey,
    ProposalStatus,
    ProposalWorkflowInput,
    SynthesisRequest,
    SynthesisResult,
    TransitionRequest,
)


def status_of(proposal: Proposal) -> ProposalStatus:
    return ProposalStatus(
        tenant=proposal.owner.tenant,
        proposal_id=proposal.id,
        state=proposal.state,
        artifact_sha256=proposal.artifact_sha256,
        approval_id=proposal.activation.approval_id if proposal.activation else None,
        installed_artifact_ref=(
            proposal.activation.installed_artifact_ref if proposal.activation else None
        ),
    )


def installed_ref(schedule_id: str, checksum: str) -> str:
    """What ``activation.installedArtifactRef`` says: the schedule, and the checksum of
    the stored artifact bytes it was installed from (no model, no re-synthesis)."""
    return f"temporal-schedule:{schedule_id}#sha256:{checksum}"


class ProposalActivities:
    def __init__(
        self,
        proposals: ProposalStore,
        client: Client,
        *,
        task_queue: str,
        activation: ActivationMode,
        vault: SecretVault,
        ids: WorkflowIds = PLAIN,
        approval_timeout_s: int = 7 * 24 * 3600,
    ) -> None:
        self.proposals = proposals
        self.client = client
        self.task_queue = task_queue
        self.activation = activation
        self.vault = vault
        self.ids = ids
        self.approval_timeout_s = approval_timeout_s

    @activity.defn(name=SYNTHESIZE_PROPOSALS.name)
    @content_free
    async def synthesize_proposals(self, request: SynthesisRequest) -> SynthesisResult:
        ref = request.memory_ref
        secrets = registry_for_tenant(self.vault, ref.tenant, request.run_id)
        with maintenance_writes():
            result = await self.proposals.synthesize(ref, request.run_id, self.task_queue, secrets)
        ProductMetrics.in_activity().proposals(len(result.created), "created")
        # Every open proposal of a routine seen has its lifecycle workflow: a retry after
        # the commit created nothing new, but its starts may not have happened. (No
        # routine, no proposal to start: an agent without one costs no more reads.)
        if result.routines:
            for proposal in await self.proposals.list(ref.tenant, memory_ref=ref):
                if proposal.state in OPEN_STATES:
                    await self.start_lifecycle(proposal)
        return result

    async def start_lifecycle(self, proposal: Proposal) -> None:
        tenant, proposal_id = proposal.owner.tenant, proposal.id
        workflow_input = ProposalWorkflowInput(
            tenant=tenant,
            proposal_id=proposal_id,
            activation=self.activation,
            approval_timeout_s=self.approval_timeout_s,
        )
        # Started already by an earlier attempt, or by the API's update-with-start.
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await self.client.start_workflow(
                PROPOSAL_WORKFLOW,
                workflow_input,
                id=self.ids.proposal(tenant, proposal_id),
                task_queue=self.task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                search_attributes=attributes_of(parse_memory_ref(proposal.memory_ref)),
                static_summary=f"proposal {proposal_id} ({proposal.kind})",
            )

    @activity.defn(name=READ_PROPOSAL.name)
    @content_free
    async def read_proposal(self, request: ProposalKey) -> ProposalStatus:
        return status_of(await self.proposals.get(request.tenant, request.proposal_id))

    @activity.defn(name=TRANSITION_PROPOSAL.name)
    @content_free
    async def transition_proposal(self, request: TransitionRequest) -> ProposalStatus:
        if request.to_state == "revised":
            # The API wrote the revision (content stays out of Temporal); this reads it.
            proposal = await self.proposals.get(request.tenant, request.proposal_id)
        else:
            proposal = await self.proposals.transition(request)
            if request.to_state in ("rejected", "archived"):
                ProductMetrics.in_activity().proposals(1, request.to_state)
        return status_of(proposal)

    @activity.defn(name=INSTALL_PROPOSAL.name)
    @content_free
    async def install_proposal(self, request: InstallRequest) -> ProposalStatus:
        proposal = await self.proposals.installable(request)
        schedule_id = self.ids.automation(request.tenant, request.proposal_id)
        ref = installed_ref(schedule_id, proposal.artifact_sha256)
        if proposal.state != "applied":
            await self._install(proposal, schedule_id)
            ProductMetrics.in_activity().proposals(1, "applied")
        return status_of(await self.proposals.mark_applied(request, ref))

    async def _install(self, proposal: Proposal, schedule_id: str) -> None:
        artifact = AutomationArtifact.model_validate(proposal.artifact)
        memo = {"proposalId": proposal.id, "artifactSha256": proposal.artifact_sha256}
        try:
            await self.client.create_schedule(
                schedule_id, schedule_of(artifact, schedule_id, memo), memo=memo
            )
        except ScheduleAlreadyRunningError:
            # Installed by an attempt whose result was lost: the same artifact, or a
            # refusal (never a second schedule, never another artifact).
            if await installed_checksum(self.client, schedule_id) != proposal.artifact_sha256:
                raise ApplicationError(
                    f"schedule {schedule_id} exists with another artifact",
                    type=ErrorCode.INVALID_TRANSITION.value,
                    non_retryable=True,
                ) from None

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.synthesize_proposals,
            self.read_proposal,
            self.transition_proposal,
            self.install_proposal,
        ]
