"""Operations on one memoryRef started side by side leave the state of some serial order
(memory/storage/locks.py): the three races the store had without a shared ordering.

Each test starts two store operations on a fresh memoryRef within a few milliseconds of
each other (seeded jitter, either one first), many times. Before the ordering, inference
beside consolidation armed a merged promise twice, inference beside forget left the
erased entry's commitment armed, and a snapshot beside forget kept the forgotten text.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_entry import ForgetRequest, Tier
from tests.support.factories import note, unique_ref
from tests.support.scan import tables_holding

TRIALS = 25
MAX_JITTER_S = 0.02


async def side_by_side(
    rng: random.Random, first: Callable[[], Awaitable[Any]], second: Callable[[], Awaitable[Any]]
) -> None:
    """Start both, the second after 0-20 ms, in a random order."""
    pair = [first, second]
    rng.shuffle(pair)
    delay = rng.uniform(0, MAX_JITTER_S)

    async def later() -> Any:
        await asyncio.sleep(delay)
        return await pair[1]()

    await asyncio.gather(pair[0](), later())


async def armed_sources(engine: AsyncEngine, ref: str) -> list[tuple[str, bool]]:
    """(source id, whether the source is a live, unmerged entry) of each armed commitment."""
    COMMITMENTS, ENTRIES = tables.commitments, tables.entries
    query = (
        select(
            COMMITMENTS.c.memory_id, ENTRIES.c.id.is_not(None) & ENTRIES.c.invalidated_at.is_(None)
        )
        .select_from(
            COMMITMENTS.outerjoin(
                ENTRIES,
                (ENTRIES.c.memory_ref == COMMITMENTS.c.memory_ref)
                & (ENTRIES.c.id == COMMITMENTS.c.memory_id),
            )
        )
        .where(COMMITMENTS.c.memory_ref == ref, COMMITMENTS.c.state == "armed")
    )
    async with engine.connect() as connection:
        return [(row[0], bool(row[1])) for row in (await connection.execute(query)).all()]


async def test_inference_beside_consolidation_arms_a_merged_promise_once(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    rng = random.Random(20)
    for trial in range(TRIALS):
        ref = unique_ref()
        promise = (
            f"Remind me in 2 hours to call the landlord about the lease {uuid.uuid4().hex[:8]}"
        )
        await store.put_many(ref, [note(promise, tier=Tier.SEMANTIC) for _ in range(2)])
        await side_by_side(
            rng,
            partial(
                store.consolidate,
                ConsolidateMemoryRequest(memory_ref=ref, run_key=f"race-{trial}"),
            ),
            partial(store.commitments.infer, InferCommitmentsRequest(memory_ref=ref)),
        )
        armed = await armed_sources(engine, ref)
        assert all(live for _, live in armed), (trial, "armed for a merged source")
        assert len(armed) == 1, (trial, f"{len(armed)} commitments armed for one promise")


async def test_inference_beside_forget_leaves_nothing_armed_for_the_forgotten_entry(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    rng = random.Random(21)
    for trial in range(TRIALS):
        ref = unique_ref()
        promise = f"Follow up when the contract is signed {uuid.uuid4().hex[:8]}"
        target = await store.put(ref, note(promise))
        await side_by_side(
            rng,
            partial(store.forget, ref, ForgetRequest(ids=(target.id,))),
            partial(store.commitments.infer, InferCommitmentsRequest(memory_ref=ref)),
        )
        assert await armed_sources(engine, ref) == [], trial
        assert await tables_holding(engine, promise) == [], trial


async def test_snapshot_beside_forget_keeps_no_forgotten_text(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    rng = random.Random(22)
    for trial in range(TRIALS):
        ref = unique_ref()
        secret_fact = f"The gate code for the depot is {uuid.uuid4().hex[:10]}"
        target = await store.put(ref, note(secret_fact))
        await store.put_many(ref, [note(f"Ordinary fact number {i}") for i in range(20)])
        await side_by_side(
            rng,
            partial(store.snapshot, ref, f"session-{trial}"),
            partial(store.forget, ref, ForgetRequest(ids=(target.id,))),
        )
        assert await tables_holding(engine, secret_fact) == [], trial
