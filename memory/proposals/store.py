"""ProposalStore: proposals in PostgreSQL, the one place their state changes.

    store.proposals.synthesize(ref, run_id, task_queue, secrets)   a dream's routines -> drafts
    store.proposals.list(tenant, state=, kind=) / get(tenant, id)
    store.proposals.revise(tenant, id, ProposalRevision)
    store.proposals.transition(TransitionRequest)  reject, archive
    store.proposals.installable(InstallRequest) / mark_applied(InstallRequest, installed_ref)
    store.proposals.seed_demo(tenant, task_queue)  the conformance seam's demo draft

Every change is one transaction guarded by the state it expects, so a retried activity
finds its own change and returns it (a move already made is not made twice), and a move
the lifecycle forbids raises InvalidTransition. Every statement is scoped to one tenant
(CTI-1): a proposal id of another tenant is simply not found.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.events.event_log import PendingEvent, append_events
from memory.proposals.routines import MIN_OCCURRENCES, find_routines
from memory.proposals.sightings import advance_watermark, read_sightings, unchanged_since_last
from memory.proposals.synthesis import KnownRoutine, NewProposal, demo_draft, proposals_for
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped, tenant_scoped
from schemas.errors import InvalidInput, InvalidTransition, ProposalNotFound
from schemas.events import EventType
from schemas.memory_ref import MemoryRef, parse_memory_ref, parse_segment
from schemas.proposals import (
    OPEN_STATES,
    AutomationArtifact,
    InstallRequest,
    Proposal,
    ProposalActivated,
    ProposalActivation,
    ProposalCreated,
    ProposalKind,
    ProposalRevision,
    ProposalState,
    SynthesisResult,
    TransitionRequest,
    artifact_sha256,
)

PROPOSALS = tables.proposals


def checked_artifact(kind: ProposalKind, artifact: dict[str, Any], tenant: str) -> dict[str, Any]:
    """The artifact as stored: valid for its kind (InvalidInput 'artifact', a 422),
    normalised to its wire form, and acting only within the proposal's tenant."""
    if kind != "automation":
        return artifact  # kinds this host does not install are kept as given (inert)
    try:
        parsed = AutomationArtifact.model_validate(artifact)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidInput(f"artifact.{where}", first["msg"]) from None
    if parsed.action.input.memory_ref.tenant != tenant:
        raise InvalidInput("artifact.action.input.memoryRef", "must be a memoryRef of this tenant")
    return parsed.to_wire()


class ProposalStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # --- synthesis (a dream) ---

    async def synthesize(
        self,
        ref: MemoryRef,
        run_id: str,
        task_queue: str,
        secrets: MemorySecretRegistry | None = None,
    ) -> SynthesisResult:
        """Record a draft for every routine of ``ref`` not proposed before: one
        transaction, deterministic ids, ``proposal.created`` for each new draft. Title
        and rationale pass the SR-1 chokepoint with ``secrets``."""
        recorded = await unchanged_since_last(self.db, ref, run_id)
        if recorded is not None:  # nothing asked since the last synthesis
            return SynthesisResult(created=tuple(recorded))
        read = await read_sightings(self.db, ref)
        if len(read.sightings) < MIN_OCCURRENCES:
            # No routine can form (most agents): nothing to record either, and the next
            # read of so few requests costs what the watermark's check would.
            return SynthesisResult()
        routines = find_routines(read.sightings, read.time_zone)
        if not routines:  # the watermark alone, one autocommit statement
            if read.seen_through is not None:
                async with self.db.writing_one_statement() as connection:
                    await connection.execute(advance_watermark(ref, read.seen_through))
            return SynthesisResult()
        async with self.db.writing() as connection:
            if read.seen_through is not None:
                await connection.execute(advance_watermark(ref, read.seen_through))
            known = await self._known_routines(connection, ref, routines)
            plan = proposals_for(ref, routines, known, run_id=run_id, task_queue=task_queue)
            created = []
            for planned in plan.new:
                proposal = dataclasses.replace(
                    planned,
                    title=write_redacted(planned.title, secrets),
                    rationale=write_redacted(planned.rationale, secrets),
                )
                if await self._insert(connection, proposal):
                    created.append(proposal)
            await append_events(
                connection,
                ref,
                [_created_event(proposal) for proposal in created],
                self.db.now(),
            )
        return SynthesisResult(
            routines=len(routines),
            created=(*plan.recorded, *(proposal.proposal_id for proposal in created)),
            duplicates=sum(1 for proposal in created if proposal.duplicate_of),
            unchanged=plan.unchanged,
        )

    async def _known_routines(
        self, connection: AsyncConnection, ref: MemoryRef, routines: Sequence[Any]
    ) -> list[KnownRoutine]:
        """Proposals of ``ref`` sharing an entry with one of ``routines``, oldest first."""
        ids = sorted({entry_id for routine in routines for entry_id in routine.entry_ids})
        rows = await connection.execute(
            select(
                PROPOSALS.c.proposal_id,
                PROPOSALS.c.source_entry_ids,
                PROPOSALS.c.schedule_key,
                PROPOSALS.c.source_run_ids,
            )
            .where(
                scoped(PROPOSALS, ref),
                PROPOSALS.c.source_entry_ids.overlap(texts("routine_ids", ids)),
            )
            .order_by(PROPOSALS.c.created_at, PROPOSALS.c.proposal_id)
        )
        return [
            KnownRoutine(
                proposal_id=row.proposal_id,
                entry_ids=frozenset(row.source_entry_ids),
                schedule_key=row.schedule_key,
                source_run_ids=tuple(row.source_run_ids),
            )
            for row in rows
        ]

    async def _insert(self, connection: AsyncConnection, proposal: NewProposal) -> bool:
        now = self.db.now()
        result = await connection.execute(
            pg_insert(PROPOSALS)
            .values(
                tenant=proposal.owner_tenant,
                proposal_id=proposal.proposal_id,
                memory_ref=proposal.memory_ref,
                kind=proposal.kind,
                state="draft",
                title=proposal.title,
                rationale=proposal.rationale,
                artifact=proposal.artifact,
                artifact_sha256=artifact_sha256(proposal.artifact),
                source_run_ids=list(proposal.source_run_ids),
                source_entry_ids=list(proposal.source_entry_ids),
                schedule_key=proposal.schedule_key,
                duplicate_of=proposal.duplicate_of,
                owner={"tenant": proposal.owner_tenant},
                version=1,
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_nothing(index_elements=[PROPOSALS.c.tenant, PROPOSALS.c.proposal_id])
        )
        return result.rowcount == 1

    async def seed_demo(self, tenant: str, task_queue: str) -> None:
        """The conformance seam's demo draft for ``tenant`` (contract §3.5), once."""
        tenant = parse_segment(tenant, "tenant")
        async with self.db.writing() as connection:
            await self._insert(connection, demo_draft(tenant, task_queue))

    # --- reads ---

    async def list(
        self,
        tenant: str,
        *,
        state: ProposalState | None = None,
        kind: ProposalKind | None = None,
        memory_ref: MemoryRef | None = None,
        limit: int = 1000,
    ) -> builtins.list[Proposal]:
        query = select(PROPOSALS).where(tenant_scoped(PROPOSALS, parse_segment(tenant, "tenant")))
        if memory_ref is not None:
            query = query.where(scoped(PROPOSALS, memory_ref))
        if state is not None:
            query = query.where(PROPOSALS.c.state == state)
        if kind is not None:
            query = query.where(PROPOSALS.c.kind == kind)
        query = query.order_by(PROPOSALS.c.created_at, PROPOSALS.c.proposal_id).limit(limit)
        async with self.db.reading() as connection:
            rows = (await connection.execute(query)).mappings().all()
        return [_proposal(row) for row in rows]

    async def get(self, tenant: str, proposal_id: str) -> Proposal:
        async with self.db.reading() as connection:
            row = await self._row(connection, tenant, proposal_id)
        return _proposal(row)

    async def _row(
        self, connection: AsyncConnection, tenant: str, proposal_id: str, *, lock: bool = False
    ) -> Any:
        query = select(PROPOSALS).where(
            tenant_scoped(PROPOSALS, parse_segment(tenant, "tenant")),
            PROPOSALS.c.proposal_id == proposal_id,
        )
        if lock:
            query = query.with_for_update()
        row = (await connection.execute(query)).mappings().first()
        if row is None:
            raise ProposalNotFound(proposal_id)
        return row

    # --- lifecycle ---

    async def revise(self, tenant: str, proposal_id: str, revision: ProposalRevision) -> Proposal:
        """Change title, rationale or artifact of an open proposal: state ``revised``,
        never applied. The artifact is checked for its kind first (422)."""
        async with self.db.writing() as connection:
            row = await self._row(connection, tenant, proposal_id, lock=True)
            if row.state not in OPEN_STATES:
                raise InvalidTransition(proposal_id, row.state, "revised")
            changes: dict[str, Any] = {"state": "revised", "version": PROPOSALS.c.version + 1}
            changes["updated_at"] = self.db.now()
            if revision.title is not None:
                changes["title"] = revision.title
            if revision.rationale is not None:
                changes["rationale"] = revision.rationale
            if revision.artifact is not None:
                artifact = checked_artifact(row.kind, revision.artifact, row.tenant)
                changes["artifact"] = artifact
                changes["artifact_sha256"] = artifact_sha256(artifact)
            updated = await connection.execute(
                update(PROPOSALS)
                .where(_key(tenant, proposal_id))
                .values(**changes)
                .returning(PROPOSALS)
            )
            return _proposal(updated.mappings().one())

    async def transition(self, request: TransitionRequest) -> Proposal:
        """Reject or archive: from ``expected`` states only; a move already made (a
        retry) returns the proposal as it is."""
        async with self.db.writing() as connection:
            row = await self._row(connection, request.tenant, request.proposal_id, lock=True)
            if row.state == request.to_state:
                return _proposal(row)
            if row.state not in request.expected:
                raise InvalidTransition(request.proposal_id, row.state, request.to_state)
            updated = await connection.execute(
                update(PROPOSALS)
                .where(_key(request.tenant, request.proposal_id))
                .values(
                    state=request.to_state,
                    version=PROPOSALS.c.version + 1,
                    updated_at=self.db.now(),
                )
                .returning(PROPOSALS)
            )
            return _proposal(updated.mappings().one())

    async def note_reason(self, tenant: str, proposal_id: str, reason: str) -> None:
        """A rejection's reason, written after the rejection (it stays out of Temporal)."""
        async with self.db.writing() as connection:
            await connection.execute(
                update(PROPOSALS)
                .where(_key(tenant, proposal_id), PROPOSALS.c.state == "rejected")
                .values(reason=reason)
            )

    async def installable(self, request: InstallRequest) -> Proposal:
        """The proposal as stored, if the artifact its apply accepted is still the one
        stored (no re-synthesis, no revision in between) and it is open or applied."""
        proposal = await self.get(request.tenant, request.proposal_id)
        if proposal.state not in (*OPEN_STATES, "applied"):
            raise InvalidTransition(request.proposal_id, proposal.state, "applied")
        if proposal.artifact_sha256 != request.artifact_sha256:
            raise InvalidTransition(request.proposal_id, proposal.state, "applied (changed)")
        return proposal

    async def mark_applied(self, request: InstallRequest, installed_ref: str) -> Proposal:
        """``applied`` with its activation and ``proposal.activated``, once: a retry
        after the commit returns the recorded activation."""
        async with self.db.writing() as connection:
            row = await self._row(connection, request.tenant, request.proposal_id, lock=True)
            if row.state == "applied":
                return _proposal(row)
            if row.state not in OPEN_STATES or row.artifact_sha256 != request.artifact_sha256:
                raise InvalidTransition(request.proposal_id, row.state, "applied")
            now = self.db.now()
            activation = ProposalActivation(
                mode=request.mode,
                approval_id=request.approval_id,
                overridden=request.overridden,
                activated_by=request.actor,
                installed_artifact_ref=installed_ref,
                artifact_sha256=row.artifact_sha256,
                activated_at=now,
            )
            updated = await connection.execute(
                update(PROPOSALS)
                .where(_key(request.tenant, request.proposal_id))
                .values(
                    state="applied",
                    activation=activation.to_wire(),
                    version=PROPOSALS.c.version + 1,
                    updated_at=now,
                )
                .returning(PROPOSALS)
            )
            proposal = _proposal(updated.mappings().one())
            event = ProposalActivated(
                proposal_id=proposal.id,
                kind=proposal.kind,
                approval_id=request.approval_id,
                installed_artifact_ref=installed_ref,
            )
            ref = parse_memory_ref(proposal.memory_ref)
            await append_events(
                connection, ref, [PendingEvent(EventType.PROPOSAL_ACTIVATED, event)], now
            )
            return proposal


def _key(tenant: str, proposal_id: str) -> Any:
    return (tenant_scoped(PROPOSALS, tenant)) & (PROPOSALS.c.proposal_id == proposal_id)


def _created_event(proposal: NewProposal) -> PendingEvent:
    payload = ProposalCreated(
        proposal_id=proposal.proposal_id,
        kind=proposal.kind,
        source_run_ids=proposal.source_run_ids,
        duplicate_of=proposal.duplicate_of,
    )
    return PendingEvent(EventType.PROPOSAL_CREATED, payload)


def _proposal(row: Any) -> Proposal:
    return Proposal(
        id=row.proposal_id,
        kind=row.kind,
        state=row.state,
        title=row.title,
        rationale=row.rationale,
        artifact=row.artifact if isinstance(row.artifact, dict) else json.loads(row.artifact),
        provenance={"source_run_ids": tuple(row.source_run_ids)},
        duplicate_of=row.duplicate_of,
        owner=row.owner,
        activation=row.activation,
        created_at=row.created_at,
        updated_at=row.updated_at,
        memory_ref=row.memory_ref,
        artifact_sha256=row.artifact_sha256,
        version=row.version,
        rejection_reason=row.reason,
    )
