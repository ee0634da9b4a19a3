"""Which memoryRefs a fleet dream has work for, and the mark a finished dream leaves.

A ref is due when a write other than maintenance landed since its last fleet dream
(``work_seq > dreamed_seq``, kept by the change-feed triggers; migration 0020), or when an
entry of it has fallen due for TTL erasure (no write tells us that: time does). Both
are range scans of partial indexes that hold only due refs (ix_ref_changes_dream_due,
ix_entries_expiry), so an idle agent costs nothing: no row read, no activity, no
workflow.

A page is ordered by (tenant, memoryRef) and continues after a cursor, so a fleet run
that meets a ref it cannot finish moves past it instead of meeting it again; the ref
stays due for the next run.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, literal, select, tuple_, union, update

from memory.storage import tables
from memory.storage.database import Database
from memory.storage.tenant_scope import all_tenants, scoped, tenant_scoped
from schemas.memory_ref import MemoryRef, parse_memory_ref

REF_CHANGES = tables.ref_changes
ENTRIES = tables.entries


class FleetSelection:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def due(
        self,
        *,
        tenant: str | None,
        after: MemoryRef | None,
        limit: int,
        now: datetime | None = None,
    ) -> list[MemoryRef]:
        """Up to ``limit`` due refs after ``after``, in (tenant, memoryRef) order."""
        now = now or self.db.now()
        changed = select(REF_CHANGES.c.tenant, REF_CHANGES.c.memory_ref).where(
            REF_CHANGES.c.work_seq > REF_CHANGES.c.dreamed_seq
        )
        expiring = (
            select(ENTRIES.c.tenant, ENTRIES.c.memory_ref)
            .where(ENTRIES.c.expires_at.is_not(None), ENTRIES.c.expires_at <= now)
            .distinct()
        )
        if tenant is not None:
            changed = changed.where(tenant_scoped(REF_CHANGES, tenant))
            expiring = expiring.where(tenant_scoped(ENTRIES, tenant))
        if after is not None:
            cursor = tuple_(literal(after.tenant), literal(str(after)))
            changed = changed.where(tuple_(REF_CHANGES.c.tenant, REF_CHANGES.c.memory_ref) > cursor)
            expiring = expiring.where(tuple_(ENTRIES.c.tenant, ENTRIES.c.memory_ref) > cursor)
        refs = union(changed, expiring).subquery()
        statement = select(refs.c.memory_ref).order_by(refs.c.tenant, refs.c.memory_ref)
        statement = statement.limit(limit)
        if tenant is None:
            statement = statement.execution_options(**all_tenants("fleet dream of every tenant"))
        async with self.db.reading() as connection:
            rows = (await connection.execute(statement)).scalars().all()
        return [parse_memory_ref(row) for row in rows]

    async def tenant_has_memory(self, tenant: str) -> bool:
        """Whether any memoryRef of ``tenant`` holds an entry (ix_entries_ref_created
        leads with the tenant): a fleet schedule naming a tenant with none is most
        likely a typo, worth a warning rather than a silent, successful nothing."""
        statement = select(select(ENTRIES.c.id).where(tenant_scoped(ENTRIES, tenant)).exists())
        async with self.db.reading() as connection:
            return bool((await connection.execute(statement)).scalar())

    async def work_seq(self, ref: MemoryRef) -> int:
        """The ref's count of non-maintenance changes, read before a dream works on it."""
        statement = select(func.coalesce(func.max(REF_CHANGES.c.work_seq), 0)).where(
            scoped(REF_CHANGES, ref)
        )
        async with self.db.reading() as connection:
            return int((await connection.execute(statement)).scalar_one())

    async def mark_dreamed(self, ref: MemoryRef, work_seq: int) -> None:
        """Everything up to ``work_seq`` is done; later writes keep the ref due."""
        statement = (
            update(REF_CHANGES)
            .where(scoped(REF_CHANGES, ref), REF_CHANGES.c.dreamed_seq < work_seq)
            .values(dreamed_seq=work_seq)
        )
        # memory_ref_changes has no trigger: the maintenance setting is not needed.
        async with self.db.writing_one_statement() as connection:
            await connection.execute(statement)
