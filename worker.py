"""Run the Temporal worker: every workflow and activity on one task queue.

    python worker.py

Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_MEMORY_TASK_QUEUE, DATABASE_URL and
AGENT_MEMORY_SECRETS_FILE (runtime/settings.py). Without DATABASE_URL it starts the
embedded PostgreSQL. SIGINT/SIGTERM stop polling, let running activities finish (up to
the graceful timeout) and close the database pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from activities.commitment_activities import CommitmentActivities
from activities.memory_activities import MemoryActivities
from memory.commitments.predicates import PredicateRegistry
from memory.database import create_engine, database_url_from_env, migrate
from memory.store import PostgresMemoryStore
from memory.vault import SecretVault, vault_from_settings
from runtime.client import connect
from runtime.settings import Settings
from workflows.registry import ALL_WORKFLOWS

log = logging.getLogger("agent_memory.worker")


@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[PostgresMemoryStore]:
    engine = create_engine(settings.database_url or database_url_from_env())
    try:
        await migrate(engine)
        yield PostgresMemoryStore(engine)
    finally:
        await engine.dispose()


def build_worker(
    client: Client,
    settings: Settings,
    store: PostgresMemoryStore,
    vault: SecretVault | None = None,
    predicates: PredicateRegistry | None = None,
) -> Worker:
    """The worker over ``store``. A host adds its own commitment predicates by passing
    a registry built on memory.commitments.predicates.default_predicates()."""
    vault = vault or vault_from_settings(settings.secrets_file)
    if predicates is not None:
        store.commitments.predicates = predicates
    commitments = CommitmentActivities(store.commitments, client, settings.task_queue)
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=ALL_WORKFLOWS,
        activities=[*MemoryActivities(store, vault).all(), *commitments.all()],
        graceful_shutdown_timeout=timedelta(seconds=20),
    )


async def run_worker(settings: Settings, stop: asyncio.Event) -> None:
    client = await connect(settings)
    async with open_store(settings) as store:
        worker = build_worker(client, settings, store)
        log.info(
            "worker polling task queue %r on %s (namespace %s)",
            settings.task_queue,
            settings.temporal_address,
            settings.temporal_namespace,
        )
        async with worker:
            await stop.wait()
        log.info("worker stopped")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = Settings()
    stop = asyncio.Event()

    async def runner() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_worker(settings, stop)

    asyncio.run(runner())


if __name__ == "__main__":
    main()
