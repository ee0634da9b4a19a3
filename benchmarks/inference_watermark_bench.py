"""What a nightly commitment inference costs once its watermark is set: with the index
that serves the watermark (migration 0019) and without it, in the same run, over a
small and a large memoryRef.

    python -m benchmarks.inference_watermark_bench [--sizes 10000 1000000] [--repeats 5]

For each size N, one memoryRef is seeded inside PostgreSQL (INSERT ... SELECT over
generate_series; 0.1% of the entries read like commitments, "Remind me in 3 days to ...",
the rest plain notes; updated_at spread over the last 30 days), VACUUM (ANALYZE)d, and
inferred once (the first scan, which parses every commitment-like entry and sets the
watermark). Then, per repeat, 20 new entries are written through the store (two of them
commitments) and `store.commitments.infer` is timed: the nightly case, where only what
changed should be read. The same is timed with ix_entries_ref_updated dropped (the
baseline) and the index is made again. EXPLAIN says which index the candidates query
used. Target (issue 24): the nightly inference of a 1M-entry memoryRef costs about what
a 10k one does.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from sqlalchemy import text

from benchmarks.common import bench_server, fresh_database
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore, StoreLimits
from schemas.commitments import InferCommitmentsRequest
from schemas.memory_entry import NewMemoryEntry
from schemas.memory_ref import parse_memory_ref

INDEX = "ix_entries_ref_updated"
NEW_PER_NIGHT = 20
SEED = """
INSERT INTO memory_entries (
    tenant, memory_ref, id, content, content_sha256, tags, tier, version, pinned,
    priority, metadata, created_at, updated_at, last_accessed_at
)
SELECT
    CAST(:tenant AS text), CAST(:ref AS text), 'seed' || lpad(k::text, 9, '0'),
    c.content, md5(c.content), '{}', 'episodic', 1, false, 1, '{}'::jsonb,
    t.at, t.at, t.at
FROM generate_series(0, CAST(:size AS integer) - 1) AS k
CROSS JOIN LATERAL (
    SELECT CASE WHEN k % 1000 = 0
        THEN 'Remind me in 3 days to renew contract ' || k
        ELSE 'Note ' || k || ': the weekly sync covered the roadmap and hiring' END
        AS content
) AS c
CROSS JOIN LATERAL (
    SELECT now() - interval '30 days' + k * (interval '30 days' / CAST(:size AS integer)) AS at
) AS t
"""


async def nightly(store: PostgresMemoryStore, ref: str, night: int) -> float:
    entries = [
        NewMemoryEntry(
            content=(
                f"Remind me in 2 days to call vendor {night}-{n}"
                if n < 2
                else f"Night {night} note {n} about the release checklist"
            )
        )
        for n in range(NEW_PER_NIGHT)
    ]
    await store.put_many(ref, entries)
    started = time.perf_counter()
    await store.commitments.infer(
        InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    )
    return time.perf_counter() - started


async def candidates_plan(store: PostgresMemoryStore, ref: str) -> str:
    # The candidates query's shape: the memoryRef's live entries updated since a time,
    # oldest first.
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            text(
                "EXPLAIN SELECT id FROM memory_entries WHERE tenant = :tenant "
                "AND memory_ref = :ref AND updated_at > now() - interval '1 hour' "
                "ORDER BY updated_at, id"
            ),
            {"tenant": parse_memory_ref(ref).tenant, "ref": ref},
        )
        return "\n".join(row[0] for row in rows)


async def run_size(server: Any, size: int, repeats: int) -> dict[str, Any]:
    async with fresh_database(server, f"inference_{size}") as url:
        engine = create_engine(url.render_as_string(hide_password=False), pool_size=2)
        try:
            await migrate(engine)
            store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={}), embedder=None)
            ref = f"mem://bench/inference-{size}"
            began = time.perf_counter()
            async with engine.begin() as connection:
                await connection.execute(text(SEED), {"tenant": "bench", "ref": ref, "size": size})
            async with engine.connect() as connection:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
                await connection.execute(text("VACUUM (ANALYZE) memory_entries"))
            seed_s = time.perf_counter() - began
            began = time.perf_counter()
            await store.commitments.infer(
                InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
            )
            first_s = time.perf_counter() - began
            with_index = [await nightly(store, ref, night) for night in range(repeats)]
            plan_with = await candidates_plan(store, ref)
            async with engine.begin() as connection:
                await connection.execute(text(f"DROP INDEX {INDEX}"))
                await connection.execute(text("ANALYZE memory_entries"))
            without = [await nightly(store, ref, repeats + night) for night in range(repeats)]
            plan_without = await candidates_plan(store, ref)
            async with engine.begin() as connection:
                await connection.execute(
                    text(
                        f"CREATE INDEX {INDEX} ON memory_entries "
                        "(tenant, memory_ref, updated_at, id)"
                    )
                )
        finally:
            await engine.dispose()
    return {
        "entries": size,
        "seed_s": round(seed_s, 1),
        "first_scan_s": round(first_s, 2),
        "nightly_with_index_ms": round(statistics.median(with_index) * 1000, 1),
        "nightly_without_index_ms": round(statistics.median(without) * 1000, 1),
        "index_used": INDEX in plan_with,
        "plan_with_index": plan_with.splitlines()[:3],
        "plan_without_index": plan_without.splitlines()[:3],
    }


async def main(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    rows = []
    async with bench_server("inference-bench") as server:
        for size in sizes:
            row = await run_size(server, size, repeats)
            rows.append(row)
            print(
                f"{size:>9,} entries: nightly inference (20 new) p50 "
                f"{row['nightly_with_index_ms']:>7.1f} ms with {INDEX}, "
                f"{row['nightly_without_index_ms']:>7.1f} ms without "
                f"({row['nightly_without_index_ms'] / row['nightly_with_index_ms']:.1f}x); "
                f"index used: {'YES' if row['index_used'] else 'NO'}; "
                f"seeded in {row['seed_s']} s, first scan {row['first_scan_s']} s",
                flush=True,
            )
    if len(rows) > 1:
        small, large = rows[0], rows[-1]
        print(
            f"large / small with the index: "
            f"{large['nightly_with_index_ms'] / small['nightly_with_index_ms']:.2f}x; "
            f"without: {large['nightly_without_index_ms'] / small['nightly_without_index_ms']:.2f}x"
        )
    return rows


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2,000 and 20,000 entries")
    args = parser.parse_args()
    sizes = [2_000, 20_000] if args.quick else args.sizes
    asyncio.run(main(sizes, args.repeats))


if __name__ == "__main__":
    cli()
