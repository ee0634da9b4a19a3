"""What is really available right now: the database, Temporal, and a worker polling the
task queue. Discovery and the agent inventory are computed from this, never from
literals, so a host that lost its database or its worker says so.

Probes are cached for ``PROBE_TTL_S`` and run single-flight: under load the discovery
document costs a dictionary read, and a dead dependency is noticed within seconds.
A worker counts as polling while Temporal saw one of its polls within
``WORKER_STALE_AFTER_S``: an idle worker's long poll lasts up to about 70 s, so a shorter
window would report a healthy idle worker as gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

PROBE_TTL_S = 2.0
PROBE_TIMEOUT_S = 2.0
WORKER_STALE_AFTER_S = 90.0


class Pingable(Protocol):
    """The store's health check (PostgresMemoryStore.ping): raises when the database
    cannot answer."""

    async def ping(self) -> None: ...


@dataclass(frozen=True)
class LiveState:
    database: bool
    database_detail: str
    temporal: bool
    temporal_detail: str
    worker: bool
    worker_detail: str
    checked_at: datetime


class HostProbe:
    def __init__(
        self,
        database: Pingable,
        temporal: Callable[[], Awaitable[Client]],
        *,
        namespace: str,
        task_queue: str,
        ttl_s: float = PROBE_TTL_S,
    ) -> None:
        self.database = database
        self._temporal = temporal
        self.namespace = namespace
        self.task_queue = task_queue
        self.ttl_s = ttl_s
        self._state: LiveState | None = None
        self._at = 0.0
        self._lock = asyncio.Lock()

    async def state(self) -> LiveState:
        if self._state is not None and time.monotonic() - self._at < self.ttl_s:
            return self._state
        async with self._lock:
            if self._state is None or time.monotonic() - self._at >= self.ttl_s:
                self._state = await self._probe()
                self._at = time.monotonic()
            return self._state

    async def _probe(self) -> LiveState:
        (database, db_detail), (temporal, worker, t_detail, w_detail) = await asyncio.gather(
            self._database(), self._temporal_and_worker()
        )
        return LiveState(
            database=database,
            database_detail=db_detail,
            temporal=temporal,
            temporal_detail=t_detail,
            worker=worker,
            worker_detail=w_detail,
            checked_at=datetime.now(UTC),
        )

    async def _database(self) -> tuple[bool, str]:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                await self.database.ping()
        except Exception as error:  # any failure means "not available"; the type says why
            return False, f"unreachable ({type(error).__name__})"
        return True, "reachable"

    async def _temporal_and_worker(self) -> tuple[bool, bool, str, str]:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                client = await self._temporal()
                pollers = []
                for kind in (
                    TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
                    TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
                ):
                    described = await client.workflow_service.describe_task_queue(
                        DescribeTaskQueueRequest(
                            namespace=self.namespace,
                            task_queue=TaskQueue(name=self.task_queue),
                            task_queue_type=kind,
                        )
                    )
                    pollers.append(described.pollers)
        except Exception as error:
            detail = f"unreachable ({type(error).__name__})"
            return False, False, detail, "unknown: Temporal is unreachable"
        cutoff = datetime.now(UTC) - timedelta(seconds=WORKER_STALE_AFTER_S)
        live = [
            sum(1 for p in kind if p.last_access_time.ToDatetime(tzinfo=UTC) >= cutoff)
            for kind in pollers
        ]
        worker = all(count > 0 for count in live)
        detail = (
            f"{live[0]} workflow and {live[1]} activity pollers on '{self.task_queue}'"
            if worker
            else f"no worker polling task queue '{self.task_queue}'"
        )
        return True, worker, "reachable", detail
