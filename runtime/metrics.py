"""One metrics pipeline per process: the Temporal SDK runtime's meter, exported in
Prometheus format.

Every series goes through the runtime a process's Temporal client runs on: the SDK's own
(``temporal_workflow_task_*``, ``temporal_activity_*``, ``temporal_request*``, ...) and
the product's (runtime/product_metrics.py), which workflows record through
``workflow.metric_meter()`` (skipped on replay, so a replayed dream counts once),
activities through ``activity.metric_meter()`` and the API through the runtime's meter.
The SDK exports them on a loopback port only; ``/metrics`` of the API and of the
worker's endpoint (runtime/health_endpoint.py) serve that exposition on the port each
process already answers on, so an operator scrapes one target per process.

Without a MetricsExporter (tests, the CLI) the SDK's default runtime records nothing and
recording costs nothing.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import httpx
from temporalio.common import MetricMeter
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

# Seconds, like every Prometheus duration: the SDK's own latencies and our lateness and
# HTTP histograms read alike.
_BUCKETS_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_LATENESS_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 21600.0, 86400.0)
HISTOGRAM_BUCKETS: dict[str, tuple[float, ...]] = {
    "agent_memory_http_request_duration_seconds": _BUCKETS_SECONDS,
    "agent_memory_commitment_lateness_seconds": _LATENESS_BUCKETS,
}
SCRAPE_TIMEOUT_S = 5.0


def _free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class MetricsExporter:
    """A Temporal runtime whose meter exports on ``address`` (loopback)."""

    runtime: Runtime
    address: str

    @classmethod
    def start(cls, *, process: str) -> MetricsExporter:
        """``process`` ("api", "worker") labels every series, so two processes scraped
        under one job stay apart."""
        address = f"127.0.0.1:{_free_loopback_port()}"
        runtime = Runtime(
            telemetry=TelemetryConfig(
                metrics=PrometheusConfig(
                    bind_address=address,
                    counters_total_suffix=True,
                    durations_as_seconds=True,
                    histogram_bucket_overrides={
                        name: list(buckets) for name, buckets in HISTOGRAM_BUCKETS.items()
                    },
                ),
                global_tags={"process": process},
                attach_service_name=False,
            )
        )
        return cls(runtime=runtime, address=address)

    @property
    def meter(self) -> MetricMeter:
        return self.runtime.metric_meter

    async def exposition(self) -> bytes:
        """The Prometheus text of every series recorded in this process."""
        async with httpx.AsyncClient(timeout=SCRAPE_TIMEOUT_S) as client:
            response = await client.get(f"http://{self.address}/metrics")
            response.raise_for_status()
            return response.content


PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
