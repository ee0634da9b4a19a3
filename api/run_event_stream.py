"""A run's events as the two wires read them (openwop v2 events.md): the long poll
(``.../events/poll``) and the SSE stream (``.../events`` with ``Accept:
text/event-stream``). Both read the run's event log in the store, waiting in short
steps for the next event; the stream closes after the terminal event.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from memory.fixture_runs.records import FixtureRuns, LoggedEvent
from schemas.base import format_instant
from schemas.run_wire import TERMINAL_EVENTS, TERMINAL_STATUSES, RunEventDoc

STEP_S = 0.25
KEEP_ALIVE_S = 15.0
# A stream the run has not ended within this long closes; the client resumes with
# Last-Event-ID (RFC 0247 lets a host bound an opted-in stream, not before 15 s).
MAX_STREAM_S = 120.0
SCHEMA_VERSION = 1


def event_doc(wire_run_id: str, run_id: str, event: LoggedEvent) -> RunEventDoc:
    return RunEventDoc(
        event_id=f"evt_{run_id.removeprefix('run-')}_{event.sequence:06d}",
        run_id=wire_run_id,
        type=event.type,
        payload=event.payload,
        timestamp=format_instant(event.occurred_at),
        sequence=event.sequence,
        schema_version=SCHEMA_VERSION,
    )


@dataclass(frozen=True, slots=True)
class RunLog:
    """One run of one tenant, for reading its log."""

    runs: FixtureRuns
    tenant: str
    run_id: str
    wire_run_id: str

    async def after(self, sequence: int) -> list[LoggedEvent]:
        return await self.runs.events_after(self.tenant, self.run_id, sequence) or []

    async def status(self) -> str:
        record = await self.runs.get(self.tenant, self.run_id)
        return record.status if record else "failed"


async def wait_for_events(
    log: RunLog, after: int, timeout_s: float
) -> tuple[list[LoggedEvent], str]:
    """The run's whole log and its status, once it holds an event after ``after``, the
    run has ended, or ``timeout_s`` has passed (a fixture's log is a few events, so the
    caller takes both the page and the last sequence from one read)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = await log.status()
        events = await log.after(-1)
        fresh = bool(events) and events[-1].sequence > after
        if fresh or status in TERMINAL_STATUSES or time.monotonic() >= deadline:
            return events, status
        await asyncio.sleep(STEP_S)


def sse_frame(doc: RunEventDoc) -> str:
    data = json.dumps(doc.to_wire(), separators=(",", ":"))
    return f"id: {doc.sequence}\nevent: {doc.type}\ndata: {data}\n\n"


async def sse_stream(log: RunLog, after: int) -> AsyncIterator[str]:
    """Frames from the event after ``after`` through the terminal event, then close."""
    opened = time.monotonic()
    last_sent = opened
    while time.monotonic() - opened < MAX_STREAM_S:
        events = await log.after(after)
        for event in events:
            yield sse_frame(event_doc(log.wire_run_id, log.run_id, event))
            after = event.sequence
            last_sent = time.monotonic()
            if event.type in TERMINAL_EVENTS:
                return
        if not events and await log.status() in TERMINAL_STATUSES:
            # Resumed past the terminal event: nothing more will come.
            return
        if time.monotonic() - last_sent >= KEEP_ALIVE_S:
            yield ": keep-alive\n\n"
            last_sent = time.monotonic()
        await asyncio.sleep(STEP_S)
