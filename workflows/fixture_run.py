"""FixtureRunWorkflow: one openwop run of a conformance fixture (``POST /v1/runs``),
workflow id ``fixture-run/<runId>``. One activity runs the fixture's memory action
against the real store as the run's tenant and records its variables and events; the
workflow carries the run id, the fixture id and counts, never what was read back.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import RUN_FIXTURE
    from schemas.fixture_runs import (
        FIXTURE_RUN_WORKFLOW,
        FixtureRunInput,
        RunFixtureRequest,
        RunFixtureResult,
    )
    from workflows import policies
    from workflows.activity_calls import call


@workflow.defn(name=FIXTURE_RUN_WORKFLOW)
class FixtureRunWorkflow:
    @workflow.run
    async def run(self, request: FixtureRunInput) -> RunFixtureResult:
        workflow.set_current_details(f"Running {request.fixture} as run {request.run_id}")
        result = await call(
            RUN_FIXTURE,
            RunFixtureRequest(run_id=request.run_id, fixture=request.fixture),
            policies.FIXTURE,
            summary=f"run the {request.fixture} fixture's memory action",
        )
        workflow.set_current_details(
            f"Done: {result.status}, {result.variables} variables, {result.events} events"
        )
        return result
