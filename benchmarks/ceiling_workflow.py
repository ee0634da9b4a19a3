"""The dev server's ceiling baseline: a workflow that runs one no-op activity. In its own
module because the workflow sandbox refuses workflows defined in ``__main__``."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="bench_noop")
async def noop(value: int) -> int:
    return value


@workflow.defn(name="BenchOneActivity")
class OneActivityWorkflow:
    @workflow.run
    async def run(self, value: int) -> int:
        return await workflow.execute_activity(
            "bench_noop", value, start_to_close_timeout=timedelta(seconds=30)
        )
