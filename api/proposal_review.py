"""Reviewing proposals: the one path the HTTP API and memoryctl both take to revise,
apply, decide, reject or archive a proposal (RFC 0096).

Each action checks what the store can tell at once (the proposal exists in the caller's
tenant, its state allows the move, the artifact is one this host installs, the caller
holds the scope), then sends the matching update to the proposal's ProposalWorkflow
with update-with-start, so a proposal whose workflow was never started (the seam's demo
draft, a start lost after synthesis) gets it on first use. What the update carries is
content-free: the actor (an API key id, or ``memoryctl``), a checksum, a flag.

Scopes (direct-rbac): ``apply`` needs the configured activation scope. approval-gate:
``apply`` opens the gate with the tenant's key, ``decide`` needs ``proposals:review``,
``apply --override`` needs ``proposals:override``. memoryctl acts as the operator: its
reviewer holds every scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from memory.proposals.store import ProposalStore, checked_artifact
from runtime.search_attributes import attributes_of
from runtime.settings import Settings
from runtime.workflow_ids import workflow_ids_for
from schemas.errors import (
    ErrorCode,
    InvalidInput,
    InvalidTransition,
    MemoryError_,
    MissingScope,
)
from schemas.memory_ref import parse_memory_ref
from schemas.proposals import (
    INSTALLABLE_KINDS,
    OPEN_STATES,
    PROPOSAL_WORKFLOW,
    Proposal,
    ProposalCommand,
    ProposalRevision,
    ProposalStatus,
    ProposalWorkflowInput,
)

REVIEW_SCOPE = "proposals:review"
OVERRIDE_SCOPE = "proposals:override"


@dataclass(frozen=True, slots=True)
class Reviewer:
    """Who acts: the tenant, an actor id for the record, and the key's scopes (None:
    the operator, through memoryctl, who holds them all)."""

    tenant: str
    actor: str
    scopes: frozenset[str] | None

    def require(self, scope: str, action: str) -> None:
        if self.scopes is not None and scope not in self.scopes:
            raise MissingScope(scope, action)


class ProposalReview:
    def __init__(self, store: ProposalStore, client: Client, settings: Settings) -> None:
        self.store = store
        self.client = client
        self.settings = settings
        self.ids = workflow_ids_for(settings)

    async def revise(self, who: Reviewer, proposal_id: str, revision: ProposalRevision) -> Proposal:
        """Store the revision (checked for its kind: 422), then tell the workflow."""
        revised = await self.store.revise(who.tenant, proposal_id, revision)
        command = ProposalCommand(actor=who.actor, artifact_sha256=revised.artifact_sha256)
        await self._send(revised, "revise", command)
        return await self.store.get(who.tenant, proposal_id)

    async def apply(
        self,
        who: Reviewer,
        proposal_id: str,
        *,
        override: bool = False,
        artifact_digest: str | None = None,
    ) -> Proposal:
        """Install the stored artifact through the activation mode. ``artifact_digest``
        binds the apply to the artifact the reviewer read: another one is a 409."""
        proposal = await self.store.get(who.tenant, proposal_id)
        gate = self.settings.proposal_activation == "approval-gate"
        if override and not gate:
            raise InvalidInput("override", "only the approval-gate activation has an override")
        if override:
            who.require(OVERRIDE_SCOPE, "overriding the approval gate")
        elif not gate:
            who.require(self.settings.proposal_scope, "applying a proposal")
        if artifact_digest is not None and artifact_digest != proposal.artifact_digest:
            raise InvalidTransition(proposal_id, proposal.state, "applied (artifact changed)")
        if proposal.state == "applied":
            return proposal  # applying twice installs once
        self._open(proposal, "applied")
        if proposal.kind not in INSTALLABLE_KINDS:
            raise InvalidInput("kind", f"this host installs {', '.join(INSTALLABLE_KINDS)} only")
        checked_artifact(proposal.kind, proposal.artifact, proposal.owner.tenant)  # 422
        await self._send(proposal, "apply", ProposalCommand(actor=who.actor, override=override))
        return await self.store.get(who.tenant, proposal_id)

    async def decide(
        self, who: Reviewer, proposal_id: str, decision: Literal["granted", "denied"]
    ) -> Proposal:
        proposal = await self.store.get(who.tenant, proposal_id)
        if self.settings.proposal_activation != "approval-gate":
            raise InvalidTransition(proposal_id, proposal.state, "decided (no approval gate)")
        who.require(REVIEW_SCOPE, "deciding an approval")
        self._open(proposal, "decided")
        command = ProposalCommand(actor=who.actor, decision=decision)
        await self._send(proposal, "decide", command)
        return await self.store.get(who.tenant, proposal_id)

    async def reject(self, who: Reviewer, proposal_id: str, reason: str | None) -> Proposal:
        proposal = await self._move(who, proposal_id, "reject", "rejected")
        if reason:
            await self.store.note_reason(who.tenant, proposal_id, reason)
            proposal = await self.store.get(who.tenant, proposal_id)
        return proposal

    async def archive(self, who: Reviewer, proposal_id: str) -> Proposal:
        return await self._move(who, proposal_id, "archive", "archived")

    def workflow_id(self, proposal: Proposal) -> str:
        return self.ids.proposal(proposal.owner.tenant, proposal.id)

    async def status(self, proposal: Proposal) -> ProposalStatus | None:
        """The workflow's view (the approval gate's state), None while it has none."""
        handle = self.client.get_workflow_handle(self.workflow_id(proposal))
        try:
            status: ProposalStatus | None = await handle.query("status", result_type=ProposalStatus)
        except RPCError:
            return None
        return status

    async def _move(self, who: Reviewer, proposal_id: str, update: str, state: str) -> Proposal:
        proposal = await self.store.get(who.tenant, proposal_id)
        if proposal.state == state:
            return proposal
        self._open(proposal, state)
        await self._send(proposal, update, ProposalCommand(actor=who.actor))
        return await self.store.get(who.tenant, proposal_id)

    @staticmethod
    def _open(proposal: Proposal, action: str) -> None:
        if proposal.state not in OPEN_STATES:
            raise InvalidTransition(proposal.id, proposal.state, action)

    async def _send(self, proposal: Proposal, update: str, command: ProposalCommand) -> None:
        tenant = proposal.owner.tenant
        start: WithStartWorkflowOperation[Any, ProposalStatus] = WithStartWorkflowOperation(
            PROPOSAL_WORKFLOW,
            ProposalWorkflowInput(
                tenant=tenant,
                proposal_id=proposal.id,
                activation=self.settings.proposal_activation,
                approval_timeout_s=self.settings.proposal_approval_timeout_s,
            ),
            id=self.workflow_id(proposal),
            task_queue=self.settings.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=attributes_of(parse_memory_ref(proposal.memory_ref)),
            static_summary=f"proposal {proposal.id} ({proposal.kind})",
            result_type=ProposalStatus,
        )
        try:
            await self.client.execute_update_with_start_workflow(
                update, command, start_workflow_operation=start, result_type=ProposalStatus
            )
        except WorkflowUpdateFailedError as error:
            raise _refusal(error, proposal) from None


def _refusal(error: WorkflowUpdateFailedError, proposal: Proposal) -> MemoryError_:
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type == ErrorCode.INVALID_INPUT.value:
        return InvalidInput("command", cause.message)
    if isinstance(cause, ApplicationError) and cause.type == ErrorCode.INVALID_TRANSITION.value:
        return InvalidTransition(proposal.id, proposal.state, "moved now")
    # An activity failed (outage): the refusal names the code, never a message from it.
    code = getattr(getattr(cause, "cause", None), "type", None) or ErrorCode.INTERNAL.value
    return MemoryError_(f"the proposal's workflow could not complete the update ({code})")
