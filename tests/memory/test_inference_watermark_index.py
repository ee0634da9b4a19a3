"""Commitment inference reads only what changed (issue 24, item 3): once a memoryRef has
its watermark, the query for new candidates is answered by ix_entries_ref_updated
(migration 0019), not by reading every entry of the memoryRef; and an entry written after
the watermark is still inferred."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.inference_watermark_bench import INDEX, SEED, candidates_plan
from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.scan import index_seeded_entries


async def test_the_nightly_scan_reads_new_entries_through_the_index(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    async with engine.begin() as connection:
        await connection.execute(
            text(SEED), {"tenant": parse_memory_ref(ref).tenant, "ref": ref, "size": 20_000}
        )
        await index_seeded_entries(connection, ref)
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        await connection.execute(text("ANALYZE memory_entries"))
    request = InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    first = await store.commitments.infer(request)
    assert first.created == 20  # one in a thousand seeded entries reads like a promise
    await store.put(ref, note("Remind me in 2 days to call the vendor"))
    nightly = await store.commitments.infer(request)
    assert nightly.created == 1
    assert INDEX in await candidates_plan(store, ref)
