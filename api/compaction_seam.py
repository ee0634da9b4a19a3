"""The RFC 0012 compaction test seam (../shared/spec/openwop-host-sample-seams.md §3.4):
seed a memoryRef verbatim, then compact whatever live entries it holds with the real
DistillationWorkflow (``trigger: client-requested``), answering the memory.compacted
event in its wire shape (the payload wrapped, unlike the sample seams) and the persisted
output text, whose foreign secret markers SR-1 carry-forward has made canonical
(memory/redaction/chokepoint.py, carry_forward). Conformance-only, behind the same switch as the
sample seams; refs resolve within the key's tenant like every memoryRef at the edge.

    POST /v1/test/memory/seed     {memoryRef, entries: [{id, content, tags?}]} -> 201 {seeded}
    POST /v1/test/memory/compact  {memoryRef} -> 200 {type, payload, outputContent}

Upstream's shapes for a bad request are 400 ``invalid_argument`` here (a missing
memoryRef, no entries) and 400 ``nothing_to_compact`` for a ref with nothing live.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends
from pydantic import Field, ValidationError

from api.auth import Api, Tenant
from api.errors import ApiError
from api.seams import seams_enabled
from api.tenancy import owned_ref
from api.workflow_calls import run_workflow
from runtime.workflow_ids import workflow_ids_for
from schemas.base import WireModel
from schemas.capabilities import MAX_TOKEN_BUDGET
from schemas.errors import DuplicateKey
from schemas.memory_entry import MAX_TAGS, EntryId, MemoryListOptions, NewMemoryEntry, Tag
from schemas.workflow_io import DistillationInput, DistillationResult

MAX_SEED_ENTRIES = 200


router = APIRouter(
    prefix="/v1/test/memory", tags=["openwop seams"], dependencies=[Depends(seams_enabled)]
)


class SeedEntry(WireModel):
    id: EntryId
    content: Annotated[str, Field(min_length=1, max_length=64 * 1024)]
    tags: tuple[Tag, ...] = Field(default=(), max_length=MAX_TAGS)


class SeedRequest(WireModel):
    memory_ref: str = Field(min_length=1)
    entries: tuple[SeedEntry, ...] = Field(min_length=1, max_length=MAX_SEED_ENTRIES)


class CompactRequest(WireModel):
    memory_ref: str = Field(min_length=1)


def _invalid(model: type[WireModel], body: Any) -> Any:
    """Upstream answers a bad seam body with 400 invalid_argument, naming the field."""
    try:
        return model.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "body"
        raise ApiError(400, "invalid_argument", f"{field}: {first['msg']}", field=field) from None


@router.post("/seed", status_code=201, summary="Seed entries verbatim (RFC 0012 test seam)")
async def seed(
    api: Api, tenant: Tenant, body: Annotated[dict[str, Any] | None, Body()] = None
) -> dict[str, int]:
    request: SeedRequest = _invalid(SeedRequest, body or {})
    ref = owned_ref(tenant, request.memory_ref)
    registry = api.registries.for_tenant(tenant)
    seeded = 0
    for entry in request.entries:
        with contextlib.suppress(DuplicateKey):  # the same id seeded before
            await api.store.put(
                ref,
                NewMemoryEntry(id=entry.id, content=entry.content, tags=entry.tags),
                secrets=registry,
            )
            seeded += 1
    return {"seeded": seeded}


@router.post("/compact", summary="Compact a ref's live entries (RFC 0012 test seam)")
async def compact(
    api: Api, tenant: Tenant, body: Annotated[dict[str, Any] | None, Body()] = None
) -> dict[str, Any]:
    from workflows.distillation import DistillationWorkflow

    request: CompactRequest = _invalid(CompactRequest, body or {})
    ref = owned_ref(tenant, request.memory_ref)
    await api.temporal()  # unreachable: refused before anything runs
    if not await api.store.list(ref, MemoryListOptions(limit=1)):
        raise ApiError(400, "nothing_to_compact", "the memoryRef holds no live entries")
    result: DistillationResult = await run_workflow(
        api,
        DistillationWorkflow.run,
        DistillationInput(
            memory_ref=ref,
            token_budget=MAX_TOKEN_BUDGET,
            index_emitted=False,
            trigger="client-requested",
        ),
        workflow_id=workflow_ids_for(api.settings).distillation(ref),
        ref=ref,
        summary=f"compact {ref} (RFC 0012 seam)",
    )
    if result.compacted_event_seq is None or result.output_id is None:
        raise ApiError(400, "nothing_to_compact", "nothing live in the memoryRef to compact")
    (event,) = await api.store.events(ref, after_seq=result.compacted_event_seq - 1, limit=1)
    output = await api.store.get(ref, result.output_id)
    return {
        "type": event.type,
        "payload": event.payload,
        "outputContent": output.content if output is not None else "",
    }
