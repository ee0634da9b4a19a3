"""The cost of embedding on the write path: the static model's throughput through the
store against the bare model call, and put / put_many latency with inline embedding
against the same store without an embedder, in the same run.

    python -m benchmarks.embedding_bench [--quick] [--puts 2000] [--json PATH]

1. Throughput (entries/s) of the product path, ``EntryVectors.compute`` (the store's
   ``StaticWordEmbedder.embed``: a worker thread above 32 texts, the lock, unit rows) on
   batches of 1,000 texts as ``put_many(1,000)`` passes them, against the bare
   ``WordLlamaInference.embed`` on the same batches (batch_size 256, as the product),
   interleaved. Single-text latency (what one ``put`` embeds, inline) the same way.
2. Write latency: ``store.put`` of one short entry with the default embedder (vectors
   written in the put's transaction, HNSW insert included) against
   ``PostgresMemoryStore(engine, embedder=None)``, sequential and interleaved (~2,000
   each), and ``put_many`` of 1,000 entries both ways. The added milliseconds decide
   "embed in the write transaction vs a background activity".

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL). The ref is first loaded with ``--preload`` embedded entries so the HNSW
graph is not trivially small. Results go to benchmarks/results/embedding.json
(embedding-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.adapter_bench import measure_pair, percentile, server_info
from benchmarks.common import bench_server, fresh_database
from benchmarks.search_bench import sentence
from memory.embeddings.choice import static_embedder
from memory.embeddings.model import EMBED_BATCH
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from schemas.memory_entry import NewMemoryEntry, Tier

RESULTS_DIR = Path(__file__).with_name("results")
REF = "mem://bench/embedding-agent/main"
WRITE_BATCH = 1_000  # put_many's batch in the measured write path


def entry(rng: random.Random) -> NewMemoryEntry:
    return NewMemoryEntry(content=sentence(rng), tags=("note",), tier=Tier.SEMANTIC)


def stat(seconds: Sequence[float], per: int = 1) -> dict[str, float]:
    return {
        "samples": len(seconds),
        "p50_ms": round(percentile(seconds, 50) * 1000, 4),
        "p99_ms": round(percentile(seconds, 99) * 1000, 4),
        "mean_ms": round(statistics.fmean(seconds) * 1000, 4),
        "entries_per_s": round(per * len(seconds) / sum(seconds), 1),
    }


async def throughput(
    store: PostgresMemoryStore, rounds: int, rng: random.Random, batch: int
) -> dict[str, Any]:
    embedder = static_embedder()
    inference = embedder._inference  # the loaded WordLlamaInference (bare model)
    batches = [[sentence(rng) for _ in range(batch)] for _ in range(rounds)]
    singles = [sentence(rng) for _ in range(rounds * 200)]

    async def product_batch(i: int) -> object:
        return await store.vectors.compute(batches[i % rounds])

    async def bare_batch(i: int) -> object:
        return inference.embed(batches[i % rounds], batch_size=EMBED_BATCH)

    async def product_one(i: int) -> object:
        return await store.vectors.compute([singles[i % len(singles)]])

    async def bare_one(i: int) -> object:
        return inference.embed([singles[i % len(singles)]], batch_size=EMBED_BATCH)

    t_product, t_bare = await measure_pair(product_batch, bare_batch, rounds, warmup=2)
    t_product_one, t_bare_one = await measure_pair(product_one, bare_one, len(singles))
    return {
        "batch_size": batch,
        "mean_chars": round(statistics.fmean(len(t) for b in batches for t in b), 1),
        "product_batch": stat(t_product, batch),
        "bare_batch": stat(t_bare, batch),
        "product_single": stat(t_product_one),
        "bare_single": stat(t_bare_one),
    }


async def writes(
    store: PostgresMemoryStore,
    plain: PostgresMemoryStore,
    puts: int,
    batches: int,
    rng: random.Random,
    batch: int,
) -> dict[str, Any]:
    with_vec = [entry(rng) for _ in range(puts + 20)]
    without = [entry(rng) for _ in range(puts + 20)]

    async def put_embedded(i: int) -> object:
        return await store.put(REF, with_vec[i])

    async def put_plain(i: int) -> object:
        return await plain.put(REF, without[i])

    t_embedded, t_plain = await measure_pair(put_embedded, put_plain, puts, warmup=20)

    many_vec = [[entry(rng) for _ in range(batch)] for _ in range(batches + 1)]
    many_plain = [[entry(rng) for _ in range(batch)] for _ in range(batches + 1)]

    async def many_embedded(i: int) -> object:
        return await store.put_many(REF, many_vec[i])

    async def many_none(i: int) -> object:
        return await plain.put_many(REF, many_plain[i])

    m_embedded, m_plain = await measure_pair(many_embedded, many_none, batches, warmup=1)
    return {
        "put_embedded": stat(t_embedded),
        "put_plain": stat(t_plain),
        "put_many_embedded": stat(m_embedded, batch),
        "put_many_plain": stat(m_plain, batch),
    }


def compare(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {
        "added_p50_ms": round(a["p50_ms"] - b["p50_ms"], 4),
        "added_p99_ms": round(a["p99_ms"] - b["p99_ms"], 4),
        "ratio_p50": round(a["p50_ms"] / b["p50_ms"], 3),
        "ratio_p99": round(a["p99_ms"] / b["p99_ms"], 3),
    }


def row(name: str, s: dict[str, float]) -> str:
    return (
        f"{name:<40}{s['samples']:>8}{s['p50_ms']:>11.3f}{s['p99_ms']:>11.3f}"
        f"{s['entries_per_s']:>14,.0f}"
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    batch = args.batch_size
    started = time.perf_counter()
    async with (
        bench_server("embedding-bench") as server,
        fresh_database(server, "embedding_bench") as url,
    ):
        info = await server_info(url)
        print(
            f"embedding bench: {server.source}, PostgreSQL {info['server_version']} "
            f"(fsync={info['fsync']}, synchronous_commit={info['synchronous_commit']}); "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs "
            "(shared with PostgreSQL and any other run: figures may be noisy)"
        )
        engine = create_engine(url.render_as_string(hide_password=False))
        try:
            await migrate(engine)
            embedder = static_embedder()
            began = time.perf_counter()
            embedder.load()
            load_seconds = time.perf_counter() - began
            store = PostgresMemoryStore(engine, embedder=embedder)
            plain = PostgresMemoryStore(engine, embedder=None)
            print(f"model {embedder.model.id}: weights loaded in {load_seconds:.2f} s")

            tp = await throughput(store, args.rounds, rng, batch)
            ratio_tp = round(
                tp["bare_batch"]["entries_per_s"] / tp["product_batch"]["entries_per_s"], 3
            )
            ratio_one = round(tp["product_single"]["p50_ms"] / tp["bare_single"]["p50_ms"], 3)
            print(
                f"\n== 1. embedding throughput, batches of {batch:,} texts "
                f"(mean {tp['mean_chars']:.0f} chars), interleaved =="
            )
            header = f"{'path':<40}{'samples':>8}{'p50 ms':>11}{'p99 ms':>11}{'entries/s':>14}"
            print(header)
            print("-" * len(header))
            print(row(f"product EntryVectors.compute({batch:,})", tp["product_batch"]))
            print(row(f"bare WordLlamaInference.embed({batch:,})", tp["bare_batch"]))
            print(row("product compute(1 text) (a put's)", tp["product_single"]))
            print(row("bare embed(1 text)", tp["bare_single"]))
            print(
                f"ratio: bare entries/s / product entries/s = {ratio_tp:.2f}x (batch); "
                f"product/bare p50 = {ratio_one:.2f}x (single text)"
            )

            if args.preload:
                began = time.perf_counter()
                for start in range(0, args.preload, batch):
                    count = min(batch, args.preload - start)
                    await store.put_many(REF, [entry(rng) for _ in range(count)])
                preload_s = time.perf_counter() - began
                print(
                    f"\npreloaded {args.preload:,} embedded entries in {preload_s:.1f} s "
                    f"({args.preload / preload_s:,.0f} entries/s)"
                )
            wr = await writes(store, plain, args.puts, args.batches, rng, batch)
        finally:
            await engine.dispose()
    put_cmp = compare(wr["put_embedded"], wr["put_plain"])
    many_cmp = compare(wr["put_many_embedded"], wr["put_many_plain"])
    print(f"\n== 2. write latency, sequential, interleaved (ref {REF}) ==")
    header = f"{'operation':<40}{'samples':>8}{'p50 ms':>11}{'p99 ms':>11}{'entries/s':>14}"
    print(header)
    print("-" * len(header))
    print(row("put, inline embedding (default)", wr["put_embedded"]))
    print(row("put, embedder=None", wr["put_plain"]))
    print(row(f"put_many({batch:,}), inline embedding", wr["put_many_embedded"]))
    print(row(f"put_many({batch:,}), embedder=None", wr["put_many_plain"]))
    print(
        f"ratio put: embedded/plain p50 = {put_cmp['ratio_p50']:.2f}x "
        f"(+{put_cmp['added_p50_ms']:.3f} ms), p99 = {put_cmp['ratio_p99']:.2f}x "
        f"(+{put_cmp['added_p99_ms']:.3f} ms)"
    )
    print(
        f"ratio put_many({batch:,}): embedded/plain p50 = {many_cmp['ratio_p50']:.2f}x "
        f"(+{many_cmp['added_p50_ms']:.1f} ms, "
        f"+{many_cmp['added_p50_ms'] / batch:.3f} ms per entry)"
    )
    single_ms = tp["product_single"]["p50_ms"]
    print(
        f"of the added put p50, the model call itself is {single_ms:.3f} ms; the rest is the "
        "vector INSERT (HNSW insert) in the same transaction"
    )
    total = round(time.perf_counter() - started, 1)
    print(f"\ntotal {total:.1f} s")
    return {
        "benchmark": "embedding_bench",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "seed": args.seed,
        "server": {"source": server.source, **info},
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "model": embedder.model.id,
        "model_load_seconds": round(load_seconds, 3),
        "preload": args.preload,
        "batch_size": batch,
        "throughput": {**tp, "ratio_bare_over_product_entries_per_s": ratio_tp},
        "writes": {**wr, "put": put_cmp, "put_many": many_cmp},
        "total_seconds": total,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a small run (smoke)")
    parser.add_argument("--puts", type=int, default=None, help="puts per side (default 2000)")
    parser.add_argument("--batches", type=int, default=None, help="put_many(1,000) per side")
    parser.add_argument(
        "--batch-size", type=int, default=WRITE_BATCH, help="texts per embed / put_many"
    )
    parser.add_argument("--rounds", type=int, default=None, help="1,000-text embed batches")
    parser.add_argument("--preload", type=int, default=None, help="entries loaded first")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    args.puts = args.puts or (100 if args.quick else 2_000)
    args.batches = args.batches or (2 if args.quick else 10)
    args.rounds = args.rounds or (3 if args.quick else 20)
    if args.preload is None:
        args.preload = 200 if args.quick else 10_000
    json_path = args.json or RESULTS_DIR / (
        "embedding-quick.json" if args.quick else "embedding.json"
    )
    document = asyncio.run(run(args))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {json_path}")
    sys.stdout.flush()
    return document


if __name__ == "__main__":
    main()
