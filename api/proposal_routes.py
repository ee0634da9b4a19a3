"""Proposals over HTTP (RFC 0096, reviewable learning), at three places:

    /v1/proposals                     the normative surface RFC 0096 promotes the seam to
    /v1/host/sample/proposals         the conformance seam (OPENWOP_TEST_SEAM_ENABLED),
    /conformance/seams/sample/...     whose list seeds the demo draft once per tenant
    /proposals                        openwop v2 (RFC 0249), as the official client calls
                                      it: the list is {"items", "nextCursor"}, apply and
                                      reject are POST /proposals/{id}:apply and :reject,
                                      and approval-gate's apply answers 202 {"runId"}

    GET    {prefix}[?state=&kind=&memoryRef=]   200 {"proposals": [Proposal, ...]}
    GET    {prefix}/{id}                        200 Proposal | 404 not_found
    PATCH  {prefix}/{id}    {title?, rationale?, artifact?}   revise (422: bad artifact)
    POST   {prefix}/{id}/apply     {} | {"override": true}    200 applied | 202 awaiting
                                                              approval | 403 forbidden_scope
    POST   {prefix}/{id}/approval  {"decision": "granted" | "denied"}   approval-gate
    POST   {prefix}/{id}/reject    {"reason"?}
    DELETE {prefix}/{id}                                      archive (soft)

Every read and move is scoped to the key's tenant: another tenant's id is a 404. A
move the lifecycle forbids is a 409 invalid_transition, and changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse

from api.auth import Api, CallerIdentity
from api.proposal_review import ProposalReview, Reviewer
from api.seams import seams_enabled
from api.services import ApiServices
from api.tenancy import owned_ref
from schemas.proposals import (
    KEY_ACTOR_PREFIX,
    ApplyBody,
    DecisionBody,
    Proposal,
    ProposalKind,
    ProposalRevision,
    ProposalState,
    RejectBody,
)


async def _review(api: ApiServices) -> ProposalReview:
    return ProposalReview(api.store.proposals, await api.temporal(), api.settings)


def _reviewer(caller: Any) -> Reviewer:
    return Reviewer(
        tenant=caller.tenant, actor=f"{KEY_ACTOR_PREFIX}{caller.key_id}", scopes=caller.scopes
    )


def proposal_router(*, seed_demo: bool = False, v2: bool = False) -> APIRouter:
    """The proposal routes; ``seed_demo``: the seam's list seeds the demo draft;
    ``v2``: RFC 0249's shapes and ``:action`` paths."""
    router = APIRouter(tags=["proposals (RFC 0096)"])
    action = ":" if v2 else "/"

    @router.get("", summary="The tenant's proposals, oldest first")
    async def list_proposals(
        api: Api,
        caller: CallerIdentity,
        state: ProposalState | None = None,
        kind: ProposalKind | None = None,
        memory_ref: Annotated[str | None, Query(alias="memoryRef")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        if seed_demo:
            await api.store.proposals.seed_demo(caller.tenant, api.settings.task_queue)
        ref = owned_ref(caller.tenant, memory_ref) if memory_ref is not None else None
        found = await api.store.proposals.list(
            caller.tenant, state=state, kind=kind, memory_ref=ref, limit=limit
        )
        listed = [proposal.to_wire() for proposal in found]
        return {"items": listed, "nextCursor": None} if v2 else {"proposals": listed}

    @router.get("/{proposal_id}", summary="One proposal, with its inert artifact")
    async def read_proposal(api: Api, caller: CallerIdentity, proposal_id: str) -> Any:
        return _wire(await api.store.proposals.get(caller.tenant, proposal_id))

    @router.patch("/{proposal_id}", summary="Revise: title, rationale, artifact (never applies)")
    async def revise(
        api: Api, caller: CallerIdentity, proposal_id: str, revision: ProposalRevision
    ) -> Any:
        review = await _review(api)
        return _wire(await review.revise(_reviewer(caller), proposal_id, revision))

    @router.post(
        "/{proposal_id}" + action + "apply",
        summary="Apply through the advertised activation mode",
    )
    async def apply(
        api: Api, caller: CallerIdentity, proposal_id: str, body: ApplyBody | None = None
    ) -> Any:
        review = await _review(api)
        body = body or ApplyBody()
        proposal = await review.apply(
            _reviewer(caller),
            proposal_id,
            override=body.override,
            artifact_digest=body.artifact_digest,
        )
        if proposal.state == "applied":
            return _wire(proposal)
        # The gate waits for a reviewer (POST .../approval).
        status = await review.status(proposal)
        if v2:
            return JSONResponse({"runId": review.workflow_id(proposal)}, status_code=202)
        wire = {**proposal.to_wire(), "approval": status.to_wire() if status else None}
        return JSONResponse(wire, status_code=202)

    @router.post(
        "/{proposal_id}" + action + "approval", summary="approval-gate: grant or deny an apply"
    )
    async def decide(api: Api, caller: CallerIdentity, proposal_id: str, body: DecisionBody) -> Any:
        review = await _review(api)
        return _wire(await review.decide(_reviewer(caller), proposal_id, body.decision))

    @router.post("/{proposal_id}" + action + "reject", summary="Reject: nothing is installed")
    async def reject(
        api: Api, caller: CallerIdentity, proposal_id: str, body: RejectBody | None = None
    ) -> Any:
        review = await _review(api)
        reason = body.reason if body is not None else None
        return _wire(await review.reject(_reviewer(caller), proposal_id, reason))

    @router.delete("/{proposal_id}", summary="Archive (a soft delete): nothing is installed")
    async def archive(api: Api, caller: CallerIdentity, proposal_id: str) -> Any:
        review = await _review(api)
        return _wire(await review.archive(_reviewer(caller), proposal_id))

    return router


def _wire(proposal: Proposal) -> Response:
    return JSONResponse(proposal.to_wire())


production_router = proposal_router()
v2_router = proposal_router(v2=True)
# Included with the seams' switch (api/app.py): 404 unless OPENWOP_TEST_SEAM_ENABLED.
seam_router = proposal_router(seed_demo=True)
SEAM_DEPENDENCIES = [Depends(seams_enabled)]
