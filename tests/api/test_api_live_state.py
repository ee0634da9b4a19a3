"""Discovery and the inventory are computed from the real state: a task queue nobody
polls and an unreachable database each show, and the RFC 0080 §C degraded projection
stamps exactly the unmet dimensions (and nothing when satisfied)."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy.engine import make_url

from api.app import create_app
from memory.storage.engines import create_engine
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from tests.support.http_app import api_services, serving
from tests.support.tcp_proxy import CuttableProxy

pytestmark = pytest.mark.slow

SHAPE = {"memoryShape": {"scratchpad": True, "longTerm": True}}


async def test_a_satisfied_agent_carries_no_degraded_fields(running_api) -> None:
    tenant = "t" + uuid.uuid4().hex[:10]
    async with await running_api.client_for(tenant) as http:
        registered = await http.put("/v1/agents/researcher", json=SHAPE)
        assert registered.status_code == 200, registered.text
        await http.post(
            "/api/v1/memory",
            json={"namespace": "n", "key": "k", "value": {}},
            headers={"X-Agent-ID": "writer"},
        )
        agents = (await http.get("/v1/agents")).json()["agents"]
    by_id = {a["agentId"]: a for a in agents}
    assert set(by_id) == {"researcher", "writer"}
    assert by_id["researcher"]["memoryShape"] == {
        "scratchpad": True,
        "conversation": False,
        "longTerm": True,
    }
    for agent in agents:
        assert "memoryDegraded" not in agent and "degradedMemoryDimensions" not in agent


async def test_no_worker_on_the_task_queue_turns_off_what_needs_one(
    engine, store, temporal_env, vault
) -> None:
    nobody = f"nobody-polls-{uuid.uuid4().hex[:8]}"
    services = api_services(engine, store, temporal_env.client, nobody, vault)
    async with serving(create_app(services)) as url, httpx.AsyncClient(base_url=url) as http:
        doc = (await http.get("/.well-known/openwop")).json()
    assert doc["memory"]["supported"] is True  # the store is up
    assert doc["memory"]["distillation"]["supported"] is False
    assert doc["memory"]["compaction"]["supported"] is False
    assert doc["agents"]["memoryConsolidation"] == {"supported": False}
    assert doc["agents"]["commitments"]["supported"] is False
    assert doc["memoryDimensions"]["compaction"] is False
    assert doc["memoryDimensions"]["read"] is True
    status = doc["x-host-agent-memory-status"]
    assert status["worker"]["available"] is False and nobody in status["worker"]["detail"]


async def test_an_unreachable_database_shows_in_discovery_and_degrades_the_inventory(
    database_url, store, temporal_env, worker_task_queue, vault
) -> None:
    url = make_url(database_url)
    socket = f"{url.query['host']}/.s.PGSQL.{url.query.get('port', 5432)}"
    proxy = await CuttableProxy(socket).start()
    through_proxy = url.set(host="127.0.0.1", port=proxy.port, query={})
    engine = create_engine(through_proxy.render_as_string(hide_password=False))
    try:
        services = api_services(
            engine, PostgresMemoryStore(engine), temporal_env.client, worker_task_queue, vault
        )
        services.probe.ttl_s = 0  # probe on every request, so the cut shows at once
        tenant = "t" + uuid.uuid4().hex[:10]
        key = (await ApiKeyStore(engine).create(tenant)).key
        async with (
            serving(create_app(services)) as base,
            httpx.AsyncClient(base_url=base, headers={"X-API-Key": key}) as http,
        ):
            assert (await http.put("/v1/agents/researcher", json=SHAPE)).status_code == 200
            before = (await http.get("/v1/agents")).json()["agents"]
            assert "memoryDegraded" not in before[0]

            await proxy.cut()
            doc = (await http.get("/.well-known/openwop")).json()
            assert doc["memory"]["supported"] is False
            assert doc["agents"]["memoryBackends"] == []
            assert not any(doc["memoryDimensions"].values())
            assert doc["x-host-agent-memory-status"]["database"]["available"] is False
            # The key was resolved before the cut (cached); the inventory is the last one
            # read, stamped with what the shape asks and the host cannot give now.
            after = (await http.get("/v1/agents")).json()["agents"]
            assert after == [
                {
                    "agentId": "researcher",
                    "memoryRef": f"mem://{tenant}/researcher",
                    "memoryShape": {"scratchpad": True, "conversation": False, "longTerm": True},
                    "memoryDegraded": True,
                    "degradedMemoryDimensions": ["read", "write", "long-term-durability"],
                }
            ]
            # A write needs the store: a 503 naming it, never a 500.
            write = await http.post(
                "/api/v1/memory",
                json={"namespace": "n", "key": "k", "value": {}},
                headers={"X-Agent-ID": "a"},
            )
            assert write.status_code == 503 and write.json()["error"] == "store_unavailable"

            await proxy.restore()
            restored = (await http.get("/.well-known/openwop")).json()
            assert restored["memory"]["supported"] is True
    finally:
        await proxy.cut()
        await engine.dispose()
