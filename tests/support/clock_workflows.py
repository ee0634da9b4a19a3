"""A workflow that only waits: awaiting its result lets the time-skipping test server
jump its clock ahead by exactly that long, with every timer due meanwhile firing in
order (the server skips only while no workflow task or activity is outstanding)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow


@workflow.defn
class WaitWorkflow:
    @workflow.run
    async def run(self, seconds: float) -> None:
        await workflow.sleep(timedelta(seconds=seconds))
