"""The openwop run surface's wire shapes, one set for both majors (v1 ``/v1/runs...``,
v2 ``/runs...``; schemas/v2 run-snapshot, run-event, poll and list responses, all
closed). v1 readers take the fields they know (``runId``, ``status``, ``variables``,
``events[].type``/``payload``), so v1 and v2 differ only in the run id's form: v2's is
tenant-bound, ``<tenant>/<run id>`` (api/run_ids.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from schemas.base import WireModel
from schemas.registry import register

RunStatus = Literal["running", "completed", "failed", "cancelled"]
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
TERMINAL_EVENTS = frozenset({"run.completed", "run.failed", "run.cancelled"})


class Subject(WireModel):
    """Who started the run: an API key of the tenant (lane api-key, kind workload);
    ``subjectId`` is the key's public id, never its secret."""

    issuer: str = Field(min_length=1, pattern=r"^\S+$")
    subject_id: str = Field(min_length=1)
    tenant: str
    lane: Literal["api-key"] = "api-key"
    kind: Literal["workload"] = "workload"


class RunOwner(WireModel):
    tenant: str
    subject: Subject


class RunError(WireModel):
    code: str = Field(min_length=1)
    message: str = Field(min_length=1)


class RunSnapshot(WireModel):
    run_id: str
    workflow_id: str
    status: RunStatus
    owner: RunOwner
    event_log_schema_version: int = Field(ge=2)
    variables: dict[str, Any]
    started_at: str
    completed_at: str | None = None
    error: RunError | None = None


class RunEventDoc(WireModel):
    event_id: str = Field(min_length=16)
    run_id: str
    type: str
    payload: dict[str, Any]
    timestamp: str
    sequence: int = Field(ge=0)
    schema_version: int = Field(ge=1)


class RunEvents(WireModel):
    """The JSON representation of ``GET .../runs/{runId}/events`` (v1's ``{events}``)."""

    events: tuple[RunEventDoc, ...]


class CreateRunResponse(WireModel):
    run_id: str
    workflow_id: str
    status: RunStatus
    events_url: str
    status_url: str


class PollEventsResponse(WireModel):
    run_id: str
    events: tuple[RunEventDoc, ...]
    last_sequence: int = Field(ge=-1)
    status: RunStatus
    is_terminal: bool


class RunListResponse(WireModel):
    runs: tuple[RunSnapshot, ...]
    next_cursor: str | None = Field(default=None, min_length=1, max_length=2048)


class CancelRunResponse(WireModel):
    run_id: str
    status: Literal["cancelled"]


_EXPORTED: dict[str, type[WireModel]] = {
    "run-snapshot": RunSnapshot,
    "run-event": RunEventDoc,
    "run-events": RunEvents,
    "run-create-response": CreateRunResponse,
    "run-poll-response": PollEventsResponse,
    "run-list-response": RunListResponse,
    "run-cancel-response": CancelRunResponse,
}
for _name, _model in _EXPORTED.items():
    register(_name, _model)
