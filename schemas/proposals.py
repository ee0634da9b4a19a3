"""Proposals (openwop RFC 0096, reviewable learning): the wire object, its lifecycle, the
one artifact kind this host synthesizes and installs (a scheduled automation), and the
content-free inputs and results of the workflow that drives a proposal.

A proposal is inert until applied: its artifact is data in PostgreSQL, and only the
ProposalWorkflow's apply (through the advertised activation mode) turns it into a
Temporal schedule. Temporal payloads carry ids, states and checksums, never a title, a
rationale or an artifact body: those are served by the read side only.

Ids are derived, never random, so synthesis is deterministic for the same memory:
- proposalId: ``prop-`` + hash of (memoryRef, the routine's first entry, its schedule);
- its workflow: ``proposal/<tenant>/<proposalId>`` (runtime/workflow_ids.py);
- the installed schedule: ``automation/<tenant>/<proposalId>``.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import rfc8785
from pydantic import AfterValidator, Field

from schemas.base import Instant, WireModel, WireResult
from schemas.memory_ref import MemoryRefField, parse_segment
from schemas.registry import register

ProposalKind = Literal["agent-pack", "workflow-chain-pack", "prompt-template", "automation"]
ProposalState = Literal["draft", "revised", "applied", "rejected", "archived"]
ActivationMode = Literal["approval-gate", "direct-rbac"]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# What this host synthesizes and can install (advertised as agents.proposals.artifactKinds).
INSTALLABLE_KINDS: tuple[ProposalKind, ...] = ("automation",)
OPEN_STATES: frozenset[str] = frozenset({"draft", "revised"})
PROPOSAL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
ProposalId = Annotated[str, Field(min_length=1, max_length=64, pattern=PROPOSAL_ID_PATTERN)]
# The fixed id of the demo draft the conformance seam seeds per tenant (contract §3.5).
DEMO_PROPOSAL_ID = "demo-reviewable-learning"
MAX_TITLE_CHARS = 200
MAX_RATIONALE_CHARS = 2000
MAX_REASON_CHARS = 500
MAX_SOURCE_RUN_IDS = 32
# An API key's actor id in a proposal's updates and activation (memoryctl acts as the
# operator, "memoryctl"): the approval gate tells a key's own request by it.
KEY_ACTOR_PREFIX = "key:"
PROPOSAL_WORKFLOW = "ProposalWorkflow"
WEEKDAYS: tuple[Weekday, ...] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)


def _known_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("must be an IANA time zone name (e.g. Europe/Berlin)") from None
    return name


ZoneName = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_known_zone)]


class AutomationCalendar(WireModel):
    """When the automation runs: every day, or one weekday, at hour:minute local time."""

    day_of_week: Weekday | None = None  # None: every day
    hour: int = Field(ge=0, le=23)
    minute: int = Field(ge=0, le=59)
    time_zone: ZoneName = "UTC"


class AutomationInput(WireModel):
    memory_ref: MemoryRefField


class AutomationAction(WireModel):
    """What each scheduled time starts: a workflow type of this host, on its task queue."""

    workflow_type: Literal["AgentRunWorkflow"] = "AgentRunWorkflow"
    task_queue: str = Field(min_length=1, max_length=200)
    input: AutomationInput


class AutomationArtifact(WireModel):
    """The artifact of kind ``automation`` (RFC 0052 scheduled automation)."""

    schedule: AutomationCalendar
    action: AutomationAction


def canonical_artifact(artifact: dict[str, Any]) -> bytes:
    """The artifact's canonical JSON (RFC 8785): what its checksum covers."""
    return rfc8785.dumps(artifact)


def artifact_sha256(artifact: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_artifact(artifact)).hexdigest()


class ProposalOwner(WireModel):
    tenant: Annotated[str, AfterValidator(lambda value: parse_segment(value, "owner.tenant"))]
    workspace: str | None = Field(default=None, min_length=1, max_length=128)
    principal: str | None = Field(default=None, min_length=1, max_length=128)


class ProposalProvenance(WireModel):
    source_run_ids: tuple[str, ...] = Field(max_length=MAX_SOURCE_RUN_IDS)
    synthesizer_model: str | None = Field(default=None, max_length=128)


class ProposalActivation(WireModel):
    """How an applied proposal was activated: the approval (or the RBAC scope) and the
    installed artifact's ref, whose checksum is the artifact's as last persisted."""

    mode: ActivationMode
    approval_id: str | None = None
    overridden: bool = False
    activated_by: str = Field(min_length=1, max_length=128)  # an API key id or "memoryctl"
    installed_artifact_ref: str = Field(min_length=1)
    artifact_sha256: str = Field(min_length=64, max_length=64)
    activated_at: Instant


class Proposal(WireModel):
    """The RFC 0096 object as the proposal surface serves it."""

    id: str = Field(min_length=1)
    kind: ProposalKind
    state: ProposalState
    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    rationale: str | None = Field(default=None, max_length=MAX_RATIONALE_CHARS)
    artifact: dict[str, Any]
    provenance: ProposalProvenance
    duplicate_of: str | None = None
    owner: ProposalOwner
    activation: ProposalActivation | None = None
    created_at: Instant
    updated_at: Instant | None = None
    # Extensions (ignored by RFC 0096 clients): the memoryRef the proposal was learned
    # from, the artifact's checksum and the row's version.
    memory_ref: str
    artifact_sha256: str
    version: int = Field(ge=1)
    rejection_reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)

    @property
    def artifact_digest(self) -> str:
        """What an apply binds to (RFC 0249 ``artifactDigest``): the stored bytes' hash."""
        return f"sha256:{self.artifact_sha256}"

    def to_wire(self) -> dict[str, object]:
        wire = super().to_wire()
        # RFC 0096 spells the defaults out: null, not absent.
        wire.setdefault("duplicateOf", None)
        wire.setdefault("activation", None)
        del wire["artifactSha256"]
        wire["artifactDigest"] = self.artifact_digest
        return wire


class ProposalRevision(WireModel):
    """PATCH: what a reviewer may change. The artifact is checked for its kind (422)."""

    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    rationale: str | None = Field(default=None, max_length=MAX_RATIONALE_CHARS)
    artifact: dict[str, Any] | None = None


class ApplyBody(WireModel):
    """POST .../apply. ``artifactDigest`` (RFC 0249): apply only if the stored artifact
    is still this one (409 otherwise). ``override`` (approval-gate only) installs without
    a grant; it needs the override scope and is recorded on the activation."""

    artifact_digest: str | None = Field(default=None, max_length=80)
    override: bool = False


class DecisionBody(WireModel):
    """POST .../approval (approval-gate): a reviewer's grant or denial."""

    decision: Literal["granted", "denied"]


class RejectBody(WireModel):
    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)


# Content-free events (contract §7): no artifact, no title, no rationale.
class ProposalCreated(WireModel):
    proposal_id: str = Field(min_length=1)
    kind: ProposalKind
    source_run_ids: tuple[str, ...]
    duplicate_of: str | None

    def to_wire(self) -> dict[str, object]:
        return {**super().to_wire(), "duplicateOf": self.duplicate_of}


class ProposalActivated(WireModel):
    proposal_id: str = Field(min_length=1)
    kind: ProposalKind
    approval_id: str | None = None
    installed_artifact_ref: str = Field(min_length=1)


# --- Temporal payloads: ids, states and checksums only ---


class ProposalKey(WireModel):
    """Which proposal: the tenant and its id (ids are unique within a tenant)."""

    tenant: Annotated[str, AfterValidator(lambda value: parse_segment(value, "tenant"))]
    proposal_id: ProposalId


class ProposalWorkflowInput(ProposalKey):
    activation: ActivationMode
    # approval-gate: how long an apply waits for a reviewer before the request lapses.
    approval_timeout_s: int = Field(default=7 * 24 * 3600, ge=1)


class ProposalCommand(WireModel):
    """An update's argument: who asks (an API key id or ``memoryctl``). Whether they
    may is decided at the edge (the key's scopes); the workflow records it."""

    actor: str = Field(min_length=1, max_length=128)
    override: bool = False
    decision: Literal["granted", "denied"] | None = None  # decide (approval-gate)
    # revise: the artifact checksum the caller persisted (content stays in PostgreSQL).
    artifact_sha256: str | None = Field(default=None, min_length=64, max_length=64)


class ProposalStatus(WireResult):
    """The workflow's view (query ``status``, and every update's answer)."""

    tenant: str
    proposal_id: str
    state: ProposalState
    artifact_sha256: str
    gate: Literal["none", "pending", "granted", "denied", "lapsed"] = "none"
    approval_id: str | None = None
    installed_artifact_ref: str | None = None


class TransitionRequest(ProposalKey):
    """An activity's request to move a proposal's row: from ``expected`` states only."""

    to_state: ProposalState
    expected: tuple[ProposalState, ...]
    actor: str
    artifact_sha256: str | None = None


class InstallRequest(ProposalKey):
    """Install exactly the artifact whose checksum the apply accepted, then mark the
    proposal applied, in that order; both steps are idempotent."""

    artifact_sha256: str = Field(min_length=64, max_length=64)
    mode: ActivationMode
    actor: str
    approval_id: str | None = None
    overridden: bool = False


class SynthesisRequest(WireModel):
    memory_ref: MemoryRefField
    run_id: str = Field(min_length=1, max_length=256)  # the dream run's id, for provenance


class SynthesisResult(WireResult):
    routines: int = 0
    created: tuple[str, ...] = ()
    duplicates: int = 0  # created with duplicateOf set
    unchanged: int = 0  # a proposal for the same routine exists already


def proposal_id_for(memory_ref: str, anchor_entry_id: str, schedule_key: str) -> str:
    digest = hashlib.sha256(f"{memory_ref}\n{anchor_entry_id}\n{schedule_key}".encode()).hexdigest()
    return f"prop-{digest[:24]}"


register("proposal", Proposal)
register("proposal-revision", ProposalRevision)
register("automation-artifact", AutomationArtifact)
register("event-proposal-created", ProposalCreated)
register("event-proposal-activated", ProposalActivated)
