"""The two openwop majors on one host (openwop v2 versioning.md §1, capabilities.md):
discovery answers in the major the ``OpenWOP-Version`` header asks for (v1 without
one), the v2 document is the closed v2 root with family records and no ``supported``
anywhere, every protocol answer names its major, a major the host does not serve is 406
and a path of the other major is 400; v2 run ids are tenant-bound and travel projected
or percent-encoded; v2 errors are the closed v2 envelope with registered codes."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

from schemas.discovery_v2 import DiscoveryDocumentV2
from schemas.fixture_runs import FIXTURES
from tests.conformance.conftest import V1, V2, Target
from tests.support.openwop_http import settled_run

FAMILY_RECORD = {"status", "since", "witness"}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in _keys(item)}
    if isinstance(value, list):
        return {k for item in value for k in _keys(item)}
    return set()


async def test_discovery_answers_in_the_major_the_header_asks_for(target: Target) -> None:
    async with target.client() as public:
        plain = await public.get("/.well-known/openwop")
        v2 = await public.get("/.well-known/openwop", headers={"OpenWOP-Version": "2.0"})
        bare_two = await public.get("/.well-known/openwop", headers={"OpenWOP-Version": "2"})
    assert plain.headers["OpenWOP-Version"] == "1.0"
    assert plain.json()["memory"]["supported"] is True  # the v1 representation
    assert plain.json()["preferredVersion"] == "1.0"
    assert v2.headers["OpenWOP-Version"] == bare_two.headers["OpenWOP-Version"] == "2.0"
    document = v2.json()
    assert document == bare_two.json() | {"extensions": document["extensions"]}
    DiscoveryDocumentV2.model_validate(document)  # closed root, closed records
    assert "supported" not in _keys(document)  # presence is the claim in v2
    assert "2.0" in document["protocolVersions"]
    assert document["preferredVersion"] in document["protocolVersions"]
    for family in ("memory", "agents", "runList"):
        record = document[family]
        assert set(record) >= FAMILY_RECORD and record["since"] in document["protocolVersions"]
    memory, agents = document["memory"], document["agents"]
    assert memory["attribution"] == {"emitsWriteEvents": True}
    assert memory["injectionBudget"] == {"tokenCounter": "cl100k_base"}
    assert agents["memoryBackends"] == ["long-term"]
    assert set(agents["commitments"]["fireConditions"]) == {"time", "predicate"}
    assert "memoryConsolidation" in agents
    # The fixture list is in both representations (the v2 witness reads the header-less).
    assert set(plain.json()["fixtures"]) >= set(FIXTURES) <= set(document["fixtures"])


async def test_unserved_majors_and_crossed_paths_are_refused(target: Target) -> None:
    async with target.client(target.key_a) as http:
        unserved = await http.get("/.well-known/openwop", headers={"OpenWOP-Version": "3.0"})
        garbled = await http.get("/runs", headers={"OpenWOP-Version": "two"})
        v1_path = await http.get("/v1/runs/x", headers={"OpenWOP-Version": "2.0"})
        v2_path = await http.get("/runs/x", headers={"OpenWOP-Version": "1.0"})
    assert unserved.status_code == 406
    assert unserved.json()["error"] == "protocol_version_unsupported"
    assert unserved.json()["details"]["protocolVersions"] == ["1.0", "2.0"]
    assert garbled.status_code == 400 and garbled.json()["details"]["field"] == "OpenWOP-Version"
    for crossed in (v1_path, v2_path):
        assert crossed.status_code == 400, crossed.text
        assert crossed.json()["error"] == "protocol_version_mismatch"
    assert v1_path.headers["OpenWOP-Version"] == "1.0"
    assert v2_path.headers["OpenWOP-Version"] == "2.0"


async def test_v2_errors_are_the_closed_envelope_with_registered_codes(target: Target) -> None:
    async with target.client(target.key_a, V2) as http:
        missing = await http.post("/runs", json={"inputs": {}})
        unknown = await http.get(f"/runs/{quote('x/run-' + '0' * 32, safe='')}")
    async with target.client(None, V2) as anonymous:
        unsigned = await anonymous.get("/runs")
    assert missing.status_code == 400
    assert missing.json()["error"] == "validation_error"
    assert missing.json()["details"]["field"] == "workflowId"
    assert unknown.status_code == 403 and unknown.json()["error"] == "id_tenant_mismatch"
    assert unsigned.status_code == 401 and unsigned.json()["error"] == "unauthenticated"
    for answer in (missing, unknown, unsigned):
        assert set(answer.json()) <= {"error", "message", "details"}
        assert answer.headers["OpenWOP-Version"] == "2.0"


async def test_a_v2_run_id_is_tenant_bound_and_read_in_every_form(target: Target) -> None:
    async with target.client(target.key_a, V2) as http:
        run = await settled_run(http, "conformance-noop", V2.runs)
        tenant, _, bare = run["runId"].partition("/")
        assert tenant and bare.startswith("run-")
        forms = [f"{tenant}~2F{bare}", f"{tenant}%2F{bare}", bare]
        reads = [(await http.get(f"/runs/{form}")).json() for form in forms]
        bad = await http.get(f"/runs/{tenant}~ZZ{bare}")
        events = (await http.get(f"/runs/{tenant}~2F{bare}/events")).json()["events"]
    assert {read["runId"] for read in reads} == {run["runId"]}
    assert bad.status_code == 400
    assert [e["sequence"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "run.started" and events[-1]["type"] == "run.completed"
    assert all(e["runId"] == run["runId"] and len(e["eventId"]) >= 16 for e in events)
    # The same run over v1 has its bare id, and the other tenant cannot read it either way.
    async with target.client(target.key_a, V1) as http:
        assert (await http.get(f"/v1/runs/{bare}")).json()["runId"] == bare
    async with target.client(target.key_b, V2) as other:
        bound = await other.get(f"/runs/{tenant}~2F{bare}")
        unbound = await other.get(f"/runs/{bare}")
    assert bound.status_code == 403 and unbound.status_code == 404
    assert bare not in bound.text + unbound.text


async def test_the_snapshot_names_its_owner_and_the_poll_waits_for_the_end(
    target: Target,
) -> None:
    async with target.client(target.key_a, V2) as http:
        created = await http.post("/runs", json={"workflowId": "conformance-noop"})
        assert created.status_code == 201
        body = created.json()
        polled = await http.get(body["eventsUrl"] + "/poll", params={"timeout": 10})
        status = (await http.get(body["statusUrl"])).json()
        while not polled.json()["isTerminal"]:
            after = polled.json()["lastSequence"]
            polled = await http.get(
                body["eventsUrl"] + "/poll", params={"afterSequence": after, "timeout": 10}
            )
        snapshot = (await http.get(body["statusUrl"])).json()
    assert status["owner"]["subject"]["lane"] == "api-key"
    assert snapshot["owner"]["tenant"] == snapshot["owner"]["subject"]["tenant"]
    assert snapshot["eventLogSchemaVersion"] == 3 and snapshot["status"] == "completed"
    assert polled.json()["lastSequence"] >= 1


async def test_runs_list_pages_newest_first_with_a_cursor(target: Target) -> None:
    async with target.client(target.key_a, V2) as http:
        for _ in range(3):
            await settled_run(http, "conformance-noop", V2.runs)
        first = (await http.get("/runs", params={"limit": 2})).json()
        second = await http.get("/runs", params={"limit": 2, "cursor": first["nextCursor"]})
        forged = await http.get("/runs", params={"cursor": "not-a-cursor"})
        filtered = (await http.get("/runs", params={"workflowId": "no-such"})).json()
    ids = [run["runId"] for run in first["runs"]] + [r["runId"] for r in second.json()["runs"]]
    assert len(first["runs"]) == 2 and len(set(ids)) == len(ids) >= 3
    started = [run["startedAt"] for run in first["runs"] + second.json()["runs"]]
    assert started == sorted(started, reverse=True)
    assert forged.status_code == 400 and forged.json()["details"]["field"] == "cursor"
    assert filtered == {"runs": []}


async def test_the_sse_stream_ends_after_the_terminal_event(target: Target) -> None:
    async with target.client(target.key_a, V2) as http:
        run = await settled_run(http, "conformance-noop", V2.runs)
        path = f"/runs/{quote(run['runId'], safe='')}/events"
        stream = await http.get(path, headers={"Accept": "text/event-stream"})
        resumed = await http.get(
            path, headers={"Accept": "text/event-stream", "Last-Event-ID": "0"}
        )
        bad_mode = await http.get(
            path, params={"streamMode": "values"}, headers={"Accept": "text/event-stream"}
        )
    assert stream.headers["content-type"].startswith("text/event-stream")
    frames = [f for f in stream.text.split("\n\n") if f.strip()]
    assert frames[0].startswith("id: 0\nevent: run.started\ndata: {")
    assert "event: run.completed" in frames[-1]
    assert not resumed.text.startswith("id: 0")  # resumes after the given sequence
    assert bad_mode.status_code == 400
    assert bad_mode.json()["details"]["supported"] == ["updates"]


async def test_run_list_filters_and_cursors_that_could_not_be_issued_are_refused(
    target: Target,
) -> None:
    """Found by the HTTP fuzz: a NUL in workflowId reached PostgreSQL (a 503)."""
    forged = base64.urlsafe_b64encode(json.dumps(["2026-01-01T00:00:00", "x\u0000"]).encode())
    async with target.client(target.key_a, V2) as http:
        nul = await http.get("/runs", params={"workflowId": "conformance-noop\u0000"})
        naive = await http.get("/runs", params={"cursor": forged.decode().rstrip("=")})
    assert nul.status_code == 400 and nul.json()["details"]["field"] == "workflowId"
    assert naive.status_code == 400 and naive.json()["details"]["field"] == "cursor"
