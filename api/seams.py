"""The openwop sample seams (../shared/spec/openwop-host-sample-seams.md §3): each runs
the real workflow and answers in the contract's shapes, the event's payload fields
directly on ``event``. They seed their fixtures into the caller's own memoryRef (an
opaque ref resolved within the key's tenant, api/tenancy.py) with ids derived from the
content, so calling a seam twice with the same sources sees an unchanged corpus (the
stable-archive and idempotence scenarios depend on that).

- POST /v1/host/sample/memory/distill: DistillationWorkflow (RFC 0062). Without
  ``sources`` it distills what the ref holds plus a fresh two-entry default corpus, so
  an 8,000-token request always has something to distill and a 1-token one always fails
  with 422 ``token_budget_exceeded`` (no ``archiveChecksum`` key, nothing archived).
- POST /v1/host/sample/memory/consolidate: ConsolidationWorkflow (RFC 0068 §D). On the
  first call over an empty ref it seeds a small corpus with a duplicate; the answer
  always carries an event with both counts (a no-op pass records none, so the counts
  come from the pass itself).
- POST /v1/host/sample/commitment/fire: an intention entry, CommitmentInferenceWorkflow,
  then (``condition: predicate``) the predicate made true and the watch signalled, or
  (``condition: time``) a reminder said a minute less two seconds ago, so it falls due
  two seconds later; the seam waits for ``commitment.fired`` (RFC 0068 §C).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import secrets as random_secrets
from datetime import timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import Field, StrictBool

from api.auth import Api, Tenant
from api.errors import ApiError, not_found
from api.services import ApiServices
from api.tenancy import owned_ref
from api.workflow_calls import run_workflow
from memory.distillation.memory_index import INDEX_PATH
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.redaction.vault import registry_for_tenant
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import workflow_ids_for
from schemas.base import WireModel
from schemas.commitments import CommitmentInferenceInput, CommitmentInferenceResult
from schemas.consolidation import ConsolidationInput, ConsolidationResult
from schemas.errors import DuplicateKey
from schemas.events import EventRecord
from schemas.memory_entry import MAX_TAGS, MemoryListOptions, NewMemoryEntry, Tag, Tier
from schemas.memory_ref import MemoryRef
from schemas.workflow_io import DistillationInput, DistillationResult, TokenBudget


def seams_enabled(api: Api) -> None:
    """Conformance-only (contract §1): 404 unless OPENWOP_TEST_SEAM_ENABLED is set."""
    if not api.settings.test_seams:
        raise not_found("route")


router = APIRouter(tags=["openwop seams"], dependencies=[Depends(seams_enabled)])

MAX_SEED_SOURCES = 200
FIRE_WAIT_S = 30.0
SeedContent = Annotated[str, Field(min_length=1, max_length=64 * 1024)]


class SeedSource(WireModel):
    content: SeedContent
    tags: tuple[Tag, ...] = Field(default=(), max_length=MAX_TAGS)


class DistillSeamRequest(WireModel):
    memory_ref: str
    token_budget: TokenBudget | None = None
    sources: tuple[SeedContent | SeedSource, ...] | None = Field(
        default=None, min_length=1, max_length=MAX_SEED_SOURCES
    )
    index_emitted: StrictBool = False
    include_secret_canary: StrictBool = False


class ConsolidateSeamRequest(WireModel):
    memory_ref: str
    sources: tuple[SeedContent | SeedSource, ...] | None = Field(
        default=None, min_length=1, max_length=MAX_SEED_SOURCES
    )
    include_secret_canary: StrictBool = False


Intention = Annotated[str, Field(min_length=1, max_length=2000)]


class CommitmentFireSeamRequest(WireModel):
    memory_ref: str
    condition: Literal["time", "predicate"] = "predicate"
    include_intention_canary: StrictBool = False
    # Host extensions: the intention to infer (else one for the condition), and whether
    # the firing enqueues an agent run.
    intention: Intention | None = None
    enqueue_run: StrictBool = True


# Said this long before now, "in 1 minute" falls due two seconds after the seam writes it.
TIME_INTENTION = "Remind me in 1 minute to follow up with the customer"
TIME_SAID_BEFORE = timedelta(minutes=1) - timedelta(seconds=2)
PREDICATE_INTENTION = "Follow up with the customer when the contract is signed"
# Consolidate's first-use corpus: a restatement the pass merges, and a distinct fact.
CONSOLIDATION_FIXTURE = (
    "The customer prefers invoices in EUR.",
    "Note: the customer prefers invoices in EUR.",
    "Support hours are 9 to 5 on weekdays.",
)


def _seed_id(ref: MemoryRef, source: SeedSource, tier: Tier) -> str:
    digest = hashlib.sha256(
        "\x1f".join([str(ref), tier.value, source.content, *source.tags]).encode()
    ).hexdigest()
    return f"seed-{digest[:40]}"


async def _seed(
    api: ApiServices,
    ref: MemoryRef,
    sources: tuple[str | SeedSource, ...],
    tier: Tier,
    secrets: MemorySecretRegistry,
) -> list[str]:
    """Write the fixture entries once (content-derived ids); already present is fine."""
    ids = []
    for raw in sources:
        source = raw if isinstance(raw, SeedSource) else SeedSource(content=raw)
        entry_id = _seed_id(ref, source, tier)
        ids.append(entry_id)
        with contextlib.suppress(DuplicateKey):  # seeded by an earlier call
            await api.store.put(
                ref,
                NewMemoryEntry(id=entry_id, content=source.content, tags=source.tags, tier=tier),
                secrets=secrets,
            )
    return ids


async def _seed_fixture(
    api: ApiServices,
    ref: MemoryRef,
    tenant: str,
    sources: tuple[str | SeedSource, ...],
    include_canary: bool,
    tier: Tier,
) -> tuple[list[str], str | None]:
    """Seed a seam's sources (SR-1 redacted with the tenant's secrets) and return their
    ids. With ``include_canary``, a fresh canary secret is registered for this request
    and one more source carries it: SR-1 redacts it at write, and the answer says whether
    it re-appeared in the output (the canary is returned for that check only)."""
    registry = api.registries.for_tenant(tenant)
    canary = None
    if include_canary:
        canary = "canary-" + random_secrets.token_hex(16)
        registry = registry_for_tenant(api.vault, tenant, "seam")
        registry.register("seam-canary", canary)
        carrier = f"The deploy token for {ref.agent} is {canary}"
        sources = (*sources, SeedSource(content=carrier, tags=("secret",)))
    seeded = await _seed(api, ref, sources, tier, registry) if sources else []
    return seeded, canary


def _shaped(event: EventRecord) -> dict[str, Any]:
    """An event as the seams answer with it: its content-free payload fields directly on
    the object, with its type (and seq, a host extra) beside them (contract §3.1)."""
    return {**event.payload, "type": event.type, "seq": event.seq}


async def _event(api: ApiServices, ref: MemoryRef, seq: int | None) -> dict[str, Any] | None:
    if seq is None:
        return None
    found = await api.store.events(ref, after_seq=seq - 1, limit=1)
    return _shaped(found[0]) if found and found[0].seq == seq else None


async def _earlier_distillation(
    api: ApiServices, ref: MemoryRef, sources: list[str], budget: int
) -> dict[str, Any] | None:
    wanted = sorted(sources)
    found = await api.store.events(ref, types=["memory.compacted"], limit=10_000)
    for event in reversed(found):
        payload = event.payload
        distillation = payload.get("distillation")
        source_ids = payload.get("sourceIds")
        if (
            isinstance(source_ids, list)
            and sorted(map(str, source_ids)) == wanted
            and isinstance(distillation, dict)
            and distillation.get("tokenBudget") == budget
        ):
            return _shaped(event)
    return None


async def _leaked(api: ApiServices, ref: MemoryRef, canary: str | None, ids: list[str]) -> bool:
    """Whether the canary is readable in any of ``ids`` (outputs of the run)."""
    if canary is None:
        return False
    for entry_id in ids:
        entry = await api.store.get(ref, entry_id)
        if entry is not None and canary in entry.content:
            return True
    return False


@router.post("/memory/distill", summary="Run a token-budgeted distillation (RFC 0062)")
async def distill(body: DistillSeamRequest, api: Api, tenant: Tenant) -> dict[str, Any]:
    from workflows.distillation import DistillationWorkflow

    ref = owned_ref(tenant, body.memory_ref)
    await api.temporal()  # unreachable: refused before anything is seeded
    seeded, canary = await _seed_fixture(
        api, ref, tenant, body.sources or (), body.include_secret_canary, Tier.EPISODIC
    )
    if body.sources is None:
        # Fresh every call: a run over the ref alone may find everything distilled
        # already, and the contract wants the 1-token request refused, not "nothing".
        nonce = random_secrets.token_hex(8)
        defaults = tuple(f"distill-default-{n} {nonce}" for n in (1, 2))
        await _seed(api, ref, defaults, Tier.EPISODIC, api.registries.for_tenant(tenant))
        seeded = []  # distill the ref: what it holds, the defaults and any canary
    result: DistillationResult = await run_workflow(
        api,
        DistillationWorkflow.run,
        DistillationInput(
            memory_ref=ref,
            token_budget=body.token_budget,
            sources=tuple(seeded) if seeded else None,
            index_emitted=body.index_emitted,
        ),
        workflow_id=workflow_ids_for(api.settings).distillation(ref),
        ref=ref,
        summary=f"distill {ref} (seam)",
    )
    event = await _event(api, ref, result.compacted_event_seq)
    checksum = result.archive_checksum
    status: str = result.status
    if event is None and seeded:
        # These sources were distilled before under this budget: the archive is immutable
        # and addressable, so the same input answers with the same archive (RFC 0062 §B.4)
        # instead of distilling twice.
        event = await _earlier_distillation(api, ref, seeded, result.token_budget)
        if event is not None:
            checksum = await api.store.archive_checksum(ref, event["outputId"])
            status = "already-distilled"
    answer: dict[str, Any] = {
        "event": event,
        "archiveChecksum": checksum,
        "indexUpdated": result.index is not None,
        "status": status,
        "tokenBudget": result.token_budget,
        "tokensUsed": result.tokens_used,
        "outputId": result.output_id,
    }
    if result.index is not None:
        # The index is content-free by design (tags, counts, archive ids), so the seam
        # returns it whole: the index-roundtrip scenario reads it back here.
        found = await api.store.index_file(ref)
        answer["indexFile"] = {
            "path": INDEX_PATH,
            "version": found[0] if found else result.index.version,
            "content": json.loads(found[1]) if found else None,
        }
    if canary is not None:
        answer["secretLeaked"] = await _leaked(
            api, ref, canary, [result.output_id] if result.output_id else []
        )
    return answer


@router.post("/memory/consolidate", summary="Run a consolidation pass (RFC 0068 §D)")
async def consolidate(body: ConsolidateSeamRequest, api: Api, tenant: Tenant) -> dict[str, Any]:
    from workflows.consolidation import ConsolidationWorkflow

    ref = owned_ref(tenant, body.memory_ref)
    await api.temporal()  # unreachable: refused before anything is seeded
    sources = body.sources
    if sources is None and not await api.store.list(ref, MemoryListOptions(limit=1)):
        sources = CONSOLIDATION_FIXTURE
    seeded, canary = await _seed_fixture(
        api, ref, tenant, sources or (), body.include_secret_canary, Tier.SEMANTIC
    )
    result: ConsolidationResult = await run_workflow(
        api,
        ConsolidationWorkflow.run,
        ConsolidationInput(memory_ref=ref),
        workflow_id=workflow_ids_for(api.settings).consolidation(ref),
        ref=ref,
        summary=f"consolidate {ref} (seam)",
    )
    event = await _event(api, ref, result.consolidated_event_seq) or {
        # A pass that changed nothing appends no event; its counts are still the answer.
        "type": "agent.memory.consolidated",
        "memoryRef": str(ref),
        "inputCount": result.input_count,
        "outputCount": result.output_count,
        "trigger": "on-demand",
    }
    answer: dict[str, Any] = {
        "event": event,
        "inputCount": result.input_count,
        "outputCount": result.output_count,
        "mergedCount": result.merged_count,
        "supersededCount": result.superseded_count,
        "passId": result.pass_id,
    }
    if canary is not None:
        answer["secretLeaked"] = await _leaked(api, ref, canary, seeded)
    return answer


@router.post("/commitment/fire", summary="Infer a commitment and fire it once (RFC 0068 §C)")
async def fire_commitment(
    body: CommitmentFireSeamRequest, api: Api, tenant: Tenant
) -> dict[str, Any]:
    from workflows.commitment_inference import CommitmentInferenceWorkflow

    ref = owned_ref(tenant, body.memory_ref)
    await api.temporal()  # unreachable: refused before anything is seeded
    registry = api.registries.for_tenant(tenant)
    intention = body.intention or (
        TIME_INTENTION if body.condition == "time" else PREDICATE_INTENTION
    )
    if body.include_intention_canary:
        # A fresh marker in the intention: the client checks it reaches no event field.
        intention = f"{intention} (ref canary-{random_secrets.token_hex(8)})"
    source = SeedSource(content=intention, tags=("commitment",))
    if body.condition == "time":
        # Said a minute less two seconds ago: "in 1 minute" is due two seconds from now.
        said = api.store.now() - TIME_SAID_BEFORE
        back_dated = PostgresMemoryStore(
            api.store.engine,
            limits=api.store.limits,
            clock=lambda: said,
            intent_links=api.store.db.intent_links,
        )
        memory_id = _seed_id(ref, source, Tier.EPISODIC)
        with contextlib.suppress(DuplicateKey):
            await back_dated.put(
                ref,
                NewMemoryEntry(id=memory_id, content=intention, tags=source.tags),
                secrets=registry,
            )
    else:
        [memory_id] = await _seed(api, ref, (source,), Tier.EPISODIC, registry)
    inference: CommitmentInferenceResult = await run_workflow(
        api,
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(
            memory_ref=ref, memory_ids=(memory_id,), enqueue_runs=body.enqueue_run
        ),
        workflow_id=workflow_ids_for(api.settings).inference(ref),
        ref=ref,
        summary=f"infer commitments of {ref} (seam)",
    )
    records = [r for r in await api.store.commitments.list(ref) if r.memory_id == memory_id]
    if not records:
        raise ApiError(
            422,
            "invalid_input",
            "intention: no commitment could be read from it "
            f"({inference.inference.unparsable_count} unparsable)",
            field="intention",
        )
    record = records[0]
    if record.condition != body.condition:
        raise ApiError(
            422,
            "invalid_input",
            f"intention: it reads as a {record.condition} commitment, not {body.condition}",
            field="intention",
        )
    if record.condition == "predicate":
        await _make_predicate_true(api, ref, record.commitment_id, record.workflow_id, registry)
    event = await _wait_for_fired(api, ref, record.commitment_id)
    detail = await api.store.commitments.show(ref, record.commitment_id)
    answer: dict[str, Any] = {
        "event": event,
        "commitmentId": record.commitment_id,
        "fireCount": detail.commitment.fire_count if detail else 0,
    }
    if body.include_intention_canary:
        # The intention's plaintext is served here, at the top level of the answer, for
        # the client to check it is absent from the durable event (RFC 0068 §C.3).
        answer["intentionCanary"] = detail.intention if detail else intention
    return answer


async def _make_predicate_true(
    api: ApiServices,
    ref: MemoryRef,
    commitment_id: str,
    workflow_id: str | None,
    registry: MemorySecretRegistry,
) -> None:
    """Write what the watch's predicate waits for (the "when <tag> exists" tag) and
    signal the watch, as the change listener would."""
    detail = await api.store.commitments.show(ref, commitment_id)
    spec = (detail.spec if detail else None) or {}
    if spec.get("predicate") != "memory.tag_exists":
        raise ApiError(
            422,
            "invalid_input",
            "intention: the seam fires 'when <tag> exists' predicate intentions",
            field="intention",
        )
    args = spec.get("args")
    tag = str(args.get("tag", "")) if isinstance(args, dict) else ""
    await _seed(
        api, ref, (SeedSource(content="condition met", tags=(tag,)),), Tier.EPISODIC, registry
    )
    if workflow_id:
        client = await api.temporal()
        await client.get_workflow_handle(workflow_id).signal("memory_changed")


async def _wait_for_fired(api: ApiServices, ref: MemoryRef, commitment_id: str) -> dict[str, Any]:
    """The commitment's fired event: one read of the log, then only what is new."""
    deadline = asyncio.get_running_loop().time() + FIRE_WAIT_S
    after = 0
    while True:
        found = await api.store.events(ref, after_seq=after, types=["commitment.fired"], limit=1000)
        for event in found:
            if event.payload.get("commitmentId") == commitment_id:
                return _shaped(event)
        after = found[-1].seq if found else after
        if len(found) == 1000:
            continue  # more to read before waiting
        if asyncio.get_running_loop().time() > deadline:
            raise ApiError(
                504, "fire_timeout", f"the commitment did not fire within {FIRE_WAIT_S:.0f} s"
            )
        await asyncio.sleep(0.2)
