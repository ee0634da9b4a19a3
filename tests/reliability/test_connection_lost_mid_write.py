"""A connection that dies while a batch write is still being sent fails that write at
once, and the pool goes on with a fresh connection.

asyncpg 0.32 pipelines an executemany and waits for the socket to drain between
chunks; when the connection is lost during that wait nothing wakes it, so the write
hung forever (the chaos run caught a put_many stuck after a PostgreSQL restart). The
engine now wakes it (memory/storage/engines.py). Here the backend is made to stop reading (its
first insert waits for another transaction that inserted the same key) until the
client's send buffer is full, then the backend is terminated."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

# Enough bytes to fill the socket buffers on both sides, so the client pauses writing.
ROWS = 20_000
ROW_TEXT = "x" * 1_000
SECONDS_ALLOWED = 20


async def _backend_pid(engine: AsyncEngine, application_name: str) -> int:
    query = text("SELECT pid FROM pg_stat_activity WHERE application_name = :name")
    for _ in range(200):
        async with engine.connect() as watcher:
            pid = (await watcher.execute(query, {"name": application_name})).scalar()
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.05)
    raise AssertionError("the writer's backend never appeared")


async def test_a_batch_write_whose_connection_dies_mid_send_fails_instead_of_hanging(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as setup:
        await setup.execute(text("CREATE TABLE lost_mid_write (key int UNIQUE, value text)"))
    async with engine.connect() as holder:
        # Not a table lock: the statement must still prepare, so the batch starts sending.
        await holder.execute(text("INSERT INTO lost_mid_write VALUES (0, 'held')"))

        async def write() -> None:
            async with engine.begin() as writer:
                await writer.execute(text("SET application_name = 'lost-mid-write'"))
                await writer.execute(
                    text("INSERT INTO lost_mid_write VALUES (:key, :value)"),
                    [{"key": key, "value": ROW_TEXT} for key in range(ROWS)],
                )

        writing = asyncio.create_task(write())
        pid = await _backend_pid(engine, "lost-mid-write")
        await asyncio.sleep(1.0)  # the backend waits on key 0; the client's buffer fills
        async with engine.connect() as killer:
            await killer.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        # Not wait_for: cancelling a hung write also ends in DBAPIError.
        done, _ = await asyncio.wait([writing], timeout=SECONDS_ALLOWED)
        if not done:
            writing.cancel()
        assert done, f"the write still hangs {SECONDS_ALLOWED} s after its connection died"
        with pytest.raises(DBAPIError):
            writing.result()
        await holder.rollback()

    # The pool replaced the dead connection: the next writes work.
    for key in range(1, 4):
        async with engine.begin() as after:
            await after.execute(text(f"INSERT INTO lost_mid_write VALUES ({key}, 'after')"))
    async with engine.connect() as check:
        count = (await check.execute(text("SELECT count(*) FROM lost_mid_write"))).scalar()
    assert count == 3
