"""Keep heartbeating while an activity awaits long work, with the latest progress."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from temporalio import activity


class ProgressBeat:
    """Holds the latest progress details; a background task heartbeats them."""

    def __init__(self) -> None:
        self.details: dict[str, Any] = {}

    def __call__(self, details: dict[str, Any]) -> None:
        self.details = dict(details)
        activity.heartbeat(self.details)


@contextlib.asynccontextmanager
async def heartbeating(every_seconds: float = 5.0) -> AsyncIterator[ProgressBeat]:
    beat = ProgressBeat()

    async def loop() -> None:
        while True:
            await asyncio.sleep(every_seconds)
            activity.heartbeat(beat.details)

    task = asyncio.create_task(loop())
    try:
        yield beat
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
