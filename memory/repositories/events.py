"""Reading a memoryRef's event log (appending happens inside each write's transaction,
memory/event_log.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.event_log import read_events
from memory.input_gate import MAX_INT32, MAX_INT64, TEXT_ID, checked_int, possible
from memory.transactions import Database
from schemas.events import EventRecord
from schemas.memory_ref import MemoryRef


class Events:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def read(
        self,
        ref: MemoryRef,
        *,
        after_seq: int = 0,
        limit: int = 1000,
        types: Sequence[str] | None = None,
    ) -> list[EventRecord]:
        after_seq = checked_int("afterSeq", after_seq, 0, MAX_INT64)
        limit = checked_int("limit", limit, 1, MAX_INT32)
        if types is not None and not all(possible(TEXT_ID, t) for t in types):
            return []
        async with self.db.reading() as connection:
            return await read_events(connection, ref, after_seq=after_seq, limit=limit, types=types)
