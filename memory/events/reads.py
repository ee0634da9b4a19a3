"""Reading a memoryRef's event log, and a tenant's events of one OpenIntent intent
(appending happens inside each write's transaction, memory/events/event_log.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory.events.event_log import read_events, read_intent_events
from memory.input_gate import MAX_INT32, MAX_INT64, TEXT_ID, checked_int, possible
from memory.storage.database import Database
from schemas.events import LIFECYCLE_TYPES, EventRecord
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

    async def intent_events(
        self,
        tenant: str,
        intent_id: str,
        *,
        types: Sequence[str] = (),
        since: datetime | None = None,
        limit: int = 100,
    ) -> list[EventRecord]:
        """The tenant's lifecycle events linked to ``intent_id`` (memory/keyed_ids/intent_links.py),
        oldest first, of ``types`` (every lifecycle type when empty), after ``since``.
        Any text is an intent id that may have events: one no entry was scoped to, or
        another tenant's, has none."""
        limit = checked_int("limit", limit, 1, MAX_INT32)
        digest = self.db.intent_links.digest(tenant, intent_id)
        if digest is None or not all(possible(TEXT_ID, t) for t in types):
            return []
        async with self.db.reading() as connection:
            return await read_intent_events(
                connection, tenant, digest, types=types or LIFECYCLE_TYPES, since=since, limit=limit
            )
