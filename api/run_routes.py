"""openwop runs of the conformance fixtures (../shared/spec/openwop-host-sample-seams.md
§4.1, openwop v2 runs.md and events.md), one set of handlers mounted on both majors:
``/v1/runs...`` (v1) and ``/runs...`` (v2, api/wire_version.py). The shapes are the same
(schemas/run_wire.py); the run id's form follows the major (api/run_ids.py).

``POST`` records the run under the key's tenant and starts its FixtureRunWorkflow. A
read resolves every entry a variable names through the store now (MemoryAdapter.get),
so an entry forgotten or expired since reads as null. Another tenant's run reads as a
missing one (404); a v2 id bound to another tenant is 403 ``id_tenant_mismatch``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field
from temporalio.service import RPCError

from api.auth import Api, CallerIdentity, Tenant
from api.errors import ApiError, not_found
from api.run_event_stream import RunLog, event_doc, sse_stream, wait_for_events
from api.run_ids import bare_run_id, run_path, wire_run_id
from api.wire_version import wire_major
from memory.fixture_runs.records import FixtureOutcome, RunEvent, RunRecord, possible_run_id
from memory.store import PostgresMemoryStore
from schemas.base import WireModel, format_instant
from schemas.fixture_runs import (
    FIXTURE_RUN_WORKFLOW,
    FIXTURES,
    MAX_RUN_PAGE,
    FixtureRunInput,
    fixture_run_workflow_id,
)
from schemas.run_wire import (
    TERMINAL_STATUSES,
    CancelRunResponse,
    CreateRunResponse,
    PollEventsResponse,
    RunError,
    RunEvents,
    RunListResponse,
    RunOwner,
    RunSnapshot,
    Subject,
)

router = APIRouter(tags=["openwop runs"])
WIRE: dict[str, Any] = {"response_model_by_alias": True, "response_model_exclude_none": True}

# A fixture's run takes well under a second; this bounds a stuck one.
RUN_EXECUTION_TIMEOUT = timedelta(minutes=15)
ISSUER = "urn:agent-memory-temporal:api-keys"
EVENT_LOG_SCHEMA_VERSION = 3


class CreateRunRequest(WireModel):
    workflow_id: Annotated[str, Field(min_length=1, max_length=200)]
    inputs: dict[str, Any] | None = None


class CancelRunRequest(WireModel):
    reason: Annotated[str | None, Field(max_length=1024)] = None


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


async def _snapshot(api: Api, major: int | None, record: RunRecord) -> RunSnapshot:
    legacy = record.subject_id is None  # a run recorded before runs kept their key
    error = record.error or None
    return RunSnapshot(
        run_id=wire_run_id(major, record.tenant, record.run_id),
        workflow_id=record.fixture,
        status=record.status,  # the table's CHECK holds it to RunStatus
        owner=RunOwner(
            tenant=record.tenant,
            subject=Subject(
                issuer="urn:openwop:legacy" if legacy else ISSUER,
                subject_id=record.subject_id or "unknown",
                tenant=record.tenant,
            ),
        ),
        event_log_schema_version=EVENT_LOG_SCHEMA_VERSION,
        variables=await _resolved(api.store, record.variables),
        started_at=format_instant(record.created_at),
        completed_at=format_instant(record.updated_at)
        if record.status in TERMINAL_STATUSES
        else None,
        error=RunError(code=error["error"], message=error["message"]) if error else None,
    )


async def _owned(api: Api, tenant: str, raw_run_id: str) -> RunRecord:
    record = await api.store.fixture_runs.get(tenant, bare_run_id(raw_run_id, tenant))
    if record is None:
        raise not_found("run")
    return record


async def _log(api: Api, tenant: str, request: Request, raw_run_id: str) -> RunLog:
    record = await _owned(api, tenant, raw_run_id)
    wire_id = wire_run_id(wire_major(request), tenant, record.run_id)
    return RunLog(api.store.fixture_runs, tenant, record.run_id, wire_id)


@router.post(
    "/runs",
    status_code=201,
    response_model=CreateRunResponse,
    **WIRE,
    summary="Start a run of a conformance fixture",
)
async def create_run(
    api: Api, who: CallerIdentity, request: Request, body: Annotated[CreateRunRequest, Body()]
) -> CreateRunResponse:
    fixture, tenant = body.workflow_id, who.tenant
    if fixture not in FIXTURES:
        raise ApiError(404, "not_found", "no such workflow: this host runs the fixtures it lists")
    runs = api.store.fixture_runs
    client = await api.temporal()  # unreachable: refused before the run is recorded
    run_id = await runs.create(tenant, fixture, who.key_id)
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
        failure = {"error": "temporal_unavailable", "message": "the run could not start"}
        outcome = FixtureOutcome(
            status="failed",
            error=failure,
            events=[RunEvent("run.failed", {"runId": run_id, "status": "failed"})],
        )
        await runs.finish(tenant, run_id, outcome)
        raise ApiError(
            503, "temporal_unavailable", f"Temporal refused the start ({type(error).__name__})"
        ) from None
    major = wire_major(request)
    status_url = run_path(major, tenant, run_id)
    return CreateRunResponse(
        run_id=wire_run_id(major, tenant, run_id),
        workflow_id=fixture,
        status="running",
        events_url=f"{status_url}/events",
        status_url=status_url,
    )


def _cursor(record: RunRecord) -> str:
    raw = json.dumps([record.created_at.isoformat(), record.run_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(cursor: str) -> tuple[datetime, str]:
    refused = ApiError(
        400, "validation_error", "cursor: not a cursor this host issued", field="cursor"
    )
    try:
        at, run_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        instant = datetime.fromisoformat(at)
    except (ValueError, TypeError, binascii.Error):
        raise refused from None
    # Decoded from the client: only a real run id and an aware instant reach the query.
    if not isinstance(run_id, str) or not possible_run_id(run_id) or instant.tzinfo is None:
        raise refused
    return instant, run_id


@router.get(
    "/runs",
    response_model=RunListResponse,
    **WIRE,
    summary="The caller's runs, newest first (openwop RFC 0182)",
)
async def list_runs(
    api: Api,
    tenant: Tenant,
    request: Request,
    limit: Annotated[int, Query(ge=1)] = 20,
    cursor: Annotated[str | None, Query(min_length=1, max_length=2048)] = None,
    workflow_id: Annotated[
        str | None, Query(alias="workflowId", pattern=r"^[A-Za-z0-9._~:-]{1,128}$")
    ] = None,
    status: Annotated[str | None, Query(pattern="^(running|completed|failed|cancelled)$")] = None,
) -> RunListResponse:
    size = min(limit, MAX_RUN_PAGE)  # clamped to the advertised maxPageSize
    found = await api.store.fixture_runs.page(
        tenant,
        limit=size + 1,
        after=_after(cursor) if cursor else None,
        fixture=workflow_id,
        status=status,
    )
    major = wire_major(request)
    shown = found[:size]
    return RunListResponse(
        runs=tuple([await _snapshot(api, major, record) for record in shown]),
        next_cursor=_cursor(shown[-1]) if len(found) > size else None,
    )


@router.get(
    "/runs/{run_id:path}/events/poll",
    response_model=PollEventsResponse,
    **WIRE,
    summary="A run's events after a sequence, waiting up to timeout seconds (long poll)",
)
async def poll_run_events(
    api: Api,
    tenant: Tenant,
    request: Request,
    run_id: str,
    after_sequence: Annotated[int | None, Query(alias="afterSequence", ge=0, le=2**31 - 1)] = None,
    wait_s: Annotated[int, Query(alias="timeout", ge=1, le=60)] = 30,
) -> PollEventsResponse:
    log = await _log(api, tenant, request, run_id)
    after = -1 if after_sequence is None else after_sequence
    everything, status = await wait_for_events(log, after, wait_s)
    return PollEventsResponse(
        run_id=log.wire_run_id,
        events=tuple(
            event_doc(log.wire_run_id, log.run_id, e) for e in everything if e.sequence > after
        ),
        last_sequence=everything[-1].sequence if everything else -1,
        status=status,
        is_terminal=status in TERMINAL_STATUSES,
    )


@router.get(
    "/runs/{run_id:path}/events",
    response_model=RunEvents,
    **WIRE,
    summary="A run's event log: JSON, or SSE with Accept: text/event-stream",
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    api: Api,
    tenant: Tenant,
    request: Request,
    run_id: str,
    stream_mode: Annotated[str | None, Query(alias="streamMode", max_length=64)] = None,
    buffer_ms: Annotated[int | None, Query(alias="bufferMs", ge=0, le=5000)] = None,
    resumable: Annotated[bool | None, Query()] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> Any:
    log = await _log(api, tenant, request, run_id)
    if "text/event-stream" not in request.headers.get("accept", ""):
        events = await log.after(-1)
        return RunEvents(events=tuple(event_doc(log.wire_run_id, log.run_id, e) for e in events))
    if stream_mode not in (None, "updates"):
        raise ApiError(
            400,
            "unsupported_stream_mode",
            "streamMode: this host streams updates",
            field="streamMode",
            supported=["updates"],
        )
    after = -1
    if last_event_id is not None:
        if not last_event_id.isdigit():
            raise ApiError(
                400, "validation_error", "Last-Event-ID: a sequence", field="Last-Event-ID"
            )
        after = int(last_event_id)
    return StreamingResponse(
        sse_stream(log, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "Vary": "Accept, OpenWOP-Version"},
    )


@router.post(
    "/runs/{run_id:path}/cancel",
    response_model=CancelRunResponse,
    **WIRE,
    summary="Cancel a running run (a finished one is 409 run_terminal)",
)
async def cancel_run(
    api: Api,
    tenant: Tenant,
    request: Request,
    run_id: str,
    body: Annotated[CancelRunRequest | None, Body()] = None,
) -> CancelRunResponse:
    bare = bare_run_id(run_id, tenant)
    cancelled = await api.store.fixture_runs.cancel(tenant, bare)
    if cancelled is None:
        raise not_found("run")
    if not cancelled:
        raise ApiError(409, "run_terminal", "the run already ended")
    client = await api.temporal()
    # A workflow already closed refuses the cancel: the store's record is the run's
    # outcome either way.
    with contextlib.suppress(RPCError):
        await client.get_workflow_handle(fixture_run_workflow_id(bare)).cancel()
    wire_id = wire_run_id(wire_major(request), tenant, bare)
    return CancelRunResponse(run_id=wire_id, status="cancelled")


@router.get(
    "/runs/{run_id:path}",
    response_model=RunSnapshot,
    **WIRE,
    summary="A run's status and variables",
)
async def read_run(api: Api, tenant: Tenant, request: Request, run_id: str) -> RunSnapshot:
    return await _snapshot(api, wire_major(request), await _owned(api, tenant, run_id))
