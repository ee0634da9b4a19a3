"""Predicate watches wait for a change instead of polling (issue 21, item 4).

A watch costs no workflow task while nothing changes (time-skipping server, a simulated
day); every write path of the store wakes it through the entries' trigger and the
change listener; a flip true -> false -> true fires twice; a notification lost while
the listener was down, or a signal lost while it was up, is caught by the listener's
sweep; duplicate notifications fire nothing extra. No manual signal anywhere: the
writes alone must reach the watch.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from memory.commitments.change_feed import CHANNEL, ChangeFeed
from memory.commitments.predicates import default_predicates
from memory.store import PostgresMemoryStore
from runtime.change_listener import ChangeListener, Signal, connect_with, signal_with
from schemas.commitments import PredicateWatchStatus
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_entry import EntryChanges, ForgetRequest, HostMemoryEntry, Tier
from tests.support.factories import note, unique_ref
from tests.support.predicate_watches import (
    TAG,
    StartedWatch,
    after_write,
    caught_up,
    evaluated,
    fired_occurrences,
    start_watch,
    status,
    workflow_tasks,
)
from tests.support.waiting import eventually
from workflows.predicate_watch import PredicateWatchWorkflow

# Long enough that only the sweep a (re)connection starts with runs in a test, unless
# the test asks for a short one.
NO_PERIODIC_SWEEP = 3600.0


def _listener(
    engine: AsyncEngine, signal: Signal, sweep_seconds: float = NO_PERIODIC_SWEEP
) -> ChangeListener:
    """As the worker runs it: pre-checking the built-in predicates."""
    feed = ChangeFeed(engine, default_predicates())
    return ChangeListener(
        feed, signal, connect_with(engine), coalesce_seconds=0.05, sweep_seconds=sweep_seconds
    )


@pytest.fixture
async def skipping_listener(
    time_skipping_env: WorkflowEnvironment, engine: AsyncEngine
) -> AsyncIterator[ChangeListener]:
    async with _listener(engine, signal_with(time_skipping_env.client)) as listener:
        yield listener


@pytest.fixture
async def listener(
    temporal_env: WorkflowEnvironment, engine: AsyncEngine
) -> AsyncIterator[ChangeListener]:
    async with _listener(engine, signal_with(temporal_env.client)) as listener:
        yield listener


async def _let_a_day_pass(env: WorkflowEnvironment) -> None:
    """Skip exactly a day on the test server. (Not by awaiting a sleeping workflow's
    result: once it completes, auto-skipping may jump on to the next thing due, the
    watch's ten-year execution timeout, before the client locks skipping again.)"""
    await env.sleep(timedelta(days=1))


# ---------------------------------------------------------------- time-skipping server


async def test_a_watch_with_nothing_changing_records_no_workflow_task_in_a_day(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    skipping_listener: ChangeListener,
    store: PostgresMemoryStore,
) -> None:
    client = time_skipping_env.client
    watch = await start_watch(client, skipping_queue, store, unique_ref())
    await asyncio.sleep(0.5)  # the promise's own write may still wake it once
    tasks, quiet = await workflow_tasks(watch), await evaluated(watch, 1)
    start = await time_skipping_env.get_current_time()
    await _let_a_day_pass(time_skipping_env)
    assert await time_skipping_env.get_current_time() - start >= timedelta(days=1)
    assert await workflow_tasks(watch) == tasks  # before: 1,440 more
    assert (await evaluated(watch, 1)).evaluations == quiet.evaluations
    # Still listening: a write after the quiet day wakes it at once.
    await store.put(watch.ref, note("Signed after a quiet day", TAG))
    assert (await evaluated(watch, quiet.evaluations + 1)).fires == 1


async def test_a_flip_true_false_true_fires_exactly_twice(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    skipping_listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch = await start_watch(time_skipping_env.client, skipping_queue, store, unique_ref())
    assert not (await status(watch) or pytest.fail("no status")).holds
    signed = await store.put(watch.ref, note("Signed today", TAG))
    first = await after_write(engine, watch, 1)
    assert (first.holds, first.fires) == (True, 1)
    await store.delete(watch.ref, signed.id)
    dropped = await after_write(engine, watch, first.evaluations)
    assert (dropped.holds, dropped.fires) == (False, 1)
    await store.put(watch.ref, note("Signed again", TAG))
    second = await after_write(engine, watch, dropped.evaluations)
    assert (second.holds, second.fires) == (True, 2)
    assert await fired_occurrences(engine, watch) == ["transition:1", "transition:2"]
    fired = await store.events(watch.ref, types=["commitment.fired"])
    assert len(fired) == 2


async def test_a_write_made_while_the_listener_is_stopped_is_caught_by_the_sweep(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = time_skipping_env.client
    listener = _listener(engine, signal_with(client))
    async with listener:
        watch = await start_watch(client, skipping_queue, store, unique_ref())
        await eventually(lambda: _swept_once(listener))
        await asyncio.sleep(0.3)  # the promise's own write may still wake it once
        quiet = await evaluated(watch, 1)
    # The listener is down: this write's notification reaches nobody.
    await store.put(watch.ref, note("Signed while nobody listened", TAG))
    await asyncio.sleep(1.0)
    assert (await evaluated(watch, 1)).evaluations == quiet.evaluations  # nothing woke it
    async with listener:  # back: its first act is a sweep
        woken = await after_write(engine, watch, quiet.evaluations)
    assert (woken.holds, woken.fires) == (True, 1)
    assert listener.stats.sweeps >= 2 and listener.stats.swept >= 1


async def _swept_once(listener: ChangeListener) -> bool:
    return listener.stats.sweeps >= 1


# ---------------------------------------------------------------- dev server


async def test_a_signal_lost_while_listening_is_caught_by_the_periodic_sweep(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """The notification arrives but its signal is lost in transit (Temporal briefly
    unreachable): the next periodic sweep sends it again."""
    real = signal_with(temporal_env.client)
    losing, lost = False, list[str]()

    async def lossy(commitment_id: str) -> None:
        if losing and not lost:
            lost.append(commitment_id)
            raise ConnectionError("signal lost in transit")
        await real(commitment_id)

    async with _listener(engine, lossy, sweep_seconds=1.0) as listener:
        watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
        await asyncio.sleep(0.3)  # the promise's own write may still wake it once
        losing = True
        await store.put(watch.ref, note("Signed; the first signal is lost", TAG))
        woken = await after_write(engine, watch, 1)
    assert (woken.holds, woken.fires) == (True, 1)
    assert lost == [watch.commitment_id]
    assert listener.stats.failed == 1 and listener.stats.swept >= 1


async def test_duplicate_notifications_fire_nothing_extra(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    await store.put(watch.ref, note("Signed once", TAG))
    fired = await after_write(engine, watch, 1)
    assert fired.fires == 1
    # The same memoryRef notified again and again (a replayed NOTIFY, a second listener,
    # a host signalling too), each in its own transaction so none is folded.
    for _ in range(5):
        async with engine.begin() as connection:
            await connection.execute(
                text("SELECT pg_notify(:channel, :ref)"), {"channel": CHANNEL, "ref": watch.ref}
            )
        await watch.handle.signal(PredicateWatchWorkflow.memory_changed)
        await asyncio.sleep(0.1)
    again = await evaluated(watch, fired.evaluations + 1)
    await asyncio.sleep(0.5)
    final = await status(watch)
    assert final is not None and final.evaluations >= again.evaluations
    assert (final.holds, final.fires) == (True, 1)
    assert await fired_occurrences(engine, watch) == ["transition:1"]
    assert len(await store.events(watch.ref, types=["commitment.fired"])) == 1


# ---------------------------------------------------------------- every write path


async def _signed_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> tuple[StartedWatch, HostMemoryEntry, PredicateWatchStatus]:
    """A watch whose predicate holds (fired once) on a tagged entry; returns it, the
    entry and the status."""
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    entry = await store.put(watch.ref, note("Signed by both parties", TAG))
    signed = await after_write(engine, watch, 1)
    assert (signed.holds, signed.fires) == (True, 1)
    return watch, entry, signed


async def test_put_wakes_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    await _signed_watch(temporal_env, worker_task_queue, store, engine)


async def test_update_wakes_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    draft = await store.put(watch.ref, note("The contract draft"))
    untagged = await after_write(engine, watch, 1)
    assert not untagged.holds
    await store.update(watch.ref, draft.id, EntryChanges(tags=(TAG,)), expected_version=1)
    tagged = await after_write(engine, watch, untagged.evaluations)
    assert (tagged.holds, tagged.fires) == (True, 1)


async def test_delete_wakes_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch, entry, signed = await _signed_watch(temporal_env, worker_task_queue, store, engine)
    assert await store.delete(watch.ref, entry.id)
    assert not (await after_write(engine, watch, signed.evaluations)).holds


async def test_forget_wakes_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch, entry, signed = await _signed_watch(temporal_env, worker_task_queue, store, engine)
    assert await store.forget(watch.ref, ForgetRequest(ids=(entry.id,))) == 1
    assert not (await after_write(engine, watch, signed.evaluations)).holds


async def test_the_expiry_sweep_wakes_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    expires_at = store.now() + timedelta(seconds=2)
    await store.put(watch.ref, note("Signed for two seconds", TAG, expires_at=expires_at))
    signed = await after_write(engine, watch, 1)
    assert (signed.holds, signed.fires) == (True, 1)
    await asyncio.sleep(max((expires_at - store.now()).total_seconds(), 0) + 0.1)
    assert await store.gc_expired(watch.ref) == 1
    assert not (await after_write(engine, watch, signed.evaluations)).holds


async def test_a_consolidation_pass_reaches_the_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """A pass that merges two entries notifies; this watch's truth did not move, so the
    listener's pre-check marks it as having seen the change instead of waking it."""
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    await store.put_many(
        watch.ref,
        [
            note("The customer prefers invoices in EUR", tier=Tier.SEMANTIC),
            note("Note: the customer prefers invoices in EUR.", tier=Tier.SEMANTIC),
        ],
    )
    await eventually(lambda: _caught_up(engine, watch))
    before, unaffected = await status(watch), listener.feed.unaffected
    tasks = await workflow_tasks(watch)
    request = ConsolidateMemoryRequest(memory_ref=watch.ref, run_key="pass-1")
    passed = await store.consolidate(request)
    assert passed.merged_ids  # the pass wrote: one entry merged into the other
    await eventually(lambda: _checked_since(listener, unaffected))
    await eventually(lambda: _caught_up(engine, watch))
    assert await status(watch) == before and await workflow_tasks(watch) == tasks


async def test_writes_that_leave_a_watch_s_truth_alone_cost_it_no_workflow_task(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    await eventually(lambda: _caught_up(engine, watch))
    await asyncio.sleep(0.3)
    before, tasks = await status(watch), await workflow_tasks(watch)
    for i in range(10):
        await store.put(watch.ref, note(f"Unrelated fact {i}", "other-tag"))
        await asyncio.sleep(0.1)  # one notification each, none folded
    await eventually(lambda: _caught_up(engine, watch))
    assert await status(watch) == before and await workflow_tasks(watch) == tasks
    assert listener.feed.unaffected >= 10
    # The one write that matters still wakes it.
    await store.put(watch.ref, note("Signed at last", TAG))
    assert before is not None
    woken = await after_write(engine, watch, before.evaluations)
    assert (woken.holds, woken.fires) == (True, 1)


async def _caught_up(engine: AsyncEngine, watch: StartedWatch) -> bool:
    return await caught_up(engine, watch) is not None


async def _checked_since(listener: ChangeListener, unaffected: int) -> bool:
    return listener.feed.unaffected > unaffected


async def test_a_commitment_cancelled_in_the_store_ends_its_waiting_watch(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    listener: ChangeListener,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """No entry changed, yet the watch must not wait forever: the commitment's own
    trigger notifies, the watch wakes, finds it cancelled and finishes."""
    watch = await start_watch(temporal_env.client, worker_task_queue, store, unique_ref())
    await store.commitments.cancel(watch.ref, watch.commitment_id)
    final = await asyncio.wait_for(watch.handle.result(), timeout=10)
    assert (final.state, final.fires) == ("cancelled", 0)
    # Nothing waits on it any more: the sweep has nothing to wake.
    assert await ChangeFeed(engine).lagging() == []
