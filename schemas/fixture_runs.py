"""openwop runs of the conformance fixtures (../shared/spec/openwop-host-sample-seams.md
§4): the fixture ids a host can run, the workflow's input and the activity's request and
result. Everything that reaches Temporal is ids and counts: what a fixture's node reads
back lands in the store's run record (memory/fixture_runs/), never in history.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import WireModel, WireResult
from schemas.registry import register

FIXTURE_RUN_WORKFLOW = "FixtureRunWorkflow"

NOOP = "conformance-noop"
ROUNDTRIP = "conformance-agent-memory-roundtrip"
CROSS_TENANT = "conformance-agent-memory-cross-tenant"
REDACTION = "conformance-agent-memory-redaction"
TTL = "conformance-agent-memory-ttl"
INJECTION_BUDGET = "conformance-agent-memory-injection-budget"
# Advertised in discovery's root ``fixtures``: each runs the memory subsystem for real.
FIXTURES: tuple[str, ...] = (NOOP, ROUNDTRIP, CROSS_TENANT, REDACTION, TTL, INJECTION_BUDGET)
FixtureId = Literal[
    "conformance-noop",
    "conformance-agent-memory-roundtrip",
    "conformance-agent-memory-cross-tenant",
    "conformance-agent-memory-redaction",
    "conformance-agent-memory-ttl",
    "conformance-agent-memory-injection-budget",
]
RunStatus = Literal["running", "completed", "failed", "cancelled"]
# GET /runs pages at most this many (discovery v2 runList.maxPageSize).
MAX_RUN_PAGE = 100
RunId = str


def fixture_run_workflow_id(run_id: str) -> str:
    return f"fixture-run/{run_id}"


class FixtureRunInput(WireModel):
    """FixtureRunWorkflow: run one fixture for the run ``runId`` recorded by the API."""

    run_id: RunId = Field(min_length=1, max_length=64, pattern=r"^run-[0-9a-f]{32}$")
    fixture: FixtureId


class RunFixtureRequest(FixtureRunInput):
    pass


class RunFixtureResult(WireResult):
    run_id: str
    status: RunStatus
    variables: int = Field(ge=0)
    events: int = Field(ge=0)
    # The failure's code when the fixture failed its own precondition (no text).
    error_code: str | None = None


register("workflow-fixture-run-input", FixtureRunInput)
