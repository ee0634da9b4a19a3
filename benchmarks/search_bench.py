"""Hybrid search under concurrent clients: ``store.search`` against the bare SQL of its
two legs, in the same run.

    python -m benchmarks.search_bench [--entries 100000] [--clients 50] [--queries 2000]
                                      [--quick] [--json PATH]

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL), migrates a fresh database and loads N short, varied synthetic sentences
(people, actions, objects, places, times; deterministic) into ONE memoryRef through
``put_many`` in batches of 1,000 with the default (static WordLlama) embedder, so the
load time includes embedding and the vector insert into the HNSW index.

Then ``--queries`` hybrid searches (limit 10; half per side) run from ``--clients`` tasks that
share one store and its engine (create_engine's default pool, as ``memoryctl serve``
uses). The baseline, with the same clients and queries, is the bare SQL of the same
legs as raw asyncpg statements through a plain asyncpg pool of the same size (pool_size
+ max_overflow): the same full-text query, the same vector ORDER BY inside a transaction
with the same SET LOCAL settings, the same Python score fusion and the same read-back of the
top 10 rows, with the query vector computed by the same embedder. The two sides run in
ABBA rounds so drift hits both. Text-only and semantic-only modes are measured too.

``EXPLAIN (ANALYZE, BUFFERS)`` of each leg says whether the HNSW index
(ix_embeddings_hnsw_*) and the term postings' ranked index (ix_terms_ranked) are used.
Results go to benchmarks/results/search.json (search-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import numpy as np
from pgvector.asyncpg import register_vector
from sqlalchemy import func, literal_column, select
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.adapter_bench import percentile, server_info
from benchmarks.common import bench_server, fresh_database
from benchmarks.corpus import PEOPLE
from benchmarks.http_bench import ApiProcess
from memory.embeddings.choice import static_embedder
from memory.embeddings.static_model import StaticWordEmbedder
from memory.indexes.vector_index import index_name
from memory.search.context import CONTEXT_SOURCES, CONTEXT_WEIGHT, SITTING
from memory.search.hits import LegHit, Ranked, best_first
from memory.search.lexical import K1, POSTINGS_PER_TERM, B
from memory.search.ranking import MAX_EF_SEARCH, MIN_DEPTH, OVER_FETCH, fuse
from memory.storage import tables
from memory.storage.engines import create_engine, migrate
from memory.storage.prepared import Prepared
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from schemas.memory_entry import NewMemoryEntry, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.search import SearchMode, SearchRequest

RESULTS_DIR = Path(__file__).with_name("results")
LOAD_BATCH = 1_000
LIMIT = 10
AGENT = "search-agent"
REF = f"mem://bench/{AGENT}"
GIN_INDEX = "ix_terms_ranked"
HNSW_PREFIX = "ix_embeddings_hnsw_"
VECTOR_LITERAL = re.compile(r"'\[[-0-9.e,]+\]'")

# ---------------------------------------------------------------------- workload

NAMES = [*PEOPLE, "Grace", "Omar", "Hannah", "Mateo", "Yuki", "Olga", "Kwame", "Lucia", "Ravi"]
ACTIONS = [
    ("booked", "book"),
    ("cancelled", "cancel"),
    ("rescheduled", "reschedule"),
    ("paid for", "pay for"),
    ("reviewed", "review"),
    ("lost", "lose"),
    ("found", "find"),
    ("ordered", "order"),
    ("returned", "return"),
    ("signed", "sign"),
    ("shared", "share"),
    ("repaired", "repair"),
    ("borrowed", "borrow"),
    ("forgot about", "forget"),
    ("asked about", "ask about"),
    ("complained about", "complain about"),
    ("renewed", "renew"),
    ("planned", "plan"),
]
OBJECTS = [
    "the dentist appointment",
    "the flight to Lisbon",
    "the car insurance",
    "the quarterly report",
    "a birthday present for Mia",
    "the gym membership",
    "the kitchen lamp",
    "the rent for March",
    "the design review",
    "the team offsite",
    "the laptop charger",
    "the wedding gift",
    "the library books",
    "the tax return",
    "the hotel room in Kyoto",
    "the concert tickets",
    "the vet visit for the dog",
    "the new running shoes",
    "the pricing proposal",
    "the onboarding checklist",
    "the broken bicycle",
    "the school trip form",
    "the cloud invoice",
    "the passport renewal",
    "the spare house keys",
    "the client contract",
    "the garden furniture",
    "the train pass",
]
PLACES = [
    "in Berlin",
    "at the office",
    "at home",
    "near the station",
    "at the café on Main Street",
    "at the airport",
    "over the phone",
    "by email",
    "on the company portal",
    "at the hospital",
    "in the shared drive",
    "at the bank",
    "downtown",
    "in the Slack channel",
]
TIMES = [
    "last Monday",
    "this morning",
    "yesterday evening",
    "next week",
    "in March",
    "before the holidays",
    "on Friday afternoon",
    "two days ago",
    "at the end of the quarter",
    "after lunch",
    "over the weekend",
    "tomorrow",
]
TEMPLATES = [
    "{person} {action} {obj} {place} {time}.",
    "{time_cap}, {person} {action} {obj} {place}.",
    "Note: {person} {action} {obj} {time}.",
    "{person} said they {action} {obj} {place}.",
    "Reminder that {person} {action} {obj} {time}; {person2} knows the details.",
]
# Paraphrased questions: the same vocabulary, other verbs, so both legs have work.
QUERY_TEMPLATES = [
    "when did {person} {verb} {obj}?",
    "who {action} {obj}?",
    "what did {person} do {time}?",
    "{obj} {place}",
    "anything about {obj}",
    "did {person} {verb} {obj} {place}?",
    "{person} {obj}",
]


def sentence(rng: random.Random) -> str:
    time_phrase = rng.choice(TIMES)
    return rng.choice(TEMPLATES).format(
        person=rng.choice(NAMES),
        person2=rng.choice(NAMES),
        action=rng.choice(ACTIONS)[0],
        obj=rng.choice(OBJECTS),
        place=rng.choice(PLACES),
        time=time_phrase,
        time_cap=time_phrase[0].upper() + time_phrase[1:],
    )


def question(rng: random.Random) -> str:
    action, verb = rng.choice(ACTIONS)
    return rng.choice(QUERY_TEMPLATES).format(
        person=rng.choice(NAMES),
        action=action,
        verb=verb,
        obj=rng.choice(OBJECTS),
        place=rng.choice(PLACES),
        time=rng.choice(TIMES),
    )


# ---------------------------------------------------------------------- bare SQL

TEXT_SQL = (
    # The product's BM25 leg (memory/search/lexical.py) as one statement: each term's
    # best $8 postings are the candidates, each scored exactly over every query term by
    # a correlated probe.
    "WITH weights AS (SELECT c.term,"
    " ln(1.0 + (t.entries - c.entries + 0.5) / (c.entries + 0.5)) AS idf,"
    " t.terms::float8 / t.entries AS mean_terms"
    " FROM memory_term_counts c JOIN memory_ref_term_totals t ON t.memory_ref = c.memory_ref"
    " WHERE c.memory_ref = $2"
    " AND c.term = ANY(tsvector_to_array(to_tsvector('english'::regconfig, $4)))),"
    " candidates AS (SELECT DISTINCT b.entry_id FROM weights w CROSS JOIN LATERAL"
    " (SELECT p.entry_id FROM memory_terms p WHERE p.tenant = $1 AND p.memory_ref = $2"
    " AND p.term = w.term ORDER BY p.frequency DESC, p.entry_terms, p.entry_id LIMIT $8) b),"
    " scored AS (SELECT c.entry_id, (SELECT sum(w.idf * p.frequency * ($6 + 1)"
    " / (p.frequency + $6 * (1 - $7 + $7 * p.entry_terms / w.mean_terms)))"
    " FROM memory_terms p JOIN weights w ON w.term = p.term"
    " WHERE p.tenant = $1 AND p.memory_ref = $2 AND p.entry_id = c.entry_id) AS score"
    " FROM candidates c)"
    " SELECT s.entry_id AS id, s.score, e.created_at FROM scored s"
    " JOIN memory_entries e ON e.memory_ref = $2 AND e.id = s.entry_id"
    " WHERE e.tenant = $1 AND (e.expires_at IS NULL OR e.expires_at > $3)"
    " AND e.invalidated_at IS NULL ORDER BY s.score DESC, e.created_at DESC, s.entry_id LIMIT $5"
)


def vector_sql(dimensions: int) -> str:
    """The product's vector leg: the nearest vectors through the HNSW index in a
    subquery, then the entries' liveness and checksum ($6: what it over-fetches, $7: the
    depth)."""
    distance = f"embedding::vector({dimensions}) <=> $1::vector({dimensions})"
    return (
        "SELECT n.entry_id, n.distance, e.created_at"
        f" FROM (SELECT entry_id, content_sha256, {distance} AS distance"
        " FROM memory_embeddings WHERE tenant = $2 AND memory_ref = $3"
        f" AND model = $4 ORDER BY {distance} LIMIT $6) AS n"
        " JOIN memory_entries e ON e.id = n.entry_id AND e.content_sha256 = n.content_sha256"
        " WHERE e.tenant = $2 AND e.memory_ref = $3"
        " AND (e.expires_at IS NULL OR e.expires_at > $5) AND e.invalidated_at IS NULL"
        " ORDER BY n.distance, e.created_at DESC, n.entry_id LIMIT $7"
    )


def vector_alone_sql(dimensions: int) -> str:
    distance = f"embedding::vector({dimensions}) <=> $1::vector({dimensions})"
    return (
        f"SELECT entry_id, {distance} AS distance FROM memory_embeddings"
        f" WHERE tenant = $2 AND memory_ref = $3 AND model = $4 ORDER BY {distance} LIMIT $5"
    )


NEIGHBOURS_SQL = (
    # The product's context (memory/search/context.py): each source's entries written
    # right before and after it in the memoryRef, said within $4 of it.
    "SELECT s.id AS source, n.id FROM unnest($3::text[]) AS g(id)"
    " JOIN memory_entries s ON s.tenant = $1 AND s.memory_ref = $2 AND s.id = g.id"
    " CROSS JOIN LATERAL ((SELECT b.id, coalesce(b.said_at, b.created_at) AS said"
    " FROM memory_entries b WHERE b.tenant = $1"
    " AND b.memory_ref = $2 AND b.written_order < s.written_order"
    " ORDER BY b.written_order DESC LIMIT 1) UNION ALL"
    " (SELECT b.id, coalesce(b.said_at, b.created_at) AS said FROM memory_entries b"
    " WHERE b.tenant = $1 AND b.memory_ref = $2 AND b.written_order > s.written_order"
    " ORDER BY b.written_order LIMIT 1)) AS n"
    " WHERE n.said"
    " BETWEEN coalesce(s.said_at, s.created_at) - $4::interval"
    " AND coalesce(s.said_at, s.created_at) + $4::interval"
)


SCORES_SQL = (
    # The product's BM25 of given entries (memory/search/lexical.py lexical_scores): the
    # neighbours no leg returned, kept when they hold a query word.
    "WITH weights AS (SELECT c.term,"
    " ln(1.0 + (t.entries - c.entries + 0.5) / (c.entries + 0.5)) AS idf,"
    " t.terms::float8 / t.entries AS mean_terms"
    " FROM memory_term_counts c JOIN memory_ref_term_totals t ON t.memory_ref = c.memory_ref"
    " WHERE c.memory_ref = $2"
    " AND c.term = ANY(tsvector_to_array(to_tsvector('english'::regconfig, $4)))),"
    " scored AS (SELECT g.entry_id, (SELECT sum(w.idf * p.frequency * ($6 + 1)"
    " / (p.frequency + $6 * (1 - $7 + $7 * p.entry_terms / w.mean_terms)))"
    " FROM memory_terms p JOIN weights w ON w.term = p.term"
    " WHERE p.tenant = $1 AND p.memory_ref = $2 AND p.entry_id = g.entry_id) AS score"
    " FROM unnest($5::text[]) AS g(entry_id))"
    " SELECT s.entry_id AS id, s.score, e.created_at FROM scored s"
    " JOIN memory_entries e ON e.memory_ref = $2 AND e.id = s.entry_id"
    " WHERE e.tenant = $1 AND (e.expires_at IS NULL OR e.expires_at > $3)"
    " AND e.invalidated_at IS NULL AND s.score > 0"
)


def with_context(
    pairs: Sequence[Any], ranked: Sequence[Ranked], unfound: Sequence[Ranked]
) -> list[str]:
    """The product's rescoring by context (memory/search/context.py), over the neighbour
    rows NEIGHBOURS_SQL read and the unfound neighbours SCORES_SQL scored."""
    found = {hit.id: hit for hit in (*ranked, *unfound)}
    lent: dict[str, float] = {}
    for row in pairs:
        if row["id"] in found:
            lent[row["id"]] = max(lent.get(row["id"], 0.0), found[row["source"]].score)
    rescored = [
        replace(hit, score=hit.score + CONTEXT_WEIGHT * lent.get(hit.id, 0.0))
        for hit in found.values()
    ]
    return [hit.id for hit in best_first(rescored)]


READ_SQL = (
    f"SELECT {', '.join(column.name for column in tables.entry_columns)} FROM memory_entries"
    " WHERE tenant = $1 AND memory_ref = $2 AND (expires_at IS NULL OR expires_at > $3)"
    " AND invalidated_at IS NULL AND id = ANY($4::text[])"
)


def fetched(depth: int) -> int:
    """The nearest vectors the product's vector leg reads (memory/search/ranking.py)."""
    return min(depth * OVER_FETCH, MAX_EF_SEARCH)


def begin(depth: int, mode: SearchMode) -> str:
    """The product's read-only snapshot with the vector leg's transaction-local
    settings, in one round trip as the product sends them (memory/search/ranking.py,
    memory/storage/prepared.py)."""
    settings = (
        "; SET LOCAL hnsw.iterative_scan = relaxed_order"
        f"; SET LOCAL hnsw.ef_search = {fetched(depth)}"
        if mode is not SearchMode.TEXT
        else ""
    )
    return "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" + settings


def asyncpg_kwargs(url: URL) -> dict[str, Any]:
    query = {key: value if isinstance(value, str) else value[0] for key, value in url.query.items()}
    port = url.port or (int(query["port"]) if "port" in query else None)
    return {
        "user": url.username,
        "password": url.password,
        "database": url.database,
        "host": query.get("host") or url.host,
        "port": port,
    }


class BareSearch:
    """The two legs, the fuse and the read-back, as raw asyncpg on a plain pool."""

    def __init__(self, pool: asyncpg.Pool, embedder: StaticWordEmbedder, tenant: str) -> None:
        self.pool = pool
        self.embedder = embedder
        self.tenant = tenant
        self.model = embedder.model
        self.vector_sql = vector_sql(self.model.dimensions)
        self.last_vector_rows = 0

    async def legs(
        self, connection: asyncpg.Connection, query: str, mode: SearchMode, depth: int
    ) -> tuple[list[LegHit], list[LegHit]]:
        now = datetime.now(UTC)
        text_ids: list[LegHit] = []
        vector_ids: list[LegHit] = []
        if mode is not SearchMode.SEMANTIC:
            rows = await connection.fetch(
                TEXT_SQL,
                self.tenant,
                REF,
                now,
                query,
                depth,
                K1,
                B,
                POSTINGS_PER_TERM,
            )
            text_ids = [LegHit(row["id"], row["score"], row["created_at"]) for row in rows]
        if mode is not SearchMode.TEXT:
            vector = (await self.embedder.embed([query]))[0]
            rows = await connection.fetch(
                self.vector_sql,
                vector,
                self.tenant,
                REF,
                self.model.id,
                now,
                fetched(depth),
                depth,
            )
            vector_ids = [
                LegHit(row["entry_id"], row["distance"], row["created_at"]) for row in rows
            ]
            self.last_vector_rows = len(vector_ids)
        return text_ids, vector_ids

    async def search(self, query: str, mode: SearchMode = SearchMode.HYBRID) -> list[str]:
        depth = max(MIN_DEPTH, LIMIT)
        async with self.pool.acquire() as connection:
            # Both legs in one snapshot, as the product reads them (SET LOCAL).
            await connection.execute(begin(depth, mode))
            try:
                text_ids, vector_ids = await self.legs(connection, query, mode, depth)
                fused = fuse(text_ids, vector_ids)
                sources = [hit.id for hit in fused[:CONTEXT_SOURCES] if hit.score > 0]
                pairs = await connection.fetch(NEIGHBOURS_SQL, self.tenant, REF, sources, SITTING)
                unfound = sorted({row["id"] for row in pairs} - {hit.id for hit in fused})
                scored: list[Ranked] = []
                if unfound and mode is not SearchMode.SEMANTIC and text_ids:
                    best = text_ids[0].value
                    rows = await connection.fetch(
                        SCORES_SQL, self.tenant, REF, datetime.now(UTC), query, unfound, K1, B
                    )
                    scored = [
                        Ranked(row["id"], row["score"] / best, None, None, row["created_at"])
                        for row in rows
                    ]
                top = with_context(pairs, fused, scored)[:LIMIT]
                if not top:
                    return []
                rows = await connection.fetch(READ_SQL, self.tenant, REF, datetime.now(UTC), top)
            finally:
                await connection.execute("ROLLBACK")
        found = {row["id"] for row in rows}
        return [id_ for id_ in top if id_ in found]


# ---------------------------------------------------------------------- measuring

Op = Callable[[str], Awaitable[object]]


async def run_clients(op: Op, queries: Sequence[str], clients: int) -> tuple[list[float], float]:
    """``queries`` spread over ``clients`` tasks; (latencies, wall seconds)."""
    latencies: list[float] = []
    cursor = iter(range(len(queries)))

    async def client() -> None:
        for index in cursor:
            began = time.perf_counter()
            await op(queries[index])
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, time.perf_counter() - began


def summary(latencies: Sequence[float], wall: float) -> dict[str, float]:
    return {
        "queries": len(latencies),
        "p50_ms": round(percentile(latencies, 50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 99) * 1000, 3),
        "qps": round(len(latencies) / wall, 1),
    }


async def abba(a: Op, b: Op, queries: Sequence[str], clients: int) -> tuple[dict[str, Any], ...]:
    """A, B, B, A over four quarters of the queries (same queries for both sides)."""
    quarters = [list(queries[i::4]) for i in range(4)]
    results: dict[str, tuple[list[float], float]] = {"a": ([], 0.0), "b": ([], 0.0)}
    for side, part in zip("abba", quarters, strict=True):
        lat, wall = await run_clients(a if side == "a" else b, part, clients)
        old_lat, old_wall = results[side]
        results[side] = (old_lat + lat, old_wall + wall)
    return summary(*results["a"]), summary(*results["b"])


async def load(store: PostgresMemoryStore, entries: int, rng: random.Random) -> dict[str, Any]:
    batch_times: list[float] = []
    chars = 0
    for start in range(0, entries, LOAD_BATCH):
        batch = [
            NewMemoryEntry(content=sentence(rng), tags=("note",), tier=Tier.SEMANTIC)
            for _ in range(min(LOAD_BATCH, entries - start))
        ]
        chars += sum(len(entry.content) for entry in batch)
        began = time.perf_counter()
        await store.put_many(REF, batch)
        batch_times.append(time.perf_counter() - began)
        if len(batch_times) % 20 == 0:
            print(f"  {start + len(batch):,} loaded, {sum(batch_times):.0f} s", flush=True)
    seconds = sum(batch_times)
    return {
        "entries": entries,
        "batch_size": LOAD_BATCH,
        "seconds": round(seconds, 2),
        "entries_per_s": round(entries / seconds, 1),
        "batch_p50_ms": round(percentile(batch_times, 50) * 1000, 1),
        "batch_p99_ms": round(percentile(batch_times, 99) * 1000, 1),
        "mean_content_chars": round(chars / entries, 1),
    }


async def explain(
    pool: asyncpg.Pool, bare: BareSearch, query: str, set_locals: bool
) -> dict[str, Any]:
    depth = max(MIN_DEPTH, LIMIT)
    now = datetime.now(UTC)
    vector = (await bare.embedder.embed([query]))[0]
    async with pool.acquire() as connection:
        await connection.execute(begin(depth, SearchMode.HYBRID if set_locals else SearchMode.TEXT))
        try:
            vector_plan = [
                row[0]
                for row in await connection.fetch(
                    "EXPLAIN (ANALYZE, BUFFERS) " + bare.vector_sql,
                    vector,
                    bare.tenant,
                    REF,
                    bare.model.id,
                    now,
                    fetched(depth),
                    depth,
                )
            ]
            # Diagnostic: the same ORDER BY on memory_embeddings alone (no join to
            # entries): does the planner take the HNSW index when the join is gone?
            alone_plan = [
                row[0]
                for row in await connection.fetch(
                    "EXPLAIN (ANALYZE, BUFFERS) " + vector_alone_sql(bare.model.dimensions),
                    vector,
                    bare.tenant,
                    REF,
                    bare.model.id,
                    depth,
                )
            ]
        finally:
            await connection.execute("ROLLBACK")
        text_plan = [
            row[0]
            for row in await connection.fetch(
                "EXPLAIN (ANALYZE, BUFFERS) " + TEXT_SQL,
                bare.tenant,
                REF,
                now,
                query,
                depth,
                K1,
                B,
                POSTINGS_PER_TERM,
            )
        ]
    hnsw = index_name(bare.model)
    return {
        "query": query,
        "hnsw_index": hnsw,
        "hnsw_used": any(hnsw in line for line in vector_plan),
        "hnsw_used_without_join": any(hnsw in line for line in alone_plan),
        "vector_alone_plan": alone_plan,
        "gin_used": any(GIN_INDEX in line for line in text_plan),
        "vector_plan": vector_plan,
        "text_plan": text_plan,
    }


async def product_set_local_check(store: PostgresMemoryStore) -> dict[str, str]:
    """Whether SET LOCAL takes effect in the snapshot the product's legs read in
    (DriverConnection.snapshot: BEGIN and the settings in one round trip), and is gone
    after it."""
    async with store.db.driver() as connection:
        async with connection.snapshot("SET LOCAL hnsw.ef_search = 123"):
            inside = (await connection.fetch(_EF_SEARCH, {}))[0][0]
        after = (await connection.fetch(_EF_SEARCH, {}))[0][0]
    return {"inside_set_local_123": str(inside), "after": str(after)}


_EF_SEARCH = Prepared(select(func.current_setting(literal_column("'hnsw.ef_search'"))))


# ---------------------------------------------------------------------- the run


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    ref = parse_memory_ref(REF)
    started = time.perf_counter()
    async with (
        bench_server("search-bench") as server,
        fresh_database(server, "search_bench") as url,
    ):
        info = await server_info(url)
        print(
            f"search bench: {server.source}, PostgreSQL {info['server_version']} "
            f"(shared_buffers={info['shared_buffers']}, fsync={info['fsync']}, "
            f"synchronous_commit={info['synchronous_commit']}); "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs "
            "(client, embedder and PostgreSQL share them; figures may be noisy)"
        )
        engine = create_engine(url.render_as_string(hide_password=False))
        pool_size = engine.pool.size() + engine.pool._max_overflow  # type: ignore[attr-defined]
        embedder = static_embedder()
        embedder.load()
        await migrate(engine)  # before the pool: its codec needs the vector type
        pool = await asyncpg.create_pool(
            **asyncpg_kwargs(url), min_size=1, max_size=pool_size, init=register_vector
        )
        try:
            store = PostgresMemoryStore(engine, embedder=embedder)
            print(
                f"loading {args.entries:,} entries into {REF} via put_many({LOAD_BATCH:,}) "
                f"with inline embedding ({embedder.model.id})..."
            )
            load_stats = await load(store, args.entries, rng)
            print(
                f"load: {load_stats['entries']:,} entries in {load_stats['seconds']:.1f} s "
                f"-> {load_stats['entries_per_s']:,.0f} entries/s (batch p50 "
                f"{load_stats['batch_p50_ms']:.0f} ms, p99 {load_stats['batch_p99_ms']:.0f} ms;"
                f" mean content {load_stats['mean_content_chars']:.0f} chars)"
            )
            async with pool.acquire() as connection:
                # What autovacuum reaches shortly after a bulk load.
                for table in ("memory_entries", "memory_embeddings", "memory_terms"):
                    await connection.execute(f"VACUUM (ANALYZE) {table}")
            document = await measure(args, store, pool, embedder, ref.tenant, rng)
            document["load"] = load_stats
            if args.http:
                document["http_one_client"] = await http_one_client(
                    url, engine, store, BareSearch(pool, embedder, ref.tenant), args.http, rng
                )
        finally:
            await pool.close()
            await engine.dispose()
    document.update(
        {
            "benchmark": "search_bench",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "quick": args.quick,
            "seed": args.seed,
            "server": {"source": server.source, **info},
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "pool_size": pool_size,
            "total_seconds": round(time.perf_counter() - started, 1),
        }
    )
    print(f"\ntotal {document['total_seconds']:.1f} s")
    return document


async def http_one_client(
    url: URL,
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    bare: BareSearch,
    count: int,
    rng: random.Random,
) -> dict[str, Any]:
    """One client, hybrid, limit 10, each query three ways in turn: the agent's call
    (``POST /api/v1/memory/search`` to the API in its own process, over a socket),
    ``store.search`` in process, and the bare SQL of the same work."""
    queries = [question(rng) for _ in range(count)]
    key = (await ApiKeyStore(engine).create("bench", name="search-bench")).key
    timings: dict[str, list[float]] = {"http": [], "store": [], "bare": []}
    with tempfile.TemporaryDirectory(prefix="search-api-") as state:
        api = ApiProcess(url.render_as_string(hide_password=False), Path(state))
        try:
            await api.ready()
            async with httpx.AsyncClient(base_url=api.url) as client:

                async def over_http(query: str) -> object:
                    response = await client.post(
                        "/api/v1/memory/search",
                        headers={"X-API-Key": key},
                        json={"query": query, "agent_id": AGENT, "limit": LIMIT},
                    )
                    response.raise_for_status()
                    return response

                ways: dict[str, Op] = {
                    "http": over_http,
                    "store": lambda q: store.search(REF, SearchRequest(query=q, limit=LIMIT)),
                    "bare": bare.search,
                }
                for query in queries[:20]:  # warm: prepared statements, the API's pool
                    for way in ways.values():
                        await way(query)
                for query in queries:
                    for name, way in ways.items():
                        began = time.perf_counter()
                        await way(query)
                        timings[name].append((time.perf_counter() - began) * 1000)
        finally:
            api.stop()
    figures = {
        f"{name}_{p}_ms": round(percentile(values, int(p[1:])), 2)
        for name, values in timings.items()
        for p in ("p50", "p95", "p99")
    }
    figures["queries"] = count
    print(
        f"\n== one client over HTTP, hybrid, limit 10, {count} queries ==\n"
        f"HTTP p50 {figures['http_p50_ms']} ms, p95 {figures['http_p95_ms']} ms; "
        f"store.search in process p50 {figures['store_p50_ms']}, p95 "
        f"{figures['store_p95_ms']}; bare SQL p50 {figures['bare_p50_ms']}, p95 "
        f"{figures['bare_p95_ms']} (HTTP/bare at p50 "
        f"{figures['http_p50_ms'] / figures['bare_p50_ms']:.2f}x)"
    )
    return figures


async def measure(
    args: argparse.Namespace,
    store: PostgresMemoryStore,
    pool: asyncpg.Pool,
    embedder: StaticWordEmbedder,
    tenant: str,
    rng: random.Random,
) -> dict[str, Any]:
    bare = BareSearch(pool, embedder, tenant)
    queries = [question(rng) for _ in range(args.queries)]
    warmup = [question(rng) for _ in range(max(20, args.clients * 2))]

    # --- index use
    plans = await explain(pool, bare, queries[0], set_locals=True)
    print("\n== EXPLAIN (ANALYZE, BUFFERS), bare legs, query:", repr(plans["query"]))
    for leg, key in (
        ("vector leg", "vector_plan"),
        ("text leg", "text_plan"),
        ("diagnostic: vector ORDER BY on memory_embeddings alone (no join)", "vector_alone_plan"),
    ):
        print(f"-- {leg}:")
        for line in plans[key][:16]:
            print("   " + VECTOR_LITERAL.sub("'[...]'", line))
        print("   " + plans[key][-1])  # Execution Time
    print(
        f"HNSW index {plans['hnsw_index']} used: {'YES' if plans['hnsw_used'] else 'NO'}; "
        f"GIN index {GIN_INDEX} used: {'YES' if plans['gin_used'] else 'NO'}"
    )
    if not plans["hnsw_used"]:
        print(
            "!!! PRODUCT DEFECT?: the vector leg does NOT use the HNSW index "
            f"({plans['hnsw_index']}); it scans and sorts every vector of the memoryRef "
            f"(without the join to memory_entries: "
            f"{'uses it' if plans['hnsw_used_without_join'] else 'does not use it either'}) !!!"
        )

    # --- does the product's SET LOCAL take effect?
    setting = await product_set_local_check(store)
    honoured = setting["inside_set_local_123"] == "123" and setting["after"] != "123"
    print(
        "\nproduct read snapshot: 'SET LOCAL hnsw.ef_search = 123' -> "
        f"{setting['inside_set_local_123']} inside it, {setting['after']} after it"
    )
    if not honoured:
        print(
            "!!! PRODUCT DEFECT: the search's read transaction drops SET LOCAL: the HNSW "
            "scan runs with ef_search=40 and no iterative scan !!!"
        )

    # --- warm both sides (prepared statements, pools)
    async def product_hybrid(query: str) -> object:
        return await store.search(REF, SearchRequest(query=query, limit=LIMIT))

    async def bare_hybrid(query: str) -> object:
        return await bare.search(query)

    await run_clients(product_hybrid, warmup, args.clients)
    await run_clients(bare_hybrid, warmup, args.clients)

    # --- candidates and agreement (sequential, a sample)
    sample = queries[: min(50, len(queries))]
    product_vec_rows: list[int] = []
    bare_vec_rows: list[int] = []
    overlap: list[float] = []
    for query in sample:
        # The vector leg alone, MIN_DEPTH deep (semantic mode): its candidates, to compare
        # with the bare leg's rows; then the hybrid ranking a search of LIMIT returns.
        filters = SearchRequest(query=query).filters()
        vector_leg, _, _ = await store.searches.ranking(
            parse_memory_ref(REF), query, filters, MIN_DEPTH, SearchMode.SEMANTIC
        )
        product_vec_rows.append(len(vector_leg))
        ranked, _, _ = await store.searches.ranking(parse_memory_ref(REF), query, filters, LIMIT)
        product_ids = [hit.id for hit in ranked]
        bare_ids = await bare.search(query)
        bare_vec_rows.append(bare.last_vector_rows)
        overlap.append(len(set(product_ids) & set(bare_ids)) / max(1, len(bare_ids)))
    candidates = {
        "depth_asked": max(MIN_DEPTH, LIMIT),
        "product_vector_rows_mean": round(float(np.mean(product_vec_rows)), 1),
        "bare_vector_rows_mean": round(float(np.mean(bare_vec_rows)), 1),
        "top10_overlap_mean": round(float(np.mean(overlap)), 3),
    }
    print(
        f"vector-leg candidates per query (depth {candidates['depth_asked']}): product "
        f"{candidates['product_vector_rows_mean']}, bare (SET LOCAL honoured) "
        f"{candidates['bare_vector_rows_mean']}; top-{LIMIT} overlap product/bare "
        f"{candidates['top10_overlap_mean']:.0%}"
    )

    # --- hybrid under load, ABBA
    print(
        f"\n== {len(queries):,} hybrid searches (limit {LIMIT}; half per side, ABBA) from "
        f"{args.clients} clients, "
        f"{store.engine.pool.size()}+{store.engine.pool._max_overflow} pooled connections "  # type: ignore[attr-defined]
        "(create_engine default) vs an asyncpg pool of the same size =="
    )
    product, baseline = await abba(product_hybrid, bare_hybrid, queries, args.clients)
    modes: dict[str, dict[str, Any]] = {"hybrid": {"product": product, "bare": baseline}}

    for mode in (SearchMode.TEXT, SearchMode.SEMANTIC):
        count = max(args.clients, len(queries) // 2)

        async def product_mode(query: str, mode: SearchMode = mode) -> object:
            return await store.search(REF, SearchRequest(query=query, limit=LIMIT, mode=mode))

        async def bare_mode(query: str, mode: SearchMode = mode) -> object:
            return await bare.search(query, mode)

        p, b = await abba(product_mode, bare_mode, queries[:count], args.clients)
        modes[mode.value] = {"product": p, "bare": b}

    header = f"{'mode':<10}{'side':<9}{'queries':>8}{'p50 ms':>10}{'p99 ms':>10}{'q/s':>9}"
    print(header)
    print("-" * len(header))
    for mode_name, sides in modes.items():
        for side in ("product", "bare"):
            s = sides[side]
            print(
                f"{mode_name:<10}{side:<9}{s['queries']:>8}{s['p50_ms']:>10.2f}"
                f"{s['p99_ms']:>10.2f}{s['qps']:>9.1f}"
            )
        ratio = {
            "p50": round(sides["product"]["p50_ms"] / sides["bare"]["p50_ms"], 2),
            "p99": round(sides["product"]["p99_ms"] / sides["bare"]["p99_ms"], 2),
            "qps_bare_over_product": round(sides["bare"]["qps"] / sides["product"]["qps"], 2),
        }
        sides["ratio_product_over_bare"] = ratio
        print(
            f"ratio {mode_name}: product/bare p50 = {ratio['p50']:.2f}x, p99 = "
            f"{ratio['p99']:.2f}x; bare q/s / product q/s = {ratio['qps_bare_over_product']:.2f}x"
        )
    return {
        "entries": args.entries,
        "clients": args.clients,
        "limit": LIMIT,
        "explain": plans,
        "product_set_local": {**setting, "honoured": honoured},
        "candidates": candidates,
        "modes": modes,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=None, help="default 100000 (quick 2000)")
    parser.add_argument("--clients", type=int, default=None, help="default 50 (quick 8)")
    parser.add_argument("--queries", type=int, default=None, help="default 2000 (quick 200)")
    parser.add_argument("--quick", action="store_true", help="a small run (smoke)")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--http",
        type=int,
        default=0,
        metavar="N",
        help="also N queries from one client over HTTP to the API in its own process",
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    args.entries = args.entries or (2_000 if args.quick else 100_000)
    args.clients = args.clients or (8 if args.quick else 50)
    args.queries = args.queries or (200 if args.quick else 2_000)
    if args.entries < 1 or args.clients < 1 or args.queries < 4:
        parser.error("--entries and --clients must be >= 1, --queries >= 4")
    json_path = args.json or RESULTS_DIR / ("search-quick.json" if args.quick else "search.json")
    document = asyncio.run(run(args))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {json_path}")
    sys.stdout.flush()
    return document


if __name__ == "__main__":
    main()
