"""The change listener: wakes predicate watches when their memory changed.

One per worker process (worker.py starts it beside the worker). It LISTENs on
``agent_memory_changed`` on a dedicated PostgreSQL connection; the entries' triggers
NOTIFY the memoryRef of every committed change (memory/commitments/change_feed.py). It gathers the
notified memoryRefs for ``coalesce_seconds`` (a burst of puts to one ref wakes each of
its watches once) and signals ``memory_changed`` to each waiting watch of those refs
whose truth the change may have moved (a built-in predicate still as its watch recorded
it is not woken: ChangeFeed.watches_of).

One leader: every LISTENing session receives every notification, so only the worker
holding a session advisory lock on its listening connection acts; the others retry the
lock every ``leader_retry_seconds`` and take over when the leader's connection ends.

Nothing is lost for good:
- every (re)connection of the leader starts with a **sweep** (a worker that was down, a
  listener reconnecting or a new leader missed what was written meanwhile);
- the sweep repeats every ``sweep_seconds`` (60 s) for what a connected listener can
  still miss: a signal that failed (Temporal unreachable), a write that raced a watch's
  first evaluation. A sweep is one indexed query for the waiting watches whose last
  evaluation read an older change counter than their ref's; it costs no watch a
  workflow task unless that watch missed a change. 60 s keeps the bound the old 60 s
  cadence gave on a lost change.
- duplicates are harmless: each evaluation is idempotent and claims ``transition:<n>``
  in the ledger, so a watch woken twice fires once.

It also LISTENs on ``agent_memory_deferred_ended`` (migration 0027): a commitment
deferred to a horizon ended before its start (its entry forgotten, the promise
cancelled), and the memoryRef's horizon workflow and the fleet's are signalled to look
again now instead of waiting for, and announcing, an instant that is gone. A lost one of
these costs nothing but time: the horizon's own wake re-reads the same state.

Logs carry memoryRefs, commitment ids, counts and error class names, never content.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from memory.commitments.change_feed import (
    CHANNEL,
    DEFERRED_ENDED_CHANNEL,
    LISTENER_LOCK_ID,
    ChangeFeed,
    Watch,
)
from memory.commitments.predicates import PredicateRegistry
from runtime.workflow_ids import PLAIN, WorkflowIds
from schemas.commitments import DEFERRED_ENDED_SIGNAL, commitment_workflow_id

log = logging.getLogger("agent_memory.change_listener")

SIGNAL = "memory_changed"
COALESCE_SECONDS = 0.1
SWEEP_SECONDS = 60.0
LEADER_RETRY_SECONDS = 5.0
MIN_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
# Signals in flight at once (each is one Temporal RPC).
CONCURRENCY = 32
SWEEP_PAGE = 1000
CONNECT_TIMEOUT_SECONDS = 10

Signal = Callable[[str], Awaitable[None]]
# Tells the horizon workflows of these memoryRefs (and the fleet's) that a deferred
# commitment of theirs ended.
Recheck = Callable[[list[str]], Awaitable[None]]
Connect = Callable[[], Awaitable[Any]]


@dataclass
class ListenerStats:
    """Counters for tests and logs."""

    sessions: int = 0  # times this listener became the leader on a fresh connection
    notifications: int = 0  # notifications received
    wakes: int = 0  # batches of notified refs handled
    signals: int = 0  # signals delivered
    gone: int = 0  # watches whose workflow was no longer running
    failed: int = 0  # signals that failed (the sweep retries them)
    sweeps: int = 0
    swept: int = 0  # signals sent by sweeps
    rechecks: int = 0  # memoryRefs whose horizons were told a deferred commitment ended
    leader: bool = False


def signal_with(client: Client) -> Signal:
    async def signal(commitment_id: str) -> None:
        handle = client.get_workflow_handle(commitment_workflow_id(commitment_id))
        await handle.signal(SIGNAL)

    return signal


def recheck_with(client: Client, ids: WorkflowIds = PLAIN) -> Recheck:
    """Signal each memoryRef's horizon workflow and the fleet's, once; a horizon that is
    not running (nothing was deferred there) is skipped."""

    async def recheck(refs: list[str]) -> None:
        horizons = [ids.commitment_horizon(ref) for ref in refs]
        for workflow_id in [*horizons, ids.fleet_commitment_horizon()]:
            try:
                await client.get_workflow_handle(workflow_id).signal(DEFERRED_ENDED_SIGNAL)
            except RPCError as error:
                if error.status != RPCStatusCode.NOT_FOUND:
                    raise

    return recheck


def connect_with(engine: AsyncEngine) -> Connect:
    """A fresh asyncpg connection to the engine's database (not from its pool: a LISTEN
    connection is held for the worker's life)."""
    arguments, options = engine.sync_engine.dialect.create_connect_args(engine.url)

    async def connect() -> Any:
        return await asyncpg.connect(*arguments, timeout=CONNECT_TIMEOUT_SECONDS, **options)

    return connect


class ChangeListener:
    def __init__(
        self,
        feed: ChangeFeed,
        signal: Signal,
        connect: Connect,
        *,
        coalesce_seconds: float = COALESCE_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        leader_retry_seconds: float = LEADER_RETRY_SECONDS,
        recheck: Recheck | None = None,
    ) -> None:
        self.feed = feed
        self._signal = signal
        self._recheck = recheck
        self._ended: set[str] = set()
        self._connect = connect
        self.coalesce_seconds = coalesce_seconds
        self.sweep_seconds = sweep_seconds
        self.leader_retry_seconds = leader_retry_seconds
        self.stats = ListenerStats()
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self._limit = asyncio.Semaphore(CONCURRENCY)
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_store(
        cls,
        engine: AsyncEngine,
        client: Client,
        predicates: PredicateRegistry | None = None,
        ids: WorkflowIds = PLAIN,
        **options: float,
    ) -> ChangeListener:
        """``predicates``: the worker's registry, to pre-check its built-ins (a watch
        whose truth a write did not change is not woken); None wakes every watch.
        ``ids``: the deployment's workflow ids (opaque ones with payload keys), to find
        the horizon workflows."""
        feed = ChangeFeed(engine, predicates)
        recheck = recheck_with(client, ids)
        return cls(feed, signal_with(client), connect_with(engine), recheck=recheck, **options)

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ChangeListener:
        self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="change-listener")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run(self) -> None:
        """Listen until cancelled, reconnecting with backoff."""
        backoff = MIN_BACKOFF_SECONDS
        while True:
            sessions = self.stats.sessions
            try:
                await self._session()
            except Exception as error:
                # The connection ended, or a look-up failed: reconnect (and sweep then).
                log.warning("change listener reconnecting (%s)", type(error).__name__)
            if self.stats.sessions != sessions:
                backoff = MIN_BACKOFF_SECONDS  # it had been listening: retry soon
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    # ------------------------------------------------------------------ one connection

    async def _session(self) -> None:
        connection = await self._connect()
        lost = asyncio.Event()
        try:
            connection.add_termination_listener(lambda _: lost.set())
            await self._lead(connection, lost)
            await connection.add_listener(CHANNEL, self._notified)
            if self._recheck is not None:
                await connection.add_listener(DEFERRED_ENDED_CHANNEL, self._deferred_ended)
            self.stats.sessions += 1
            self.stats.leader = True
            log.info("change listener is listening on %s", CHANNEL)
            await self._listen(connection, lost)
        finally:
            self.stats.leader = False
            self._pending.clear()
            self._ended.clear()
            with contextlib.suppress(Exception):
                await asyncio.shield(connection.close(timeout=2))

    async def _lead(self, connection: Any, lost: asyncio.Event) -> None:
        """Wait until this connection holds the listener lock (released when it ends)."""
        while not await connection.fetchval("SELECT pg_try_advisory_lock($1)", LISTENER_LOCK_ID):
            await _either(lost, self.leader_retry_seconds)
            if lost.is_set():
                raise ConnectionError("listener connection ended")

    async def _listen(self, connection: Any, lost: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        next_sweep = loop.time()  # at once: catch up on what nobody listened to
        while not lost.is_set():
            if loop.time() >= next_sweep:
                # Also proves the connection still answers (a dead peer sends no FIN).
                await connection.fetchval("SELECT 1")
                await self.sweep()
                next_sweep = loop.time() + self.sweep_seconds
            await _either(self._wake, next_sweep - loop.time(), lost)
            if self._pending or self._ended:
                await asyncio.sleep(self.coalesce_seconds)
                refs = self._drain()  # clears the wake before taking what set it
                ended, self._ended = sorted(self._ended), set()
                if refs:
                    await self._wake_refs(refs)
                if ended:
                    await self._recheck_horizons(ended)
        raise ConnectionError("listener connection ended")

    def _notified(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        self.stats.notifications += 1
        self._pending.add(payload)
        self._wake.set()

    def _deferred_ended(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        self.stats.notifications += 1
        self._ended.add(payload)
        self._wake.set()

    async def _recheck_horizons(self, refs: list[str]) -> None:
        assert self._recheck is not None  # only listened to with one
        try:
            await self._recheck(refs)
        except Exception as error:
            # Not retried: the horizon's own wake re-reads the same state, later.
            log.warning(
                "telling horizons a deferred commitment ended failed (%s)", type(error).__name__
            )
            return
        self.stats.rechecks += len(refs)

    def _drain(self) -> list[str]:
        refs, self._pending = sorted(self._pending), set()
        self._wake.clear()
        return refs

    # ------------------------------------------------------------------ waking watches

    async def _wake_refs(self, refs: Iterable[str]) -> None:
        self.stats.wakes += 1
        watches = [watch for ref in refs for watch in await self.feed.watches_of(ref)]
        self.stats.signals += await self._signal_all(watches)

    async def sweep(self) -> int:
        """Signal every waiting watch that missed a change; returns how many."""
        sent, after = 0, ""
        while page := await self.feed.lagging(after=after, limit=SWEEP_PAGE):
            sent += await self._signal_all(page)
            after = page[-1].commitment_id
            if len(page) < SWEEP_PAGE:
                break
        self.stats.sweeps += 1
        self.stats.swept += sent
        if sent:
            log.info("change listener sweep woke %d predicate watches", sent)
        return sent

    async def _signal_all(self, watches: list[Watch]) -> int:
        outcomes = await asyncio.gather(*(self._signal_one(watch) for watch in watches))
        gone = [watch for watch, outcome in zip(watches, outcomes, strict=True) if outcome is None]
        if gone:
            # A closed workflow: stop waking it (its commitment ended, or an operator
            # terminated it; a new arm or evaluation sets the marker again).
            self.stats.gone += len(gone)
            await self.feed.release(gone)
        return sum(1 for outcome in outcomes if outcome)

    async def _signal_one(self, watch: Watch) -> bool | None:
        """True when delivered, None when the workflow is gone, False when it failed."""
        async with self._limit:
            try:
                await self._signal(watch.commitment_id)
            except RPCError as error:
                if error.status == RPCStatusCode.NOT_FOUND:
                    return None
                self._failed(watch, error)
                return False
            except Exception as error:
                self._failed(watch, error)
                return False
        return True

    def _failed(self, watch: Watch, error: BaseException) -> None:
        self.stats.failed += 1
        log.warning(
            "signal to commitment %s failed (%s); the sweep retries it",
            watch.commitment_id,
            type(error).__name__,
        )


async def _either(event: asyncio.Event, seconds: float, other: asyncio.Event | None = None) -> None:
    """Wait until ``event`` (or ``other``) is set, at most ``seconds``."""
    waits = [asyncio.ensure_future(event.wait())]
    if other is not None:
        waits.append(asyncio.ensure_future(other.wait()))
    try:
        await asyncio.wait(waits, timeout=max(seconds, 0), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
