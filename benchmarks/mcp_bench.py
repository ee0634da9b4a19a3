"""Recall through MCP against the same search over the REST route, in one run.

    python -m benchmarks.mcp_bench [--entries 600] [--queries 200] [--clients 1 20]

The API runs as its own process (benchmarks/http_server.py, the app and uvicorn settings
of ``memoryctl serve``) over an embedded PostgreSQL holding one memoryRef of short
everyday notes. Each query is sent both ways, by the same number of concurrent clients:

- **MCP**: the official MCP client over streamable HTTP to ``/mcp``, tool ``recall`` with
  a 2,000-token budget (the tool searches the 100 best and keeps what fits);
- **REST**: ``POST /api/v1/memory/search`` with the same query and ``limit`` 100, the
  same search without the budget cut, over one keep-alive httpx connection per client.

Each client is a connection of its own, set up before the clock starts; every query runs
once untimed first (warm caches and plans for both sides); REST is timed before and after
MCP. Latency is per call, p50 and p95 over all clients' calls, and the ratio MCP / REST is
in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from benchmarks.common import bench_server, fresh_database
from benchmarks.http_bench import ApiProcess
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from schemas.memory_entry import NewMemoryEntry, Tier

TENANT, AGENT = "bench", "agent-1"
PEOPLE = ["Dana", "Priya", "Marco", "Sam", "Lena", "Omar", "Ines", "Kofi"]
THINGS = ["standup", "budget review", "lease", "dentist", "release", "offsite", "gym", "report"]
WHEN = ["Monday at 9:30", "Friday at noon", "March 3", "next Tuesday", "every weekday at 10"]


def note(rng: random.Random, n: int) -> str:
    person, thing, when = rng.choice(PEOPLE), rng.choice(THINGS), rng.choice(WHEN)
    return f"{person} said the {thing} is {when}; note {n} about {rng.choice(THINGS)}."


def question(rng: random.Random) -> str:
    return f"when is {rng.choice(PEOPLE)}'s {rng.choice(THINGS)}"


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def timed(call: Callable[[str], Awaitable[None]], queries: Sequence[str]) -> list[float]:
    """Each query's call, one after another; milliseconds each."""
    out = []
    for query in queries:
        started = time.perf_counter()
        await call(query)
        out.append((time.perf_counter() - started) * 1000)
    return out


async def run_mcp(url: str, key: str, queries: Sequence[str], clients: int) -> list[float]:
    headers = {"Authorization": f"Bearer {key}", "X-Agent-ID": AGENT}

    async def one(share: Sequence[str]) -> list[float]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            await client.call_tool("recall", {"query": "warm-up", "token_budget": 2000})

            async def recall(query: str) -> None:
                result = await client.call_tool("recall", {"query": query, "token_budget": 2000})
                assert not result.is_error

            return await timed(recall, share)

    shares = [queries[i::clients] for i in range(clients)]
    return [ms for part in await asyncio.gather(*(one(s) for s in shares)) for ms in part]


async def run_rest(url: str, key: str, queries: Sequence[str], clients: int) -> list[float]:
    async def one(share: Sequence[str]) -> list[float]:
        async with httpx2.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
            body = {"query": "warm-up", "agent_id": AGENT, "limit": 100}
            (await http.post("/api/v1/memory/search", json=body)).raise_for_status()

            async def search(query: str) -> None:
                answer = await http.post("/api/v1/memory/search", json={**body, "query": query})
                answer.raise_for_status()

            return await timed(search, share)

    shares = [queries[i::clients] for i in range(clients)]
    return [ms for part in await asyncio.gather(*(one(s) for s in shares)) for ms in part]


def report(clients: int, mcp: Sequence[float], rest: Sequence[float]) -> None:
    p50, rest_p50 = statistics.median(mcp), statistics.median(rest)
    print(
        f"  {clients:>2} client(s): MCP recall p50 {p50:.2f} ms, "
        f"p95 {percentile(mcp, 0.95):.2f} ms | REST search p50 {rest_p50:.2f} ms, "
        f"p95 {percentile(rest, 0.95):.2f} ms | MCP/REST at p50 {p50 / rest_p50:.2f}x",
        flush=True,
    )


async def main(entries: int, queries: int, client_counts: Sequence[int]) -> None:
    rng = random.Random(40)
    async with bench_server("mcp-bench") as server, fresh_database(server, "mcp") as url:
        database_url = url.render_as_string(hide_password=False)
        engine = create_engine(database_url)
        try:
            await migrate(engine)
            store = PostgresMemoryStore(engine)
            texts = [note(rng, n) for n in range(entries)]
            await store.put_many(
                f"mem://{TENANT}/{AGENT}",
                [NewMemoryEntry(content=t, tier=Tier.SEMANTIC) for t in texts],
            )
            key = (await ApiKeyStore(engine).create(TENANT, name="bench")).key
        finally:
            await engine.dispose()
        asked = [question(rng) for _ in range(queries)]
        with tempfile.TemporaryDirectory() as state:
            api = ApiProcess(database_url, Path(state))
            try:
                await api.ready()
                print(f"{entries:,} entries, {queries:,} queries per side; API {api.url}")
                # Untimed: every query once, so both sides meet warm caches and plans.
                await run_rest(api.url, key, asked, 1)
                for clients in client_counts:
                    rest = await run_rest(api.url, key, asked, clients)
                    mcp = await run_mcp(api.url, key, asked, clients)
                    rest += await run_rest(api.url, key, asked, clients)  # before and after
                    report(clients, mcp, rest)
            finally:
                api.stop()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=600)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 20])
    args = parser.parse_args()
    os.environ.setdefault("AGENT_MEMORY_LOG_LEVEL", "WARNING")
    asyncio.run(main(args.entries, args.queries, args.clients))


if __name__ == "__main__":
    cli()
