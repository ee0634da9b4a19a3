"""Heartbeats: every activity proves it is alive, and long ones report progress.

Every activity runs inside ``liveness()`` (the boundary wrapper enters it), which
heartbeats every LIVENESS_INTERVAL seconds for as long as the activity runs, carrying
the latest progress details. Every activity is scheduled with a heartbeat timeout
(workflows/policies.py), so when a worker dies mid-activity (SIGKILL, OOM, a lost
node) Temporal retries the activity elsewhere within that timeout, instead of waiting
out a start-to-close timeout of minutes. The interval is well under the timeout; the
SDK itself throttles what it sends to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

from temporalio import activity

LIVENESS_INTERVAL_SECONDS = 2.0


class ProgressBeat:
    """Holds the latest progress details; the liveness loop repeats them."""

    def __init__(self) -> None:
        self.details: dict[str, Any] = {}
        # Details an outer activity keeps in every beat while inner steps report theirs
        # (a fleet batch's finished agents, which its retry resumes after).
        self.held: dict[str, Any] = {}

    def __call__(self, details: dict[str, Any]) -> None:
        self.details = {**self.held, **details}
        if activity.in_activity():
            activity.heartbeat(self.details)

    def hold(self, details: dict[str, Any]) -> None:
        """Report ``details`` now and keep them in every later beat."""
        self.held = dict(details)
        self(details)

    def beat(self) -> None:
        if not activity.in_activity():
            return
        if self.details:
            activity.heartbeat(self.details)
        else:
            activity.heartbeat()


_current: ContextVar[ProgressBeat | None] = ContextVar("activity_progress", default=None)


@contextlib.asynccontextmanager
async def liveness(every_seconds: float = LIVENESS_INTERVAL_SECONDS) -> AsyncIterator[ProgressBeat]:
    """Heartbeat in the background while the block runs. Nested use (an activity that
    calls another wrapped activity function) shares the outer loop."""
    current = _current.get()
    if current is not None or not activity.in_activity():
        yield current or ProgressBeat()
        return
    beat = ProgressBeat()
    token = _current.set(beat)

    async def loop() -> None:
        while True:
            beat.beat()
            await asyncio.sleep(every_seconds)

    task = asyncio.create_task(loop())
    try:
        yield beat
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        _current.reset(token)


def progress() -> ProgressBeat:
    """The running activity's progress reporter."""
    return _current.get() or ProgressBeat()
