"""openwop runs of the conformance fixtures over HTTP (contract §4, §5): each fixture
the discovery document lists runs as a real FixtureRunWorkflow against the store and
leaves the variables the scenarios read; conformance-noop's write is attributed by a
``memory.written`` event; two tenants running the cross-tenant fixture on the same
owner ref see only their own entries (the v2 witness, driven over v1); another tenant's
run is a 404."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from schemas.fixture_runs import FIXTURES
from tests.conformance.conftest import Target, Wire
from tests.support.openwop_http import settled_run

REDACTED = re.compile(r"\[REDACTED:[^\]]+\]")


def _entry_shape(entry: dict[str, Any]) -> None:
    assert isinstance(entry["id"], str) and entry["id"]
    assert isinstance(entry["content"], str) and isinstance(entry["tags"], list)
    datetime.fromisoformat(entry["createdAt"].replace("Z", "+00:00"))


async def test_every_listed_fixture_runs_and_leaves_its_variables(target: Target) -> None:
    async with target.client() as public:
        # As the suite reads it: once, unauthenticated, with no OpenWOP-Version header.
        listed = await public.get("/.well-known/openwop")
    assert set(listed.json()["fixtures"]) >= set(FIXTURES)
    async with target.client(target.key_a) as http:
        runs = {fixture: await settled_run(http, fixture) for fixture in FIXTURES}
    assert {f: r["status"] for f, r in runs.items()} == dict.fromkeys(FIXTURES, "completed"), runs

    roundtrip = runs["conformance-agent-memory-roundtrip"]["variables"]["memoryReadback"]
    _entry_shape(roundtrip)

    redacted = runs["conformance-agent-memory-redaction"]["variables"]["memoryReadback"]
    _entry_shape(redacted)
    assert REDACTED.search(redacted["content"]) and "byok-" not in redacted["content"]

    ttl = runs["conformance-agent-memory-ttl"]["variables"]
    listed_ids = [e["id"] for e in ttl["memoryList"]]
    assert ttl["freshId"] in listed_ids and ttl["expiredId"] not in listed_ids
    now = datetime.now(UTC)
    assert all(
        datetime.fromisoformat(e["expiresAt"].replace("Z", "+00:00")) > now
        for e in ttl["memoryList"]
    )

    cti = runs["conformance-agent-memory-cross-tenant"]["variables"]
    assert cti["ownerEntryId"] in [e["id"] for e in cti["ownerProbe"]]
    assert cti["crossTenantProbe"] == []

    budget = runs["conformance-agent-memory-injection-budget"]["variables"]
    ids = [e["id"] for e in budget["budgetedEntries"]]
    assert budget["budgetedTokenTotal"] <= budget["tokenBudget"]
    assert budget["overBudgetEntryId"] not in ids and budget["overBudgetEntryOmitted"] is True
    assert REDACTED.search(budget["redactedContentSample"])
    assert budget["crossTenantBudgetedProbe"] == []
    assert budget["tokenCounter"] == "cl100k_base"
    if "semantic" in listed.json()["memory"]["search"].get("modes", []):
        # The same set, ranked by recency and by relevance to a crafted query: they differ.
        recency, relevance = budget["recencyOrder"], budget["relevanceOrder"]
        assert sorted(recency) == sorted(relevance) and recency != relevance
    else:  # without the semantic mode, no ranking may be fabricated
        assert "recencyOrder" not in budget and "relevanceOrder" not in budget


async def test_the_noop_runs_write_is_attributed_with_memory_written(target: Target) -> None:
    async with target.client(target.key_a) as http:
        run = await settled_run(http, "conformance-noop")
        events = (await http.get(f"/v1/runs/{run['runId']}/events")).json()["events"]
    written = [e for e in events if e["type"] == "memory.written"]
    assert len(written) == 1
    payload = written[0]["payload"]
    assert payload["memoryId"] and payload["memoryRef"] and payload["nodeId"]
    assert set(payload) <= {"memoryRef", "memoryId", "nodeId", "agentId", "tags"}


async def test_two_tenants_on_the_same_owner_ref_see_only_their_own(
    target: Target, wire: Wire
) -> None:
    """openwop.requirement.0004.memory-ref-one-tenant: the v2 witness (suite 2.45.3),
    and the same check over v1. Under v2 the run ids are tenant-bound, and the two
    tenants' segments differ (the witness's same-tenant detection)."""
    fixture = "conformance-agent-memory-cross-tenant"
    async with target.client(target.key_a, wire) as a:
        run_a = await settled_run(a, fixture, wire.runs)
    async with target.client(target.key_b, wire) as b:
        run_b = await settled_run(b, fixture, wire.runs)
    first, second = run_a["variables"], run_b["variables"]
    if wire.major == 2:
        segments = {run["runId"].partition("/")[0] for run in (run_a, run_b)}
        assert len(segments) == 2 and all("/" in run["runId"] for run in (run_a, run_b))
    assert first["ownerEntryId"] != second["ownerEntryId"]
    a_ids = {e["id"] for e in first["ownerProbe"]}
    b_ids = {e["id"] for e in second["ownerProbe"]}
    assert first["ownerEntryId"] not in b_ids and not a_ids & b_ids
    assert first["crossTenantProbe"] == second["crossTenantProbe"] == []


async def test_another_tenants_run_and_an_unknown_fixture_are_404(target: Target) -> None:
    async with target.client(target.key_a) as a:
        run = await settled_run(a, "conformance-noop")
        unknown = await a.post("/v1/runs", json={"workflowId": "no-such-fixture"})
        assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
        bad = await a.post("/v1/runs", json={"inputs": {}})
        assert bad.status_code == 422 and bad.json()["field"] == "workflowId"
    async with target.client(target.key_b) as b:
        for path in (f"/v1/runs/{run['runId']}", f"/v1/runs/{run['runId']}/events"):
            answer = await b.get(path)
            assert answer.status_code == 404 and run["runId"] not in answer.text
