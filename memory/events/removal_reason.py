"""Why a transaction removes entries, as a transaction-local setting that triggers read.

The commitments trigger (migration 0009) ends a removed entry's commitments ``expired``
when TTL removed it and ``cancelled`` otherwise; the store's clock is not the database's
(tests and replays set it), so the reason is declared, not inferred from timestamps.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection


async def declare_removal_reason(connection: AsyncConnection, reason: str) -> None:
    await connection.execute(select(func.set_config("agent_memory.removal_reason", reason, True)))
