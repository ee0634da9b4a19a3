"""openwop runs of the conformance fixtures (../shared/spec/openwop-host-sample-seams.md
§4.1): ``POST /v1/runs`` records the run under the key's tenant and starts its
FixtureRunWorkflow; ``GET /v1/runs/{runId}`` reads its status and variables, with every
entry a variable names read through the store now (MemoryAdapter.get), so an entry
forgotten or expired since reads as null; ``GET /v1/runs/{runId}/events`` is its event
log as JSON. Another tenant's run reads as a missing one (404).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import Field
from temporalio.service import RPCError

from api.auth import Api, Tenant
from api.errors import ApiError, not_found
from memory.fixture_runs.records import FixtureOutcome
from memory.store import PostgresMemoryStore
from schemas.base import WireModel
from schemas.fixture_runs import (
    FIXTURE_RUN_WORKFLOW,
    FIXTURES,
    FixtureRunInput,
    fixture_run_workflow_id,
)

router = APIRouter(tags=["openwop runs"])

# A fixture's run takes well under a second; this bounds a stuck one.
RUN_EXECUTION_TIMEOUT = timedelta(minutes=15)


class CreateRunRequest(WireModel):
    workflow_id: Annotated[str, Field(min_length=1, max_length=200)]
    inputs: dict[str, Any] | None = None


async def _resolved(store: PostgresMemoryStore, value: Any) -> Any:
    """Variables with each entry reference read through the store."""
    if isinstance(value, dict):
        if set(value) in ({"$entry"}, {"$content"}):
            ((kind, target),) = value.items()
            entry = await store.get(target["memoryRef"], target["id"])
            if entry is None:
                return None
            return entry.to_wire() if kind == "$entry" else entry.content
        return {key: await _resolved(store, item) for key, item in value.items()}
    if isinstance(value, list):
        return [await _resolved(store, item) for item in value]
    return value


@router.post("/v1/runs", status_code=201, summary="Start a run of a conformance fixture")
async def create_run(
    api: Api, tenant: Tenant, body: Annotated[CreateRunRequest, Body()]
) -> dict[str, str]:
    fixture = body.workflow_id
    if fixture not in FIXTURES:
        raise ApiError(404, "not_found", "no such workflow: this host runs the fixtures it lists")
    runs = api.store.fixture_runs
    client = await api.temporal()  # unreachable: refused before the run is recorded
    run_id = await runs.create(tenant, fixture)
    try:
        await client.start_workflow(
            FIXTURE_RUN_WORKFLOW,
            FixtureRunInput(run_id=run_id, fixture=fixture),
            id=fixture_run_workflow_id(run_id),
            task_queue=api.settings.task_queue,
            execution_timeout=RUN_EXECUTION_TIMEOUT,
            static_summary=f"{fixture} run {run_id}",
        )
    except (RPCError, OSError) as error:
        await runs.finish(
            tenant,
            run_id,
            FixtureOutcome(
                status="failed",
                error={"error": "temporal_unavailable", "message": "the run could not start"},
            ),
        )
        raise ApiError(
            503, "temporal_unavailable", f"Temporal refused the start ({type(error).__name__})"
        ) from None
    return {"runId": run_id, "workflowId": fixture, "status": "running"}


@router.get("/v1/runs/{run_id}", summary="A run's status and variables")
async def read_run(api: Api, tenant: Tenant, run_id: str) -> dict[str, Any]:
    record = await api.store.fixture_runs.get(tenant, run_id)
    if record is None:
        raise not_found("run")
    answer: dict[str, Any] = {
        "runId": record.run_id,
        "workflowId": record.fixture,
        "status": record.status,
        "variables": await _resolved(api.store, record.variables),
        "createdAt": record.created_at.isoformat(),
        "updatedAt": record.updated_at.isoformat(),
    }
    if record.error is not None:
        answer["error"] = record.error
    return answer


@router.get("/v1/runs/{run_id}/events", summary="A run's event log (JSON)")
async def run_events(api: Api, tenant: Tenant, run_id: str) -> dict[str, Any]:
    events = await api.store.fixture_runs.events(tenant, run_id)
    if events is None:
        raise not_found("run")
    return {
        "events": [
            {"type": event.type, "payload": event.payload, "seq": n}
            for n, event in enumerate(events, start=1)
        ]
    }
