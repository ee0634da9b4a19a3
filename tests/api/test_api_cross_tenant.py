"""CTI-1 at the HTTP edge: a probe table of generated requests, tenant A's ids, refs and
look-alikes issued with tenant B's key over every route. Each answer is a 404 (or an
empty list, or B's own data: a memoryRef naming A resolves within B's tenant, or a 4xx
for a malformed ref), never a 5xx, and none carries anything of A; A's rows are
byte-for-byte unchanged afterwards."""

from __future__ import annotations

import hashlib
import itertools
import uuid

import pytest
from sqlalchemy import select

from memory.storage import tables
from tests.support.factories import SECRET_CANARIES

pytestmark = pytest.mark.slow

ALLOWED = {200, 201, 404, 422, 428}


async def _a_rows(engine, tenant: str) -> str:
    ENTRIES = tables.entries
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                select(
                    ENTRIES.c.memory_ref,
                    ENTRIES.c.id,
                    ENTRIES.c.version,
                    ENTRIES.c.content_sha256,
                    ENTRIES.c.tags,
                )
                .where(ENTRIES.c.tenant == tenant)
                .order_by(ENTRIES.c.memory_ref, ENTRIES.c.id)
            )
        ).all()
    return hashlib.sha256(repr(rows).encode()).hexdigest() + f"/{len(rows)}"


async def test_a_thousand_cross_tenant_probes_find_nothing_of_the_other_tenant(
    running_api, engine
) -> None:
    a_tenant = "acme" + uuid.uuid4().hex[:6]
    b_tenant = "beta" + uuid.uuid4().hex[:6]
    canaries = [f"A-CANARY-{i}-{uuid.uuid4().hex[:6]}" for i in range(12)]
    SECRET_CANARIES.update(canaries)  # none may reach a workflow history either
    a_ids: list[str] = []
    async with await running_api.client_for(a_tenant) as a:
        for i, canary in enumerate(canaries):
            response = await a.post(
                "/api/v1/memory",
                json={
                    "namespace": "private",
                    "key": f"k{i}",
                    "value": {"note": canary},
                    "memory_type": ["working", "episodic", "semantic"][i % 3],
                    "tags": ["a-only"],
                },
                headers={"X-Agent-ID": "a1" if i % 2 else "a2"},
            )
            assert response.status_code == 201, response.text
            a_ids.append(response.json()["id"])
        assert (await a.put("/v1/agents/researcher", json={"memoryShape": {}})).status_code == 200
        fired = await a.post(
            "/v1/host/sample/commitment/fire",
            json={
                "memoryRef": f"mem://{a_tenant}/a1",
                "intention": f"Call {canaries[0]} when the invoice is paid",
            },
        )
        assert fired.status_code == 200, fired.text
        a_ids.append(fired.json()["commitmentId"])
        a_ids.append(fired.json()["event"]["memoryId"])
    before = await _a_rows(engine, a_tenant)

    agents = ["a1", "a2", "researcher", "nobody", "A1", "a1.x", "a1-"]
    refs = [f"mem://{a_tenant}/{agent}" for agent in agents] + [
        f"mem://{a_tenant.upper()}/a1",
        f"mem://{a_tenant}./a1",
        f"mem://{a_tenant}/a1/",
        f"mem://{a_tenant}/a1/scope",
        f"mem://{a_tenant}x/a1",
        f"mem://{a_tenant[:-1]}/a1",
        f"mem://{a_tenant}%2Fa1",
        f"mem://{b_tenant}/../{a_tenant}/a1",
        f"mem:/{a_tenant}/a1",
        f" mem://{a_tenant}/a1",
    ]
    ids = [
        *a_ids,
        *(entry_id.upper() for entry_id in a_ids[:6]),
        a_ids[0] + "x",
        a_ids[0][:-1],
        "../" + a_ids[0],
        "%00" + a_ids[0],
    ]
    probes: list[tuple[str, str, dict, dict | None]] = []
    for entry_id, agent in itertools.product(ids, agents):
        for how in ({"params": f"?agent_id={agent}"}, {"header": agent}):
            query = how.get("params", "")
            headers = {"X-Agent-ID": how["header"]} if "header" in how else {}
            probes += [
                ("GET", f"/api/v1/memory/{entry_id}{query}", headers, None),
                (
                    "PATCH",
                    f"/api/v1/memory/{entry_id}{query}",
                    {**headers, "If-Match": "1"},
                    {"value": {"overwritten": True}, "pinned": True},
                ),
                ("DELETE", f"/api/v1/memory/{entry_id}{query}", headers, None),
            ]
    for agent in agents:
        probes += [
            ("GET", f"/api/v1/memory?agent_id={agent}", {}, None),
            ("GET", f"/api/v1/memory?agent_id={agent}&tags=a-only", {}, None),
            ("GET", f"/api/v1/memory?agent_id={agent}&namespace=private", {}, None),
            ("GET", f"/api/v1/agents/{agent}/memory", {}, None),
            ("GET", f"/api/v1/agents/{agent}/memory?namespace=priv*", {}, None),
            ("GET", f"/api/v1/memory/events?agent_id={agent}", {}, None),
            ("GET", "/v1/agents", {}, None),
        ]
    for ref in refs:
        probes.append(("GET", f"/v1/host/memory/events?memoryRef={ref}", {}, None))
    # A's canonical ref, a look-alike and a traversal through every seam. A ref naming
    # A resolves to an empty memory of B's own (api/tenancy.py), so each of these runs
    # real workflows over B's data: a few refs show it, the read above covers them all.
    for ref in (refs[0], refs[len(agents)], refs[len(agents) + 6], refs[len(agents) + 7]):
        probes += [
            ("POST", "/v1/host/sample/memory/distill", {}, {"memoryRef": ref, "tokenBudget": 4000}),
            ("POST", "/v1/host/sample/memory/distill", {}, {"memoryRef": ref, "sources": ["x"]}),
            ("POST", "/v1/host/sample/memory/consolidate", {}, {"memoryRef": ref}),
            ("POST", "/v1/host/sample/commitment/fire", {}, {"memoryRef": ref}),
        ]
    assert len(probes) >= 1000, len(probes)

    forbidden = [*canaries, *a_ids, a_tenant, "a-only", "private"]
    statuses: dict[int, int] = {}
    async with await running_api.client_for(b_tenant) as b:
        for method, path, headers, body in probes:
            response = await b.request(method, path, headers=headers, json=body)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code in ALLOWED, (method, path, response.status_code)
            leaked = [word for word in forbidden if word in response.text]
            assert not leaked, (method, path, leaked)
        # B's own view after the table: only B's, the buckets the seam probes wrote to.
        agents_of_b = (await b.get("/v1/agents")).json()["agents"]
        assert agents_of_b and all(
            a["memoryRef"].startswith(f"mem://{b_tenant}/o-") for a in agents_of_b
        ), agents_of_b
    assert statuses.get(404, 0) > 500, statuses
    assert await _a_rows(engine, a_tenant) == before
    async with await running_api.client_for(a_tenant) as a:
        for entry_id in a_ids[:12]:
            agent = "a1" if a_ids.index(entry_id) % 2 else "a2"
            got = await a.get(f"/api/v1/memory/{entry_id}", headers={"X-Agent-ID": agent})
            assert got.status_code == 200 and got.json()["version"] == 1
