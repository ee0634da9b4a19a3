"""The change feed under predicate watches (migration 0013): which writes count as a
change, that a notification leaves only with a commit, and that one listener acts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.commitments.change_feed import CHANNEL, ChangeFeed, change_seq
from memory.store import PostgresMemoryStore
from runtime.change_listener import ChangeListener, connect_with
from schemas.memory_entry import EntryChanges
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.waiting import eventually


async def _seq(engine: AsyncEngine, ref: str) -> int:
    async with engine.connect() as connection:
        return await change_seq(connection, parse_memory_ref(ref))


@pytest.fixture
async def heard(engine: AsyncEngine) -> AsyncIterator[list[str]]:
    """The payloads a plain LISTEN session receives."""
    received: list[str] = []
    connection = await connect_with(engine)()

    def on_notify(_connection: Any, _pid: int, _channel: str, payload: str) -> None:
        received.append(payload)

    await connection.add_listener(CHANNEL, on_notify)
    yield received
    await connection.close()


async def test_a_change_counts_a_bookkeeping_touch_does_not(
    store: PostgresMemoryStore, engine: AsyncEngine, heard: list[str]
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note("the contract draft"))
    assert await _seq(engine, ref) == 1
    await store.get(ref, entry.id)  # touches last_accessed_at
    assert await _seq(engine, ref) == 1
    await store.update(ref, entry.id, EntryChanges(tags=("signed",)), expected_version=1)
    assert await _seq(engine, ref) == 2
    await store.delete(ref, entry.id)
    assert await _seq(engine, ref) == 3
    await eventually(lambda: _heard(heard, 3))
    assert set(heard) == {ref}


async def test_a_rolled_back_write_notifies_nothing_and_one_transaction_notifies_once(
    store: PostgresMemoryStore, engine: AsyncEngine, heard: list[str]
) -> None:
    ref = unique_ref()
    await store.put(ref, note("first"))
    await eventually(lambda: _heard(heard, 1))
    async with engine.connect() as connection:
        transaction = await connection.begin()
        await connection.execute(
            text("UPDATE memory_entries SET tags = '{x}' WHERE memory_ref = :ref"), {"ref": ref}
        )
        await transaction.rollback()
    async with engine.begin() as connection:
        for tag in ("a", "b", "c"):
            await connection.execute(
                text("UPDATE memory_entries SET tags = ARRAY[:tag] WHERE memory_ref = :ref"),
                {"ref": ref, "tag": tag},
            )
    await eventually(lambda: _heard(heard, 2))
    await asyncio.sleep(0.3)
    assert heard == [ref, ref]  # the put, then the three-statement transaction once
    assert await _seq(engine, ref) == 4  # the counter still counts every statement


async def _heard(heard: list[str], count: int) -> bool:
    return len(heard) >= count


async def test_one_listener_leads_and_another_takes_over_when_it_stops(
    store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    signalled: list[str] = []

    async def record(commitment_id: str) -> None:
        signalled.append(commitment_id)

    def listener() -> ChangeListener:
        return ChangeListener(
            ChangeFeed(engine), record, connect_with(engine), leader_retry_seconds=0.2
        )

    first, second = listener(), listener()
    async with first, second:
        await eventually(lambda: _leading(first, second))
        leader, standby = (first, second) if first.stats.leader else (second, first)
        await asyncio.sleep(0.5)
        assert not standby.stats.leader and standby.stats.sessions == 0
        await leader.stop()
        await eventually(lambda: _leading(standby))
        assert standby.stats.sweeps >= 1  # a new leader first catches up


async def _leading(*listeners: ChangeListener) -> bool:
    return any(listener.stats.leader for listener in listeners)
