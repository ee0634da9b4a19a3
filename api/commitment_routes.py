"""Commitments over HTTP (host extension): list, show, confirm and cancel a memoryRef's
inferred commitments, and the tenant's commitment settings.

    GET  /v1/host/commitments?memoryRef=...[&state=proposed]
    GET  /v1/host/commitments/{commitmentId}?memoryRef=...
    POST /v1/host/commitments/{commitmentId}/confirm?memoryRef=...
    POST /v1/host/commitments/{commitmentId}/cancel?memoryRef=...
    GET  /v1/host/commitment-settings
    PUT  /v1/host/commitment-settings   {"requireConfirmation": true, "dateOrder": "DMY"}

Lists and records carry ids, states, instants, rules and what inference understood
(span offsets, conventions); only ``show`` serves text: the span it read and the
intention, as the entry stores them (SR-1 redacted at write). The same store calls as
`memoryctl commitments`, so both leave the same state.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import TypeAdapter, ValidationError
from temporalio.service import RPCError, RPCStatusCode

from api.auth import Api, Tenant
from api.errors import ApiError, not_found
from api.tenancy import owned_ref
from api.workflow_calls import run_workflow
from runtime.workflow_ids import workflow_ids_for
from schemas.base import WireModel
from schemas.commitment_spec import TimeZoneName
from schemas.commitments import (
    CommitmentId,
    CommitmentInferenceInput,
    CommitmentInferenceResult,
    CommitmentState,
    DateOrder,
    NextWeekday,
    commitment_workflow_id,
)
from schemas.errors import ErrorCode
from schemas.memory_ref import MemoryRef

log = logging.getLogger("agent_memory.api")
router = APIRouter(tags=["commitments (host extension)"])
RefQuery = Annotated[str, Query(alias="memoryRef")]
_COMMITMENT_ID: TypeAdapter[str] = TypeAdapter(CommitmentId)


def _checked_id(raw: str) -> str:
    try:
        return _COMMITMENT_ID.validate_python(raw)
    except ValidationError:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "commitmentId: must be cmt- and hex digits (at most 64 characters)",
            field="commitmentId",
        ) from None


@router.get("/v1/host/commitments", summary="A memoryRef's commitments, oldest first")
async def list_commitments(
    api: Api,
    tenant: Tenant,
    memory_ref: RefQuery,
    state: CommitmentState | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    found = await api.store.commitments.list(ref, state=state, limit=limit)
    return {"commitments": [record.to_wire() for record in found]}


@router.get(
    "/v1/host/commitments/{commitment_id}",
    summary="One commitment: record, ledger, spec, and the span inference read (redacted)",
)
async def show_commitment(
    api: Api, tenant: Tenant, commitment_id: str, memory_ref: RefQuery
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    detail = await api.store.commitments.show(ref, _checked_id(commitment_id))
    if detail is None:
        raise not_found("commitment")
    return detail.to_wire()


@router.post(
    "/v1/host/commitments/{commitment_id}/confirm",
    summary="Confirm a proposed commitment: armed, and its workflow started",
)
async def confirm_commitment(
    api: Api, tenant: Tenant, commitment_id: str, memory_ref: RefQuery
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    commitment_id = _checked_id(commitment_id)
    record = await api.store.commitments.confirm(ref, commitment_id)
    if record is None:
        raise not_found("commitment")
    if record.state != "armed":
        raise ApiError(
            409,
            "commitment_not_proposed",
            f"commitment is {record.state}: only a proposed one is confirmed",
        )
    await _arm(api, ref, commitment_id)
    detail = await api.store.commitments.show(ref, commitment_id)
    return (detail.commitment if detail is not None else record).to_wire()


async def _arm(api: Api, ref: MemoryRef, commitment_id: str) -> None:
    """An inference run that scans nothing and arms what is armed but not started."""
    from workflows.commitment_inference import CommitmentInferenceWorkflow

    await run_workflow(
        api,
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=ref, memory_ids=()),
        workflow_id=workflow_ids_for(api.settings).confirmation(ref, commitment_id),
        ref=ref,
        summary=f"arm confirmed commitment {commitment_id} of {ref} (HTTP)",
        result_type=CommitmentInferenceResult,
    )


@router.post(
    "/v1/host/commitments/{commitment_id}/cancel",
    summary="Cancel a proposed or armed commitment (nothing fires after this)",
)
async def cancel_commitment(
    api: Api, tenant: Tenant, commitment_id: str, memory_ref: RefQuery
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    commitment_id = _checked_id(commitment_id)
    # The store first (nothing fires after this), then the workflow, so no timer is left
    # sleeping; its cancel finds the commitment cancelled and announces nothing more.
    record = await api.store.commitments.cancel(ref, commitment_id)
    if record is None:
        raise not_found("commitment")
    try:
        client = await api.temporal()
        await client.get_workflow_handle(commitment_workflow_id(commitment_id)).cancel()
    except RPCError as error:
        # NOT_FOUND: a proposed commitment has no workflow. Otherwise the cancel stands
        # (the firing activity finds the commitment cancelled and fires nothing); the
        # timer ends when it is due.
        if error.status != RPCStatusCode.NOT_FOUND:
            log.warning("cancel of %s's workflow refused: %s", commitment_id, error.status.name)
    return record.to_wire()


class SettingsChange(WireModel):
    time_zone: TimeZoneName | None = None
    require_confirmation: bool | None = None
    date_order: DateOrder | None = None
    next_weekday: NextWeekday | None = None


@router.get("/v1/host/commitment-settings", summary="The tenant's commitment settings")
async def get_settings(api: Api, tenant: Tenant) -> dict[str, Any]:
    return (await api.store.commitments.settings(tenant)).to_wire()


@router.put("/v1/host/commitment-settings", summary="Set some of the tenant's settings")
async def put_settings(api: Api, tenant: Tenant, body: SettingsChange) -> dict[str, Any]:
    found = await api.store.commitments.update_settings(
        tenant,
        time_zone=body.time_zone,
        require_confirmation=body.require_confirmation,
        date_order=body.date_order,
        next_weekday=body.next_weekday,
    )
    return found.to_wire()
