"""Every advisory lock the store takes, named in one place.

Work on one memoryRef is ordered by PostgreSQL transaction-scoped advisory locks
(released at commit or rollback, so a crashed worker never leaves one held). Each lock is
a named key; ``lock(connection, key)`` takes it inside the caller's transaction.

The key strings are exactly those earlier releases used ("distill|<ref>",
"consolidate|<ref>", "<ref>|<tier>"), so during a rolling deploy old and new workers
still serialise against each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

# Session-level lock (not transaction-scoped) held while migrations run, so two workers
# booting at once do not both migrate (memory/database.py).
MIGRATION_LOCK_ID = 727372

# One statement for every key: its text (and prepared statement) never changes.
_TAKE = select(func.pg_advisory_xact_lock(func.hashtextextended(bindparam("lock_key"), 0)))


@dataclass(frozen=True)
class LockKey:
    text: str


def distillation_commit(ref: MemoryRef) -> LockKey:
    """One distillation commit per memoryRef at a time; erasure takes it too, so a forget
    and a distillation of the same ref never interleave."""
    return LockKey(f"distill|{ref}")


def consolidation_pass(ref: MemoryRef) -> LockKey:
    """Consolidation passes (and their undo) of one memoryRef, one at a time."""
    return LockKey(f"consolidate|{ref}")


def tier_capacity(ref: MemoryRef, tier: Tier) -> LockKey:
    """Writers to one (memoryRef, tier), so two puts cannot both see room."""
    return LockKey(f"{ref}|{tier.value}")


async def lock(connection: AsyncConnection, key: LockKey) -> None:
    """Take ``key`` until the caller's transaction ends."""
    await connection.execute(_TAKE, {"lock_key": key.text})
