"""Proposals over HTTP, driven by the official openwop client (openwop-client 2.7: its
RFC 0249 proposal calls on the v2 surface) and by plain HTTP on /v1/proposals: list and
read with the artifact's digest, revise, an apply refused without the activation scope
(403) or with a stale digest (409), an apply that installs exactly the stored artifact,
reject with a reason and archive that install nothing, a second apply that installs
nothing more, a malformed artifact refused (422), and another tenant's id a 404."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from openwop_client import OpenwopClient, WopError
from openwop_client.types import ReviseProposalRequest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from activities.automation_schedules import installed_checksum
from api.app import create_app
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.workflow_ids import PLAIN
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import unique_ref
from tests.support.http_app import RunningApi, api_services, serving
from tests.support.proposals import installed, last_mondays, seed_routine


async def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


async def _proposals(
    engine: AsyncEngine, store: PostgresMemoryStore, tenant: str, api: RunningApi
) -> list[str]:
    """Two agents' weekly routines synthesized into two drafts of ``tenant``, whose
    automations would run on the test worker's task queue."""
    task_queue = api.services.settings.task_queue
    ids: list[str] = []
    for agent in ("agent-1", "agent-2"):
        ref = unique_ref(tenant, agent)
        await seed_routine(engine, ref, last_mondays(3))
        result = await store.proposals.synthesize(parse_memory_ref(ref), "run-1", task_queue)
        ids.extend(result.created)
    return ids


async def test_the_official_client_reviews_and_applies_a_proposal(
    running_api: RunningApi,
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    temporal_env: WorkflowEnvironment,
) -> None:
    tenant = f"t{uuid.uuid4().hex[:8]}"
    first, second = await _proposals(engine, store, tenant, running_api)
    reader = OpenwopClient(base_url=running_api.url, api_key=await running_api.key_for(tenant))
    created = await running_api.keys.create(tenant, "reviewer", scopes=["proposals:apply"])
    reviewer = OpenwopClient(base_url=running_api.url, api_key=created.key)

    listed = await _call(reader.proposals_list, state="draft")
    assert sorted(p.id for p in listed.items) == sorted([first, second])
    proposal = await _call(reader.proposals_get, first)
    assert proposal.kind == "automation" and proposal.artifactDigest.startswith("sha256:")
    revised = await _call(
        reader.proposals_revise, first, ReviseProposalRequest(title="Weekly report run")
    )
    assert revised.state == "revised" and revised.title == "Weekly report run"

    with pytest.raises(WopError) as refused:
        await _call(reader.proposals_apply, first, artifact_digest=revised.artifactDigest)
    assert refused.value.status == 403
    with pytest.raises(WopError) as stale:
        await _call(reviewer.proposals_apply, first, artifact_digest="sha256:" + "0" * 64)
    assert stale.value.status == 409
    schedule_id = PLAIN.automation(tenant, first)
    assert not await installed(temporal_env.client, schedule_id)

    applied = await _call(reviewer.proposals_apply, first, artifact_digest=revised.artifactDigest)
    assert applied.state == "applied" and applied.activation is not None
    assert await installed_checksum(temporal_env.client, schedule_id) == (
        revised.artifactDigest.removeprefix("sha256:")
    )
    again = await _call(reviewer.proposals_apply, first)
    assert again.state == "applied" and again.activation == applied.activation

    rejected = await _call(reader.proposals_reject, second, reason="we do this by hand")
    assert rejected.state == "rejected"
    with pytest.raises(WopError) as closed:
        await _call(reviewer.proposals_apply, second)
    assert closed.value.status == 409
    assert not await installed(temporal_env.client, PLAIN.automation(tenant, second))
    with pytest.raises(WopError) as terminal:
        await _call(reader.proposals_archive, first)
    assert terminal.value.status == 409
    await temporal_env.client.get_schedule_handle(schedule_id).delete()


async def test_v1_proposals_refuse_bad_artifacts_and_other_tenants(
    running_api: RunningApi, engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    tenant, other = (f"t{uuid.uuid4().hex[:8]}" for _ in range(2))
    first, second = await _proposals(engine, store, tenant, running_api)
    async with await running_api.client_for(tenant) as http:
        listed = (await http.get("/v1/proposals")).json()["proposals"]
        assert {p["id"] for p in listed} == {first, second}
        body = (await http.get(f"/v1/proposals/{first}")).json()
        bad = {**body["artifact"], "schedule": {**body["artifact"]["schedule"], "hour": 25}}
        refused = await http.patch(f"/v1/proposals/{first}", json={"artifact": bad})
        assert refused.status_code == 422 and refused.json()["field"] == "artifact.schedule.hour"
        foreign = {
            **body["artifact"],
            "action": {**body["artifact"]["action"], "input": {"memoryRef": f"mem://{other}/a"}},
        }
        crossing = await http.patch(f"/v1/proposals/{first}", json={"artifact": foreign})
        assert crossing.status_code == 422
        unchanged = (await http.get(f"/v1/proposals/{first}")).json()
        assert unchanged["state"] == "draft" and unchanged["artifact"] == body["artifact"]
        archived = await http.delete(f"/v1/proposals/{second}")
        assert archived.status_code == 200 and archived.json()["state"] == "archived"
        assert (await http.get("/v1/proposals", params={"state": "archived"})).json()["proposals"][
            0
        ]["id"] == second
    async with await running_api.client_for(other) as http:
        assert (await http.get(f"/v1/proposals/{first}")).status_code == 404
        assert (await http.post(f"/v1/proposals/{first}/reject", json={})).status_code == 404
        assert (await http.get("/v1/proposals")).json()["proposals"] == []


async def test_approval_gate_over_http_needs_a_reviewer_or_an_audited_override(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    vault: StaticSecretVault,
) -> None:
    services = api_services(
        engine,
        store,
        temporal_env.client,
        worker_task_queue,
        vault,
        AGENT_MEMORY_PROPOSAL_ACTIVATION="approval-gate",
        AGENT_MEMORY_PROPOSAL_APPROVAL_TIMEOUT_S=3600,
    )
    keys = ApiKeyStore(engine)
    tenant = f"t{uuid.uuid4().hex[:8]}"
    async with serving(create_app(services)) as url:
        api = RunningApi(url=url, services=services, keys=keys)
        granted_id, overridden_id = await _proposals(engine, store, tenant, api)
        author = await keys.create(tenant, "author")
        reviewer = await keys.create(tenant, "reviewer", scopes=["proposals:review"])
        # Holding the review scope does not let a key grant its own apply.
        self_reviewer = await keys.create(tenant, "self", scopes=["proposals:review"])
        overrider = await keys.create(tenant, "lead", scopes=["proposals:override"])

        def http(key: str) -> httpx.AsyncClient:
            return httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60)

        async with (
            http(author.key) as a,
            http(reviewer.key) as r,
            http(overrider.key) as o,
            http(self_reviewer.key) as own,
        ):
            discovery = (await a.get("/.well-known/openwop")).json()
            assert discovery["agents"]["proposals"]["activation"] == "approval-gate"
            # A key holding the review scope asks to apply: the gate opens.
            pending = await own.post(f"/v1/proposals/{granted_id}/apply", json={})
            assert pending.status_code == 202, pending.text
            assert pending.json()["approval"]["gate"] == "pending"
            schedule_id = PLAIN.automation(tenant, granted_id)
            assert not await installed(temporal_env.client, schedule_id)
            # A second apply while the gate is open is refused, nothing changes.
            again = await a.post(f"/v1/proposals/{granted_id}/apply", json={})
            assert again.status_code == 409, again.text
            # Without the review scope: 403. The key that asked: 422 (four eyes).
            refused = await a.post(
                f"/v1/proposals/{granted_id}/approval", json={"decision": "granted"}
            )
            assert refused.status_code == 403
            assert refused.json()["details"]["requiredScope"] == "proposals:review"
            own_grant = await own.post(
                f"/v1/proposals/{granted_id}/approval", json={"decision": "granted"}
            )
            assert own_grant.status_code == 422, own_grant.text
            assert not await installed(temporal_env.client, schedule_id)
            granted = await r.post(
                f"/v1/proposals/{granted_id}/approval", json={"decision": "granted"}
            )
            assert granted.status_code == 200, granted.text
            activation = granted.json()["activation"]
            assert activation["mode"] == "approval-gate" and not activation["overridden"]
            assert activation["approvalId"] == f"{granted_id}/approval-1"
            assert activation["activatedBy"] == f"key:{reviewer.record.key_id}"
            assert await installed_checksum(temporal_env.client, schedule_id) == (
                granted.json()["artifactDigest"].removeprefix("sha256:")
            )

            # An override needs its own scope, and is recorded as one.
            denied = await a.post(f"/v1/proposals/{overridden_id}/apply", json={"override": True})
            assert denied.status_code == 403
            forced = await o.post(f"/v1/proposals/{overridden_id}/apply", json={"override": True})
            assert forced.status_code == 200, forced.text
            assert forced.json()["activation"]["overridden"] is True
            assert forced.json()["activation"]["activatedBy"] == f"key:{overrider.record.key_id}"
            # v2: approval-gate's apply answers 202 {runId}; the proposal is applied already.
            v2 = await a.post(
                f"/proposals/{overridden_id}:apply", json={}, headers={"OpenWOP-Version": "2.0"}
            )
            assert v2.status_code == 200 and v2.json()["state"] == "applied"
    for proposal_id in (granted_id, overridden_id):
        await temporal_env.client.get_schedule_handle(
            PLAIN.automation(tenant, proposal_id)
        ).delete()
