"""/healthz, /readyz and /metrics on the API: no key needed, readiness names what is
missing, and requests are counted by route template, never by the path sent."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from sqlalchemy.engine import make_url

from api.app import create_app
from memory.storage.engines import create_engine
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.metrics import MetricsExporter
from tests.support.http_app import api_services, serving
from tests.support.tcp_proxy import CuttableProxy

pytestmark = pytest.mark.slow


def samples(text: str, name: str) -> dict[frozenset[tuple[str, str]], float]:
    """Every sample of ``name`` in Prometheus text, keyed by its labels."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(rf"{re.escape(name)}\{{(.*)\}} (\S+)", line)
        if match:
            labels = frozenset(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
            found[labels] = float(match.group(2))
    return found


async def test_readiness_reports_the_missing_worker_without_gating_on_it(
    engine, store, temporal_env, vault
) -> None:
    """The API serves reads and writes without a worker: a load balancer must keep it
    in rotation, and the missing worker still shows."""
    nobody = f"nobody-polls-{uuid.uuid4().hex[:8]}"
    services = api_services(engine, store, temporal_env.client, nobody, vault)
    async with serving(create_app(services)) as url, httpx.AsyncClient(base_url=url) as http:
        alive = await http.get("/healthz")
        ready = await http.get("/readyz")
        metrics = await http.get("/metrics")
    assert alive.status_code == 200 and alive.json() == {"status": "alive"}
    assert ready.status_code == 200, ready.text
    checks = ready.json()["checks"]
    assert checks["database"] == {"ok": True, "required": True, "detail": "reachable"}
    assert checks["temporal"] == {"ok": True, "required": True, "detail": "reachable"}
    assert checks["worker"]["ok"] is False and checks["worker"]["required"] is False
    assert nobody in checks["worker"]["detail"]
    # This app was built without a metrics runtime.
    assert metrics.status_code == 404 and metrics.json()["error"] == "not_found"


async def test_not_ready_while_the_database_is_unreachable(
    database_url, store, temporal_env, worker_task_queue, vault
) -> None:
    url = make_url(database_url)
    proxy = await CuttableProxy(
        f"{url.query['host']}/.s.PGSQL.{url.query.get('port', 5432)}"
    ).start()
    through_proxy = url.set(host="127.0.0.1", port=proxy.port, query={})
    engine = create_engine(through_proxy.render_as_string(hide_password=False))
    try:
        services = api_services(
            engine, PostgresMemoryStore(engine), temporal_env.client, worker_task_queue, vault
        )
        services.probe.ttl_s = 0
        async with serving(create_app(services)) as api, httpx.AsyncClient(base_url=api) as http:
            assert (await http.get("/readyz")).status_code == 200
            await proxy.cut()
            cut = await http.get("/readyz")
            alive = await http.get("/healthz")
            await proxy.restore()
            again = await http.get("/readyz")
    finally:
        await engine.dispose()
        await proxy.cut()
    assert cut.status_code == 503
    assert cut.json()["status"] == "not-ready"
    assert cut.json()["checks"]["database"]["ok"] is False
    assert cut.json()["checks"]["database"]["detail"].startswith("unreachable (")
    assert alive.status_code == 200  # alive, only not ready: no restart
    assert again.status_code == 200


async def test_ready_when_the_database_temporal_and_a_worker_answer(running_api) -> None:
    async with httpx.AsyncClient(base_url=running_api.url) as http:
        ready = await http.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["status"] == "ready"
    assert all(check["ok"] for check in ready.json()["checks"].values())


async def test_requests_are_counted_by_route_template_not_by_path(
    engine, store, temporal_env, worker_task_queue, vault
) -> None:
    services = api_services(engine, store, temporal_env.client, worker_task_queue, vault)
    services.metrics = MetricsExporter.start(process="api")
    tenant = "t" + uuid.uuid4().hex[:10]
    key = (await ApiKeyStore(engine).create(tenant)).key
    async with (
        serving(create_app(services)) as url,
        httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}) as http,
    ):
        written = await http.post(
            "/api/v1/memory",
            json={"namespace": "n", "key": "k", "value": {"note": "metrics canary 7f3a"}},
            headers={"X-Agent-ID": "writer"},
        )
        assert written.status_code in (200, 201), written.text
        entry_id = written.json()["id"]
        for _ in range(3):  # the fast path (api/fast_reads.py) answers these
            got = await http.get(f"/api/v1/memory/{entry_id}", headers={"X-Agent-ID": "writer"})
            assert got.status_code == 200, got.text
        missing = await http.get("/no/such/route/abc123")
        assert missing.status_code == 404
        text = (await http.get("/metrics")).text
    counts = samples(text, "agent_memory_http_request_duration_seconds_count")

    def count(route: str, method: str, status: str) -> float:
        labels = {("route", route), ("method", method), ("status", status), ("process", "api")}
        return counts.get(frozenset(labels), 0.0)

    assert count("/api/v1/memory/{entry_id}", "GET", "200") == 3
    assert count("/api/v1/memory", "POST", str(written.status_code)) == 1
    assert count("unmatched", "GET", "404") == 1
    # Neither ids nor paths nor content become labels.
    assert entry_id not in text and "abc123" not in text and "canary" not in text


async def test_the_openapi_pages_load_their_assets_from_the_api_itself(
    engine, store, temporal_env, worker_task_queue, vault
) -> None:
    """/docs and /redoc work offline: every script and stylesheet they load is served by
    the API (from the fastapi-offline wheel), none from a CDN."""
    services = api_services(engine, store, temporal_env.client, worker_task_queue, vault)
    services.metrics = MetricsExporter.start(process="api")
    async with serving(create_app(services)) as url, httpx.AsyncClient(base_url=url) as http:
        for page in ("/docs", "/redoc"):
            html = (await http.get(page)).raise_for_status().text
            assets = re.findall(r'(?:src|href)="([^"]+)"', html)
            scripts = [a for a in assets if a.endswith((".js", ".css"))]
            assert scripts, html
            for asset in assets:
                assert not asset.startswith(("http://", "https://", "//")), asset
            for asset in scripts:
                response = await http.get(asset)
                assert response.status_code == 200, asset
                assert len(response.content) > 10_000, asset
            assert "/openapi.json" in html
        text = (await http.get("/metrics")).text
    routes = {
        dict(labels)["route"]
        for labels in samples(text, "agent_memory_http_request_duration_seconds_count")
    }
    assert "/static-offline-docs/{path}" in routes and "/docs" in routes
    assert not any("swagger" in route for route in routes)
