"""The observability profile, checked without a Docker engine: `docker compose config`
accepts it, Prometheus scrapes the ports the services listen on, Grafana's data source
is the one the dashboard names, and the dashboard reads only series the product exports,
every panel described in docs/operations.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from runtime import product_metrics, settings
from runtime.tracing import COMPOSE_TRACING_VARIABLE, tracing_requested
from tests.docs.test_compose import _compose_config, _load_compose

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "agent-memory.json"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
DATASOURCES = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
PROVIDERS = DEPLOY / "grafana" / "provisioning" / "dashboards" / "agent-memory.yml"
OPERATIONS = ROOT / "docs" / "operations.md"
PROFILE = "observability"
# Series the Temporal SDK exports only once something happened (a failed attempt).
SDK_SERIES_ON_FAILURE = {"temporal_activity_execution_failed_total"}

_SERIES = re.compile(r"\b((?:agent_memory|temporal)_[a-z0-9_]+)\b")
_SUFFIXES = ("_bucket", "_count", "_sum")


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def series_read(prefix: str) -> set[str]:
    """The series the dashboard's queries read, histogram suffixes removed."""
    names = set()
    for panel in dashboard()["panels"]:
        for target in panel["targets"]:
            for name in _SERIES.findall(target["expr"]):
                if name.startswith(prefix):
                    for suffix in _SUFFIXES:
                        name = name.removesuffix(suffix)
                    names.add(name)
    return names


def _exported_product_series() -> set[str]:
    names = set()
    for value in vars(product_metrics).values():
        if isinstance(value, tuple) and len(value) == 2 and str(value[0]).startswith("agent_"):
            name = value[0]
            # The exporter adds _total to counters; histograms end in their unit.
            names.add(name if name.endswith("_seconds") else f"{name}_total")
    return names


def test_the_profile_validates_and_exists_only_when_asked_for() -> None:
    _compose_config("--profile", PROFILE, "config", "-q")
    default = _compose_config("config", "--services").stdout.split()
    with_profile = _compose_config("--profile", PROFILE, "config", "--services").stdout.split()
    assert "prometheus" not in default and "grafana" not in default
    assert {"prometheus", "grafana", "jaeger"} <= set(with_profile)
    assert "jaeger" not in default


def test_prometheus_scrapes_the_ports_the_services_listen_on() -> None:
    services = _load_compose()["services"]
    config = yaml.safe_load(PROMETHEUS.read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}

    def dns_target(job: str) -> tuple[set[str], int]:
        (sd,) = jobs[job]["dns_sd_configs"]
        return set(sd["names"]), sd["port"]

    worker_env = services["worker"]["environment"]
    worker_port = int(worker_env["AGENT_MEMORY_WORKER_HTTP_ADDRESS"].rpartition(":")[2])
    assert set(worker_env) == {*settings.WORKER_ENV_VARS, COMPOSE_TRACING_VARIABLE}
    assert dns_target("agent-memory-worker") == ({"worker"}, worker_port)
    api_port = int(services["api"]["environment"]["AGENT_MEMORY_API_PORT"])
    assert dns_target("agent-memory-api") == ({"api", "api-replica"}, api_port)
    temporal_metrics = services["temporal"]["environment"]["PROMETHEUS_ENDPOINT"]
    (static,) = jobs["temporal-server"]["static_configs"]
    assert static["targets"] == [f"temporal:{temporal_metrics.rpartition(':')[2]}"]
    # Health checks use the readiness paths (runtime/health.py).
    assert f"{worker_port}/readyz" in " ".join(services["worker"]["healthcheck"]["test"])
    assert f"{api_port}/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    # The compose file mounts the files this test read.
    mounts = " ".join(services["prometheus"]["volumes"])
    assert "./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml" in mounts


def test_tracing_is_off_in_compose_until_the_environment_names_a_collector() -> None:
    services = _load_compose()["services"]
    for name in ("worker", "api"):
        env = {k: str(v) for k, v in services[name]["environment"].items()}
        assert env[COMPOSE_TRACING_VARIABLE] == ""  # ${OTEL_EXPORTER_OTLP_ENDPOINT:-}
        assert not tracing_requested(env)
        assert tracing_requested({**env, COMPOSE_TRACING_VARIABLE: "http://jaeger:4318"})
    assert "observability" in services["jaeger"]["profiles"]


def test_grafana_loads_the_dashboard_over_the_provisioned_data_source() -> None:
    services = _load_compose()["services"]
    (source,) = yaml.safe_load(DATASOURCES.read_text())["datasources"]
    assert source["url"] == "http://prometheus:9090" and source["type"] == "prometheus"
    (provider,) = yaml.safe_load(PROVIDERS.read_text())["providers"]
    mounts = dict(
        volume.split(":")[:2] for volume in services["grafana"]["volumes"] if ":" in volume
    )
    assert mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    board = dashboard()
    assert board["uid"] and board["title"] and board["panels"]
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == source["uid"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == source["uid"], panel["title"]


def test_panels_fit_the_grid_without_overlapping() -> None:
    taken: set[tuple[int, int]] = set()
    ids = []
    for panel in dashboard()["panels"]:
        ids.append(panel["id"])
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        cells = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
    assert len(ids) == len(set(ids))


def test_the_dashboard_reads_only_series_the_product_exports() -> None:
    read = series_read("agent_memory_")
    exported = _exported_product_series()
    assert read - exported == set(), "the dashboard reads series nothing records"
    # Every product series is on the dashboard.
    assert exported - read == set()


def test_every_panel_is_described_in_the_operations_doc() -> None:
    text = OPERATIONS.read_text()
    section = text.split("### The observability profile", 1)[1].split("\n## ", 1)[0]
    for panel in dashboard()["panels"]:
        assert f"**{panel['title']}**" in section, panel["title"]
        assert panel["description"], panel["title"]
