"""Run the Temporal worker: every workflow and activity on one task queue.

    python worker.py

Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_MEMORY_TASK_QUEUE, DATABASE_URL,
AGENT_MEMORY_SECRETS_FILE and AGENT_MEMORY_PAYLOAD_KEYS_FILE (runtime/settings.py).
Without DATABASE_URL it starts the embedded PostgreSQL. SIGINT/SIGTERM stop polling, let
running activities finish (up to the graceful timeout) and close the database pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from datetime import timedelta

from pydantic import ValidationError
from starlette.applications import Starlette
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.worker import Worker

from activities.commitment_activities import CommitmentActivities
from activities.embedding_activities import EmbeddingActivities
from activities.fixture_run_activities import FixtureRunActivities
from activities.fleet_activities import FleetActivities
from activities.memory_activities import MemoryActivities
from activities.proposal_activities import ProposalActivities
from activities.workflow_id_activities import WorkflowIdActivities
from memory.commitments.predicates import PredicateRegistry
from memory.indexes.vector_index import prepare_vectors
from memory.redaction.vault import SecretVault, vault_from_settings
from memory.storage.engines import create_engine, database_url_from_env, migrate, wait_for_database
from memory.store import PostgresMemoryStore
from runtime.change_listener import ChangeListener
from runtime.client import connect_when_ready
from runtime.converter import payload_codec_for
from runtime.health import WorkerReadiness, health_routes
from runtime.http_serving import serving
from runtime.intent_link_keys import intent_links_for
from runtime.log_format import configure_logging
from runtime.metrics import MetricsExporter
from runtime.probe import HostProbe
from runtime.settings import Settings
from runtime.tracing import start_tracing, stop_tracing
from runtime.workflow_ids import workflow_ids_for
from runtime.workflow_input import WorkflowInputInterceptor
from workflows.registry import ALL_WORKFLOWS

log = logging.getLogger("agent_memory.worker")


@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[PostgresMemoryStore]:
    engine = create_engine(settings.database_url or database_url_from_env())
    try:
        await wait_for_database(engine)
        await migrate(engine)
        store = PostgresMemoryStore(engine, intent_links=intent_links_for(settings))
        await prepare_vectors(engine, store.vectors.model)
        yield store
    finally:
        await engine.dispose()


GRACEFUL_SHUTDOWN = timedelta(seconds=20)


def build_worker(
    client: Client,
    settings: Settings,
    store: PostgresMemoryStore,
    vault: SecretVault | None = None,
    predicates: PredicateRegistry | None = None,
    graceful_shutdown: timedelta = GRACEFUL_SHUTDOWN,
) -> Worker:
    """The worker over ``store``. A host adds its own commitment predicates by passing
    a registry built on memory.commitments.predicates.default_predicates()."""
    vault = vault or vault_from_settings(settings.secrets_file)
    _check_encryption(client, settings)
    if predicates is not None:
        store.commitments.predicates = predicates
    ids = workflow_ids_for(settings)
    commitments = CommitmentActivities(store.commitments, client, settings.task_queue, ids)
    memory = MemoryActivities(store, vault)
    proposals = ProposalActivities(
        store.proposals,
        client,
        task_queue=settings.task_queue,
        activation=settings.proposal_activation,
        vault=vault,
        ids=ids,
        approval_timeout_s=settings.proposal_approval_timeout_s,
    )
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=ALL_WORKFLOWS,
        activities=[
            *memory.all(),
            *commitments.all(),
            *FleetActivities(store.fleet_selection, memory, commitments, proposals).all(),
            *WorkflowIdActivities(ids).all(),
            *FixtureRunActivities(store).all(),
            *EmbeddingActivities(store).all(),
            *proposals.all(),
        ],
        # How long running activities may finish after a stop; then they are cancelled
        # and Temporal retries them on the next worker.
        graceful_shutdown_timeout=graceful_shutdown,
        # Eager dispatch hands an activity a workflow schedules to the worker that ran
        # the workflow task. A fleet dream's CPU-bound batches then all land on the one
        # worker caching the fleet workflow, and a second worker idles (measured: one
        # worker at a full core, the other at none). Through matching they spread over
        # every worker polling the queue.
        disable_eager_activity_execution=True,
        # A start with the wrong arguments fails the run, never the task (forever).
        interceptors=[WorkflowInputInterceptor()],
    )


def _check_encryption(client: Client, settings: Settings) -> None:
    """A worker whose settings name a payload keys file but whose client does not encrypt
    (or the reverse) would write memoryRefs in clear, or ids that do not match the API's:
    refuse to start. The client must come from runtime.client.connect(settings)."""
    encrypting = client.data_converter.payload_codec is not None
    if encrypting != (payload_codec_for(settings) is not None):
        raise ValueError(
            "AGENT_MEMORY_PAYLOAD_KEYS_FILE and the client's payload codec disagree; "
            "connect with runtime.client.connect(settings)"
        )


@contextlib.asynccontextmanager
async def serving_worker(
    client: Client,
    settings: Settings,
    store: PostgresMemoryStore,
    vault: SecretVault | None = None,
    predicates: PredicateRegistry | None = None,
    graceful_shutdown: timedelta = GRACEFUL_SHUTDOWN,
) -> AsyncIterator[Worker]:
    """The worker running, with the change listener that wakes its predicate watches
    after committed writes (runtime/change_listener.py): a worker without it would leave
    every watch asleep. ``python worker.py`` and the quick start's stack both run this."""
    # What the SDK's worker validation asks the server, asked first: the worker starts
    # polling in a task of its own and reports a refusal only when its block exits, so
    # without this a worker would say it polls and then die (chaos seed 100950434).
    await client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=client.namespace)
    )
    worker = build_worker(client, settings, store, vault, predicates, graceful_shutdown)
    listener = ChangeListener.for_store(
        store.engine, client, store.commitments.predicates, ids=workflow_ids_for(settings)
    )
    async with listener, worker:
        yield worker


# How long a starting worker retries its whole start (the Temporal connection, the
# database, its migration, the change listener, the server's worker validation) through
# an outage of PostgreSQL or the Temporal server, or a namespace not created yet. The
# first connections already waited; a restart of either between those steps made the
# worker exit instead. Once polling, an error ends the process
# for its supervisor; a configuration error (ValueError) ends it at once.
STARTUP_PATIENCE_SECONDS = 300.0


async def run_worker(
    settings: Settings, stop: asyncio.Event, *, patience: float = STARTUP_PATIENCE_SECONDS
) -> None:
    """The worker, and with AGENT_MEMORY_WORKER_HTTP_ADDRESS its /healthz, /readyz and
    /metrics from the first moment (ready once it polls; runtime/health.py)."""
    ready = WorkerReadiness()
    metrics = MetricsExporter.start(process="worker") if settings.worker_http_address else None
    async with health_endpoint(settings, ready, metrics):
        await _run_worker(settings, stop, patience, ready, metrics)


@contextlib.asynccontextmanager
async def health_endpoint(
    settings: Settings, ready: WorkerReadiness, metrics: MetricsExporter | None
) -> AsyncIterator[None]:
    address = settings.worker_http_host_port
    if address is None:
        yield
        return
    app = Starlette(routes=health_routes(ready, metrics))
    async with serving(app, *address, setting="AGENT_MEMORY_WORKER_HTTP_ADDRESS"):
        yield


async def _run_worker(
    settings: Settings,
    stop: asyncio.Event,
    patience: float,
    ready: WorkerReadiness,
    metrics: MetricsExporter | None,
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    delay = 0.25
    runtime = metrics.runtime if metrics else None
    while not stop.is_set():
        polling = False
        try:
            client = await connect_when_ready(
                settings, seconds=max(deadline - loop.time(), 1), runtime=runtime
            )
            async with open_store(settings) as store, serving_worker(client, settings, store):
                polling = True
                ready.probe = _own_probe(store, client, settings)
                ready.polling = True
                # Logged once the worker has started (validated against the server and
                # polling), so a supervisor or test that waits for this line and then
                # stops the worker never stops one that is still starting.
                log.info(
                    "worker polling task queue %r on %s (namespace %s)",
                    settings.task_queue,
                    settings.temporal_address,
                    settings.temporal_namespace,
                )
                await stop.wait()
        except ValueError:
            raise
        except Exception as error:
            ready.polling = False
            # The SDK's own validation can still refuse in the moment after ours.
            refused = str(error).startswith("Worker validation failed")
            if (polling and not refused) or loop.time() + delay > deadline:
                raise
            # The class name only: a driver's message can quote the URL's user and host.
            log.warning("worker start failed (%s); retrying in %.1f s", type(error).__name__, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 5.0)
    ready.polling = False
    log.info("worker stopped")


def _own_probe(store: PostgresMemoryStore, client: Client, settings: Settings) -> HostProbe:
    async def temporal() -> Client:
        return client

    return HostProbe(
        store, temporal, namespace=settings.temporal_namespace, task_queue=settings.task_queue
    )


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = Settings()
        configure_logging(settings.log_format)
    except ValidationError as error:
        # One line per setting, naming the variable and what it must be.
        for problem in error.errors():
            name = ".".join(str(part) for part in problem["loc"])
            log.error("%s: %s", name, problem["msg"].removeprefix("Value error, "))
        raise SystemExit(2) from None
    stop = asyncio.Event()

    async def runner() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_worker(settings, stop)

    start_tracing("agent-memory-worker")
    try:
        asyncio.run(runner())
    finally:
        stop_tracing()


if __name__ == "__main__":
    main()
