"""A tenant that requires confirmation, end to end on the dev server: inference records
proposals and starts nothing, nothing fires while they wait, and a confirmation through
`memoryctl commitments confirm` or ``POST /v1/host/commitments/{id}/confirm`` arms the
commitment, which then fires once; a cancelled proposal never arms. What inference read
is shown by the CLI and HTTP before anything fires."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.commitments import InferCommitmentsRequest, commitment_workflow_id
from schemas.memory_ref import parse_memory_ref
from tests.memoryctl.test_memoryctl_commitments import memoryctl
from tests.memoryctl.test_memoryctl_forget import ok
from tests.support.factories import note, unique_ref
from tests.support.http_app import RunningApi
from tests.support.waiting import eventually

TASK = "send the Ostrander lease to Marguerite"


def _said_five_days_ago(engine: AsyncEngine) -> PostgresMemoryStore:
    """Writes through it say "in 5 days" for an instant a second from now."""
    return PostgresMemoryStore(
        engine, clock=lambda: datetime.now(UTC) - timedelta(days=5) + timedelta(seconds=1)
    )


async def _workflow_exists(client: Client, commitment_id: str) -> bool:
    try:
        await client.get_workflow_handle(commitment_workflow_id(commitment_id)).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def _fired(store: PostgresMemoryStore, ref: str) -> list[dict[str, object]]:
    return [dict(e.payload) for e in await store.events(ref, types=["commitment.fired"])]


async def test_a_proposal_confirmed_with_memoryctl_fires_once_and_not_before(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    database_url: str,
) -> None:
    client = temporal_env.client
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    settings = ok(
        await asyncio.to_thread(
            memoryctl, "settings", "--tenant", tenant, "--require-confirmation", env=env
        )
    )
    assert "confirmation required" in settings
    text = f"Remind me in 5 days to {TASK}"
    await _said_five_days_ago(engine).put(ref, note(text))

    inferred = json.loads(
        ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, "--json", env=env))
    )
    assert (inferred["inference"]["created"], inferred["armed"]["started"]) == (1, 0)
    listed = ok(await asyncio.to_thread(memoryctl, "list", "--memory-ref", ref, "--json", env=env))
    (row,) = json.loads(listed)
    assert row["state"] == "proposed" and row["understood"].startswith("once ")
    assert text[row["reading"]["spanStart"] : row["reading"]["spanEnd"]] == "in 5 days"
    assert "Ostrander" not in listed  # a list is ids, instants and offsets
    cid = row["commitmentId"]
    shown = ok(await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, cid, env=env))
    assert "read: in 5 days" in shown

    # Due a second after it was said; waiting, it neither starts nor fires.
    await asyncio.sleep(2)
    assert not await _workflow_exists(client, cid)
    assert await _fired(store, ref) == []

    confirmed = ok(await asyncio.to_thread(memoryctl, "confirm", "--memory-ref", ref, cid, env=env))
    # Armed and started; due already, it may have fired by the time the CLI reads it back.
    assert f"{cid}: armed" in confirmed or f"{cid}: fired" in confirmed

    async def fired_once() -> bool:
        return len(await _fired(store, ref)) == 1

    await eventually(fired_once, seconds=30)
    (fired,) = await _fired(store, ref)
    assert fired["commitmentId"] == cid
    # The Temporal UI's summary of the run: what was understood, ids and offsets, no text.
    handle = client.get_workflow_handle(commitment_workflow_id(cid))
    summary = await (await handle.describe()).static_summary()
    start, end = row["reading"]["spanStart"], row["reading"]["spanEnd"]
    assert summary == (
        f"time commitment of {ref}, entry {row['memoryId']} [{start}:{end}]: {row['understood']}"
    )
    # Confirming what is no longer proposed is refused with a non-zero exit.
    again = await asyncio.to_thread(memoryctl, "confirm", "--memory-ref", ref, cid, env=env)
    assert again.returncode != 0 and "only a proposed one is confirmed" in again.stderr


async def test_proposals_confirmed_and_cancelled_over_http(
    temporal_env: WorkflowEnvironment,
    running_api: RunningApi,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    said = _said_five_days_ago(engine)
    await said.put(ref, note(f"Remind me in 5 days to {TASK}"))
    await said.put(ref, note("Follow up when the contract is signed"))
    async with await running_api.client_for(tenant) as http:
        put = await http.put(
            "/v1/host/commitment-settings", json={"requireConfirmation": True, "dateOrder": "DMY"}
        )
        assert put.status_code == 200, put.text
        assert put.json() == {
            "tenant": tenant,
            "timeZone": "UTC",
            "requireConfirmation": True,
            "dateOrder": "DMY",
            "nextWeekday": "refuse-when-ambiguous",
        }
        bad = await http.put("/v1/host/commitment-settings", json={"dateOrder": "DM"})
        assert bad.status_code == 422 and "dateOrder" in bad.text

        await store.commitments.infer(InferCommitmentsRequest(memory_ref=parse_memory_ref(ref)))
        listed = await http.get(
            "/v1/host/commitments", params={"memoryRef": ref, "state": "proposed"}
        )
        assert listed.status_code == 200, listed.text
        by_condition = {c["condition"]: c for c in listed.json()["commitments"]}
        assert set(by_condition) == {"time", "predicate"}
        timed, watched = by_condition["time"], by_condition["predicate"]

        shown = await http.get(
            f"/v1/host/commitments/{timed['commitmentId']}", params={"memoryRef": ref}
        )
        assert shown.status_code == 200 and shown.json()["readText"] == "in 5 days"

        cancel = await http.post(
            f"/v1/host/commitments/{watched['commitmentId']}/cancel", params={"memoryRef": ref}
        )
        assert cancel.status_code == 200 and cancel.json()["state"] == "cancelled"
        confirm = await http.post(
            f"/v1/host/commitments/{timed['commitmentId']}/confirm", params={"memoryRef": ref}
        )
        assert confirm.status_code == 200, confirm.text
        assert confirm.json()["state"] in ("armed", "fired") and confirm.json()["workflowId"]

        async def fired_once() -> bool:
            return len(await _fired(store, ref)) == 1

        await eventually(fired_once, seconds=30)
        refused = await http.post(
            f"/v1/host/commitments/{watched['commitmentId']}/confirm", params={"memoryRef": ref}
        )
        assert refused.status_code == 409
        malformed = await http.post("/v1/host/commitments/nope/cancel", params={"memoryRef": ref})
        assert malformed.status_code == 422 and malformed.json()["field"] == "commitmentId"

    # Another tenant's key finds nothing there (CTI-1).
    async with await running_api.client_for("someone-else") as other:
        hidden = await other.get(
            f"/v1/host/commitments/{timed['commitmentId']}", params={"memoryRef": ref}
        )
        assert hidden.status_code == 404
    assert not await _workflow_exists(temporal_env.client, watched["commitmentId"])
    (fired,) = await _fired(store, ref)
    assert fired["commitmentId"] == timed["commitmentId"]
