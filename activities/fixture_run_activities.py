"""The openwop conformance fixtures' activity: run one fixture's memory action against
the store as the run's tenant, and record its variables and events in one transaction
(memory/fixture_runs/). Returns counts only: what the fixture read back stays in the
store, never in Temporal history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.boundary import content_free
from activities.contracts import RUN_FIXTURE
from activities.fixture_actions import run_fixture
from memory.store import PostgresMemoryStore
from schemas.errors import ErrorCode
from schemas.fixture_runs import RunFixtureRequest, RunFixtureResult


class FixtureRunActivities:
    def __init__(self, store: PostgresMemoryStore) -> None:
        self.store = store

    @activity.defn(name=RUN_FIXTURE.name)
    @content_free
    async def run_fixture(self, request: RunFixtureRequest) -> RunFixtureResult:
        runs = self.store.fixture_runs
        tenant = await runs.tenant_of(request.run_id)
        if tenant is None:
            raise ApplicationError(
                "no such run", type=ErrorCode.NOT_FOUND.value, non_retryable=True
            )
        record = await runs.get(tenant, request.run_id)
        if record is not None and record.status != "running":
            # A retry after the outcome was recorded, or a run cancelled meanwhile: the
            # run happened (or ended) once.
            return await self._recorded(tenant, request.run_id)
        outcome = await run_fixture(self.store, tenant, request.run_id, request.fixture)
        if not await runs.finish(tenant, request.run_id, outcome):
            return await self._recorded(tenant, request.run_id)
        return RunFixtureResult(
            run_id=request.run_id,
            status=outcome.status,
            variables=len(outcome.variables),
            events=len(outcome.events),
            error_code=(outcome.error or {}).get("error"),
        )

    async def _recorded(self, tenant: str, run_id: str) -> RunFixtureResult:
        runs = self.store.fixture_runs
        record = await runs.get(tenant, run_id)
        if record is None:
            raise ApplicationError(
                "no such run", type=ErrorCode.NOT_FOUND.value, non_retryable=True
            )
        return RunFixtureResult(
            run_id=run_id,
            status=record.status,
            variables=len(record.variables),
            events=len(await runs.events_after(tenant, run_id) or []),
            error_code=(record.error or {}).get("error"),
        )

    def all(self) -> list[Callable[..., Any]]:
        return [self.run_fixture]
