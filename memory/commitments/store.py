"""CommitmentStore: the commitments API over the memory store's engine.

    store.commitments.infer(InferCommitmentsRequest(memory_ref=...))
    store.commitments.list("mem://acme/agent-1")

Writes are one transaction each (inference with its watermark; a firing with its claim
and its event). Reads with a malformed memoryRef or commitment id find nothing (CTI-1).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import get_args

from pydantic import TypeAdapter, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.commitments import firing, records, scan
from memory.commitments.predicates import PredicateRegistry, default_predicates
from schemas.commitments import (
    CommitmentDetail,
    CommitmentId,
    CommitmentRecord,
    CommitmentState,
    DateOrder,
    EvaluatePredicateRequest,
    FireCommitmentRequest,
    FireOutcome,
    InferCommitmentsRequest,
    InferenceResult,
    NextWeekday,
    PredicateOutcome,
    TenantCommitmentSettings,
)
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef, parse_memory_ref, parse_segment, try_parse_memory_ref

_COMMITMENT_ID: TypeAdapter[str] = TypeAdapter(CommitmentId)
DATE_ORDERS: frozenset[str] = frozenset(get_args(DateOrder))
NEXT_WEEKDAYS: frozenset[str] = frozenset(get_args(NextWeekday))
MAX_LIST = 10_000


def _valid_id(value: object) -> bool:
    try:
        _COMMITMENT_ID.validate_python(value)
    except ValidationError:
        return False
    return True


class CommitmentStore:
    def __init__(
        self,
        engine: AsyncEngine,
        clock: Callable[[], datetime],
        predicates: PredicateRegistry | None = None,
    ) -> None:
        self.engine = engine
        self.now = clock
        self.predicates = predicates or default_predicates()

    async def infer(self, request: InferCommitmentsRequest) -> InferenceResult:
        request = InferCommitmentsRequest.model_validate(request)
        async with self.engine.begin() as connection:
            return await scan.infer_commitments(connection, request, self.now())

    async def unarmed(
        self, memory_ref: MemoryRef, limit: int = 500, *, due_before: datetime | None = None
    ) -> builtins.list[records.UnarmedCommitment]:
        async with self.engine.connect() as connection:
            return await records.unarmed(connection, memory_ref, limit, due_before)

    async def deferred(
        self, memory_ref: MemoryRef | None, due_from: datetime
    ) -> tuple[int, datetime | None]:
        """Armed time commitments not started because they are due at or after
        ``due_from``: how many, and the earliest instant; of every memoryRef when
        ``memory_ref`` is None."""
        async with self.engine.connect() as connection:
            return await records.deferred(connection, memory_ref, due_from)

    async def refs_to_arm(
        self, due_before: datetime, after: MemoryRef | None = None, limit: int = 500
    ) -> builtins.list[MemoryRef]:
        """The memoryRefs with a deferred time commitment due before ``due_before``, in
        (tenant, memoryRef) order after ``after``: what the fleet's horizon arms."""
        cursor = None if after is None else (after.tenant, str(after))
        async with self.engine.connect() as connection:
            rows = await records.refs_to_arm(connection, due_before, cursor, limit)
        return [parse_memory_ref(ref) for _, ref in rows]

    async def mark_armed(self, memory_ref: MemoryRef, commitment_ids: Sequence[str]) -> None:
        async with self.engine.begin() as connection:
            await records.mark_armed(connection, memory_ref, commitment_ids, self.now())

    async def fire(self, request: FireCommitmentRequest) -> FireOutcome:
        async with self.engine.begin() as connection:
            return await firing.fire_time_occurrence(connection, request, self.now())

    async def evaluate(
        self, request: EvaluatePredicateRequest, *, retried: bool = False
    ) -> PredicateOutcome:
        """``retried``: a retry of an evaluation whose commit may have landed."""
        async with self.engine.begin() as connection:
            return await firing.evaluate_predicate(
                connection, request, self.predicates, self.now(), retried=retried
            )

    async def list(
        self,
        memory_ref: MemoryRef | str,
        *,
        state: CommitmentState | None = None,
        limit: int = 1000,
    ) -> builtins.list[CommitmentRecord]:
        ref = try_parse_memory_ref(memory_ref)
        if ref is None:
            return []
        if not 1 <= limit <= MAX_LIST:
            raise InvalidInput("limit", f"between 1 and {MAX_LIST}")
        async with self.engine.connect() as connection:
            return await records.list_commitments(connection, ref, state=state, limit=limit)

    async def show(
        self, memory_ref: MemoryRef | str, commitment_id: str
    ) -> CommitmentDetail | None:
        ref = try_parse_memory_ref(memory_ref)
        if ref is None or not _valid_id(commitment_id):
            return None
        async with self.engine.connect() as connection:
            return await records.commitment_detail(connection, ref, commitment_id)

    async def cancel(
        self, memory_ref: MemoryRef | str, commitment_id: str
    ) -> CommitmentRecord | None:
        ref = parse_memory_ref(memory_ref)
        if not _valid_id(commitment_id):
            return None
        async with self.engine.begin() as connection:
            return await records.cancel_commitment(connection, ref, commitment_id, self.now())

    async def confirm(
        self, memory_ref: MemoryRef | str, commitment_id: str
    ) -> CommitmentRecord | None:
        """A proposed commitment becomes armed (arming then starts its workflow)."""
        ref = parse_memory_ref(memory_ref)
        if not _valid_id(commitment_id):
            return None
        async with self.engine.begin() as connection:
            return await records.confirm_commitment(connection, ref, commitment_id, self.now())

    async def set_time_zone(self, tenant: str, time_zone: str) -> str:
        """The zone "tomorrow at 9" means for this tenant (default UTC)."""
        return (await self.update_settings(tenant, time_zone=time_zone)).time_zone

    async def update_settings(
        self,
        tenant: str,
        *,
        time_zone: str | None = None,
        require_confirmation: bool | None = None,
        date_order: DateOrder | None = None,
        next_weekday: NextWeekday | None = None,
    ) -> TenantCommitmentSettings:
        """Set some of a tenant's commitment settings; returns all of them."""
        parse_segment(tenant, "tenant")
        if date_order is not None and date_order not in DATE_ORDERS:
            raise InvalidInput("dateOrder", "one of MDY, DMY, YMD")
        if next_weekday is not None and next_weekday not in NEXT_WEEKDAYS:
            raise InvalidInput(
                "nextWeekday", "one of refuse-when-ambiguous, coming, following-week"
            )
        async with self.engine.begin() as connection:
            found = await records.update_tenant_settings(
                connection,
                tenant,
                self.now(),
                time_zone=time_zone,
                require_confirmation=require_confirmation,
                date_order=date_order,
                next_weekday=next_weekday,
            )
        return found

    async def settings(self, tenant: str) -> TenantCommitmentSettings:
        parse_segment(tenant, "tenant")
        async with self.engine.connect() as connection:
            return await scan.tenant_settings(connection, tenant)

    async def time_zone(self, tenant: str) -> str:
        # Checked like set_time_zone: an unchecked value reached the driver, whose error
        # (a lone surrogate, NUL) quoted it.
        parse_segment(tenant, "tenant")
        async with self.engine.connect() as connection:
            return await scan.tenant_time_zone(connection, tenant)
