"""Consolidation benchmark: accuracy against a planted corpus and wall time through the
real store, with an all-pairs baseline measured in the same run.

    python -m benchmarks.consolidation_bench            # 10k and 100k entries, baseline 5k
    python -m benchmarks.consolidation_bench --quick    # 2k entries, baseline 500 (smoke)
    python -m benchmarks.consolidation_bench --paraphrases   # passes with the stage on

For each size, a generated corpus (benchmarks/consolidation_corpus.py: planted duplicate
families, look-alike conflicts, re-keyed values) is loaded into one memoryRef of a fresh
database, then one pass runs through ``PostgresMemoryStore.consolidate`` (read, plan,
claim, commit: exactly what the ConsolidationWorkflow's activity does) and is timed.
What the pass marked in the database is scored against the plant: merge precision and
recall (same-cluster pairs), supersession, and the false-merge rate on conflict pairs.
A second pass over the result is timed and must be a no-op.

Update detection (issue 39) against today's pass in the same run: a copy of the loaded
database (CREATE DATABASE ... TEMPLATE) gets a pass with update detection off, the
original the pass with it on (the default), which is timed and scored; the planted
look-alike conflicts must stay conflicts (none of them superseded by an update link),
and every update link it records is counted (the generator plants no update, so each
is a guess on template facts).

The baseline compares every pair of a smaller corpus with the same verification
(conflict_guard.compare), which is what consolidation without a candidate stage costs;
its time grows with the square of the corpus, so it is measured at --baseline entries
and the ratio is reported against the funnel on the same entries in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.common import bench_server, database_copy, fresh_database
from benchmarks.consolidation_corpus import (
    PlantedCorpus,
    Scores,
    all_pairs_baseline,
    generate,
    score,
)
from memory.consolidation.planner import Cluster, ConflictPair, Plan, plan_pass
from memory.storage import tables
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest, ConsolidationResult
from schemas.memory_entry import NewMemoryEntry, Tier

REF = "mem://bench/agent-1"
SEED = 20261123
LOAD_BATCH = 1000
ENTRIES = tables.entries
CONFLICTS = tables.conflicts


_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9]+")


def _spellings(folded: str) -> list[str]:
    # Store names are [A-Za-z0-9._:/-]; other characters (an apostrophe in a person's
    # name) become word breaks, the same for every holder of the slot.
    words = [w for w in _NOT_IN_NAMES.split(folded) if w]
    spellings = ["_".join(words), "-".join(words), ".".join(words), "_".join(words).upper()]
    if all(len(w) > 1 and w.isalpha() for w in words):
        # camelCase splits back into the same words only when none is a single letter.
        spellings[1:1] = [
            words[0] + "".join(w.capitalize() for w in words[1:]),
            "".join(w.capitalize() for w in words),
        ]
    return list(dict.fromkeys(spellings))


def _raw_keys(corpus: PlantedCorpus) -> dict[str, tuple[str, str]]:
    """Store spellings of each keyed entry's slot: the holders of one slot get different
    spellings of its namespace and key (snake, camel, kebab, dotted, upper), as clients
    that re-key a fact write them; two live rows never share one spelling (the unique
    key index)."""
    used: set[tuple[str, str]] = set()
    out: dict[str, tuple[str, str]] = {}
    for entry in sorted(corpus.entries, key=lambda e: (e.updated_at, e.id)):
        if entry.slot is None:
            continue
        namespaces, keys = _spellings(entry.slot[0]), _spellings(entry.slot[1])
        for namespace, key in ((n, k) for k in keys for n in namespaces):
            if (namespace, key) not in used:
                used.add((namespace, key))
                out[entry.id] = (namespace, key)
                break
    return out


async def load(store: PostgresMemoryStore, engine: AsyncEngine, corpus: PlantedCorpus) -> float:
    keys = _raw_keys(corpus)
    started = time.perf_counter()
    batch: list[NewMemoryEntry] = []
    for entry in corpus.entries:
        namespace, key = keys.get(entry.id, (None, None))
        batch.append(
            NewMemoryEntry(
                id=entry.id,
                content=entry.content,
                tier=Tier.SEMANTIC,
                namespace=namespace,
                key=key,
            )
        )
        if len(batch) == LOAD_BATCH:
            await store.put_many(REF, batch)
            batch = []
    if batch:
        await store.put_many(REF, batch)
    # The plant's write times (which value of a slot is newest) replace the load's.
    # Statistics first, as autovacuum would have them after a load this size.
    async with engine.connect() as connection:
        await connection.execute(text("ANALYZE memory_entries"))
        await connection.commit()
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE memory_entries AS e SET updated_at = v.t, created_at = v.t "
                "FROM unnest(CAST(:ids AS text[]), CAST(:ts AS timestamptz[])) AS v(id, t) "
                "WHERE e.memory_ref = :ref AND e.id = v.id"
            ),
            {
                "ids": [e.id for e in corpus.entries],
                "ts": [e.updated_at for e in corpus.entries],
                "ref": REF,
            },
        )
    return time.perf_counter() - started


async def marked_plan(engine: AsyncEngine, input_count: int) -> Plan:
    """What the pass did, read back from the database, as a Plan for scoring."""
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.superseded_by, ENTRIES.c.superseded_reason).where(
                    ENTRIES.c.memory_ref == REF, ENTRIES.c.superseded_by.is_not(None)
                )
            )
        ).all()
        conflicts = [
            ConflictPair(row.first_id, row.second_id, ())
            for row in await connection.execute(
                select(CONFLICTS.c.first_id, CONFLICTS.c.second_id).where(
                    CONFLICTS.c.memory_ref == REF
                )
            )
        ]
    merged: dict[str, list[str]] = {}
    superseded: dict[str, list[str]] = {}
    for row in rows:
        target = merged if row.superseded_reason == "merged" else superseded
        target.setdefault(row.superseded_by, []).append(row.id)
    clusters = [
        Cluster(s, tuple(merged.get(s, ())), tuple(superseded.get(s, ())), 1)
        for s in sorted(set(merged) | set(superseded))
    ]
    return Plan(input_count=input_count, clusters=clusters, conflicts=conflicts)


async def run_size(server: Any, size: int, paraphrases: bool = False) -> dict[str, Any]:
    corpus = generate(size, SEED)
    async with fresh_database(server, f"consolidation_{size}") as url:
        engine = create_engine(url.render_as_string(hide_password=False), pool_size=2)
        try:
            await migrate(engine)
            # A pass reads no stored vector (the paraphrase stage embeds what it plans
            # itself), so the corpus is loaded without: seconds instead of minutes.
            store = PostgresMemoryStore(engine, embedder=None)
            load_s = await load(store, engine, corpus)
            print(f"  loaded {size:,} entries in {load_s:.1f} s", flush=True)
        finally:
            await engine.dispose()
        # Today's pass (update detection off) on a copy of the loaded corpus.
        async with database_copy(server, url, f"consolidation_{size}_today") as copy:
            engine = create_engine(copy.render_as_string(hide_password=False), pool_size=2)
            try:
                store = PostgresMemoryStore(engine, embedder=None)
                _, today_s = await _timed_pass(store, "today", paraphrases, updates=False)
            finally:
                await engine.dispose()
        engine = create_engine(url.render_as_string(hide_password=False), pool_size=2)
        try:
            store = PostgresMemoryStore(engine, embedder=None)
            first, first_s = await _timed_pass(store, "first", paraphrases)
            plan = await marked_plan(engine, first.input_count)
            links = await update_links(engine)
            second, second_s = await _timed_pass(store, "second", paraphrases)
        finally:
            await engine.dispose()
    scores = score(corpus, plan)
    look_alikes = {frozenset((a, b)) for a, b, _ in corpus.conflict_pairs}
    return {
        "entries": size,
        "without_updates_pass_s": round(today_s, 2),
        "update_links": len(links),
        "look_alikes_superseded": sum(frozenset(link) in look_alikes for link in links),
        "first_pass_s": round(first_s, 2),
        "second_pass_s": round(second_s, 2),
        "first": first.to_wire(),
        "second": second.to_wire(),
        "summary": {
            "merge_precision": round(scores.merge_precision, 4),
            "merge_recall": round(scores.merge_recall, 4),
            "supersession_precision": round(scores.supersession_precision, 4),
            "supersession_recall": round(scores.supersession_recall, 4),
            "conflict_pairs": sum(scores.conflict_pairs.values()),
            "conflict_false_merges": scores.false_merges,
            "conflict_false_merge_rate": round(scores.false_merge_rate, 4),
            "conflict_detection_recall": round(scores.conflict_detection_recall, 4),
        },
        "scores": asdict(scores),
        "score_lines": _lines(scores),
    }


async def _timed_pass(
    store: PostgresMemoryStore, label: str, paraphrases: bool, *, updates: bool = True
) -> tuple[ConsolidationResult, float]:
    started = time.perf_counter()
    result = await store.consolidate(
        ConsolidateMemoryRequest(
            memory_ref=REF,
            run_key=f"bench-{label}-{time.time()}",
            paraphrases=paraphrases,
            updates=updates,
        )
    )
    return result, time.perf_counter() - started


async def update_links(engine: AsyncEngine) -> list[tuple[str, str]]:
    async with engine.connect() as connection:
        rows = await connection.execute(
            text("SELECT older_id, newer_id FROM memory_updates WHERE memory_ref = :ref"),
            {"ref": REF},
        )
        return [(row.older_id, row.newer_id) for row in rows]


def _lines(scores: Scores) -> list[str]:
    from benchmarks.consolidation_corpus import format_scores

    return format_scores(scores)


def baseline(size: int) -> dict[str, Any]:
    corpus = generate(size, SEED + 1)
    pairs, all_pairs_s = all_pairs_baseline(corpus.entries)
    started = time.perf_counter()
    funnel = plan_pass(corpus.entries)
    funnel_s = time.perf_counter() - started
    return {
        "entries": size,
        "all_pairs_compared": pairs,
        "all_pairs_s": round(all_pairs_s, 2),
        "funnel_pairs_checked": funnel.pairs_checked,
        "funnel_s": round(funnel_s, 2),
        "ratio": round(all_pairs_s / funnel_s, 1) if funnel_s else None,
    }


def _print_size(row: dict[str, Any]) -> None:
    first, second = row["first"], row["second"]
    print(
        f"{row['entries']:>9,}  pass {row['first_pass_s']:>6.2f} s  "
        f"{first['inputCount']:,} -> {first['outputCount']:,} "
        f"(merged {first.get('mergedCount', 0):,}, superseded {first.get('supersededCount', 0):,}, "
        f"conflicts {first.get('conflictCount', 0):,}, pairs checked "
        f"{first.get('pairsChecked', 0):,}, rounds {first.get('rounds', 0)})"
    )
    ratio = row["first_pass_s"] / row["without_updates_pass_s"]
    print(
        f"{'':>9}  without update detection (same corpus, same run): "
        f"{row['without_updates_pass_s']:.2f} s; with it {ratio:.2f}x; "
        f"{row['update_links']:,} update links, {row['look_alikes_superseded']} of them "
        f"superseding a planted look-alike"
    )
    print(
        f"{'':>9}  second pass {row['second_pass_s']:.2f} s: "
        f"{second['inputCount']:,} -> {second['outputCount']:,}"
        + ("  (no-op)" if second["inputCount"] == second["outputCount"] else "  NOT A NO-OP")
    )
    for line in row["score_lines"]:
        print(f"{'':>11}{line}")


async def main(
    sizes: Sequence[int], baseline_size: int, results: Path | None, paraphrases: bool = False
) -> None:
    report: dict[str, Any] = {
        "seed": SEED,
        "paraphrases": paraphrases,
        "sizes": [],
        "baseline": None,
    }
    print(f"all-pairs baseline at {baseline_size:,} entries (pure planner, no database)")
    report["baseline"] = base = baseline(baseline_size)
    print(
        f"  all pairs: {base['all_pairs_compared']:,} compared in {base['all_pairs_s']:.2f} s; "
        f"funnel: {base['funnel_pairs_checked']:,} checked in {base['funnel_s']:.2f} s "
        f"({base['ratio']}x faster)",
        flush=True,
    )
    async with bench_server("consolidation-bench") as server:
        print(f"PostgreSQL: {server.source}")
        for size in sizes:
            print(f"corpus of {size:,} entries", flush=True)
            row = await run_size(server, size, paraphrases)
            report["sizes"].append(row)
            _print_size(row)
            quadratic = base["all_pairs_s"] * (size / baseline_size) ** 2
            print(
                f"{'':>11}all pairs at this size would take about {quadratic:,.0f} s "
                f"({quadratic / row['first_pass_s']:,.0f}x this pass), extrapolated from "
                f"{baseline_size:,} entries",
                flush=True,
            )
    if results is not None:
        results.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {results}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--baseline", type=int, default=5_000, help="all-pairs corpus size")
    parser.add_argument("--quick", action="store_true", help="2,000 entries, baseline 500")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument(
        "--paraphrases", action="store_true", help="passes with the paraphrase stage on"
    )
    args = parser.parse_args()
    sizes, base = ([2_000], 500) if args.quick else (args.sizes, args.baseline)
    asyncio.run(main(sizes, base, args.json, args.paraphrases))


if __name__ == "__main__":
    cli()
