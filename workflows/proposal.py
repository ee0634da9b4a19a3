"""ProposalWorkflow: one proposal's lifecycle (openwop RFC 0096), driven by updates.

    draft --revise--> revised --apply--> applied
      |                  |---reject--> rejected
      '------------------'---archive-> archived

Updates: ``revise`` (after the API stored the revision: content never enters Temporal),
``apply``, ``decide`` (approval-gate: a reviewer grants or denies), ``reject``,
``archive``. Each has a validator that refuses a move the lifecycle does not allow, so a
refused update never enters the history, and the handler checks again under a lock
(two updates may pass their validators in one task). The query ``status`` and the UI's
current details show the state.

Activation: direct-rbac installs on ``apply`` (the API checked the caller's scope);
approval-gate opens a gate on ``apply`` and installs when a reviewer (another key than
the one that asked) grants it, or when
``apply`` comes with ``override`` (the API checked the override scope; the activation
records it). A gate not decided within ``approval_timeout_s`` lapses: nothing installed,
the proposal stays as it was.

The PostgreSQL row is the record: every move is an activity guarded by the state it
expects, so the install is of exactly the artifact stored when apply was accepted, and
the workflow ends once the proposal is applied, rejected or archived.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import INSTALL_PROPOSAL, READ_PROPOSAL, TRANSITION_PROPOSAL
    from schemas.errors import ErrorCode
    from schemas.proposals import (
        KEY_ACTOR_PREFIX,
        OPEN_STATES,
        InstallRequest,
        ProposalCommand,
        ProposalKey,
        ProposalState,
        ProposalStatus,
        ProposalWorkflowInput,
        TransitionRequest,
    )
    from workflows import policies
    from workflows.activity_calls import call

CLOSED_STATES = frozenset({"applied", "rejected", "archived"})


def _check_override(activation: str, command: ProposalCommand) -> None:
    if command.override and activation != "approval-gate":
        raise ApplicationError(
            "override applies to the approval-gate activation only",
            type=ErrorCode.INVALID_INPUT.value,
            non_retryable=True,
        )


def _refuse(status: ProposalStatus | None, action: str) -> None:
    if status is None:
        return  # not read yet: the handler checks once it is
    if status.state not in OPEN_STATES:
        raise ApplicationError(
            f"proposal {status.proposal_id} is {status.state}: it cannot be {action}",
            type=ErrorCode.INVALID_TRANSITION.value,
            non_retryable=True,
        )
    if status.gate == "pending" and action != "decided":
        raise ApplicationError(
            f"proposal {status.proposal_id} awaits a reviewer's decision: it cannot be {action}",
            type=ErrorCode.INVALID_TRANSITION.value,
            non_retryable=True,
        )


@workflow.defn
class ProposalWorkflow:
    def __init__(self) -> None:
        # Set when the run starts: an update that came with the start (update-with-start)
        # may be validated before, and its handler waits for the proposal to be read.
        # (Not @workflow.init: a start with the wrong arguments must fail the run, which
        # the input interceptor does for run(), never the task, forever.)
        self._request: ProposalWorkflowInput | None = None
        self._status: ProposalStatus | None = None
        self._lock = asyncio.Lock()
        self._approvals = 0
        self._gate_opened_by: str | None = None

    @workflow.run
    async def run(self, request: ProposalWorkflowInput) -> ProposalStatus:
        self._request = request
        key = ProposalKey(tenant=request.tenant, proposal_id=request.proposal_id)
        self._show(await call(READ_PROPOSAL, key, policies.PROPOSAL_STEP, summary="read"))
        while self._state not in CLOSED_STATES:
            await workflow.wait_condition(
                lambda: self._state in CLOSED_STATES or self._gate == "pending"
            )
            if self._gate == "pending":
                await self._await_decision()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._current

    @workflow.query
    def status(self) -> ProposalStatus | None:
        return self._status

    # --- updates ---

    @workflow.update
    async def revise(self, command: ProposalCommand) -> ProposalStatus:
        return await self._move("revised", command)

    @revise.validator
    def _validate_revise(self, command: ProposalCommand) -> None:
        _refuse(self._status, "revised")

    @workflow.update
    async def reject(self, command: ProposalCommand) -> ProposalStatus:
        return await self._move("rejected", command)

    @reject.validator
    def _validate_reject(self, command: ProposalCommand) -> None:
        _refuse(self._status, "rejected")

    @workflow.update
    async def archive(self, command: ProposalCommand) -> ProposalStatus:
        return await self._move("archived", command)

    @archive.validator
    def _validate_archive(self, command: ProposalCommand) -> None:
        _refuse(self._status, "archived")

    @workflow.update
    async def apply(self, command: ProposalCommand) -> ProposalStatus:
        async with self._lock:
            await workflow.wait_condition(lambda: self._status is not None)
            if self._current.state == "applied":
                return self._current  # applied by an apply that held the lock first
            await self._ready("applied")
            _check_override(self._activation, command)
            if self._activation == "direct-rbac" or command.override:
                return await self._install(command, approval_id=None)
            self._approvals += 1
            self._gate_opened_by = command.actor
            self._show(
                self._current.model_copy(
                    update={
                        "gate": "pending",
                        "approval_id": f"{self._input.proposal_id}/approval-{self._approvals}",
                    }
                )
            )
            return self._current

    @apply.validator
    def _validate_apply(self, command: ProposalCommand) -> None:
        if self._request is not None:
            _check_override(self._activation, command)
        _refuse(self._status, "applied")

    @workflow.update
    async def decide(self, command: ProposalCommand) -> ProposalStatus:
        async with self._lock:
            if self._gate != "pending":
                raise ApplicationError(
                    "no approval is pending for this proposal",
                    type=ErrorCode.INVALID_TRANSITION.value,
                    non_retryable=True,
                )
            if command.decision == "denied":
                self._show(self._current.model_copy(update={"gate": "denied"}))
                return self._current
            return await self._install(command, approval_id=self._current.approval_id)

    @decide.validator
    def _validate_decide(self, command: ProposalCommand) -> None:
        if command.decision is None:
            raise ApplicationError(
                "decision is required (granted or denied)",
                type=ErrorCode.INVALID_INPUT.value,
                non_retryable=True,
            )
        if self._status is not None and self._status.gate != "pending":
            raise ApplicationError(
                "no approval is pending for this proposal",
                type=ErrorCode.INVALID_TRANSITION.value,
                non_retryable=True,
            )
        if command.actor == self._gate_opened_by and command.actor.startswith(KEY_ACTOR_PREFIX):
            # Four eyes: the key that asked to apply cannot grant it (the operator can).
            raise ApplicationError(
                "the key that asked to apply cannot decide its approval",
                type=ErrorCode.INVALID_INPUT.value,
                non_retryable=True,
            )

    # --- steps ---

    async def _await_decision(self) -> None:
        timeout = timedelta(seconds=self._input.approval_timeout_s)
        try:
            await workflow.wait_condition(lambda: self._gate != "pending", timeout=timeout)
        except TimeoutError:
            async with self._lock:
                if self._gate == "pending":
                    workflow.logger.info("the approval lapsed: nothing installed")
                    self._show(self._current.model_copy(update={"gate": "lapsed"}))

    async def _move(self, to_state: ProposalState, command: ProposalCommand) -> ProposalStatus:
        async with self._lock:
            await self._ready(to_state)
            moved = await call(
                TRANSITION_PROPOSAL,
                TransitionRequest(
                    tenant=self._input.tenant,
                    proposal_id=self._input.proposal_id,
                    to_state=to_state,
                    expected=("draft", "revised"),
                    actor=command.actor,
                    artifact_sha256=command.artifact_sha256,
                ),
                policies.PROPOSAL_STEP,
                summary=f"proposal -> {to_state}",
            )
            self._show(moved)
            return moved

    async def _install(self, command: ProposalCommand, approval_id: str | None) -> ProposalStatus:
        # The artifact as stored now: the install is of exactly these bytes.
        key = ProposalKey(tenant=self._input.tenant, proposal_id=self._input.proposal_id)
        stored = await call(READ_PROPOSAL, key, policies.PROPOSAL_STEP, summary="read")
        applied = await call(
            INSTALL_PROPOSAL,
            InstallRequest(
                tenant=self._input.tenant,
                proposal_id=self._input.proposal_id,
                artifact_sha256=stored.artifact_sha256,
                mode=self._input.activation,
                actor=command.actor,
                approval_id=approval_id,
                overridden=command.override,
            ),
            policies.PROPOSAL_STEP,
            summary="install the stored artifact as a schedule",
        )
        gate = "none" if self._input.activation == "direct-rbac" or command.override else "granted"
        self._show(applied.model_copy(update={"gate": gate}))
        return self._current

    async def _ready(self, action: str) -> None:
        await workflow.wait_condition(lambda: self._status is not None)
        _refuse(self._current, action)

    # --- state ---

    @property
    def _input(self) -> ProposalWorkflowInput:
        assert self._request is not None  # read once the run started
        return self._request

    @property
    def _activation(self) -> str:
        return self._input.activation

    @property
    def _current(self) -> ProposalStatus:
        assert self._status is not None
        return self._status

    @property
    def _state(self) -> str:
        return self._status.state if self._status else "draft"

    @property
    def _gate(self) -> str:
        return self._status.gate if self._status else "none"

    def _show(self, status: ProposalStatus) -> None:
        self._status = status
        gate = f", approval {status.gate}" if status.gate != "none" else ""
        workflow.set_current_details(
            f"Proposal {status.proposal_id}: {status.state}{gate}; "
            f"artifact sha256 {status.artifact_sha256[:12]}"
        )
