"""The worker as an operator observes it, on ``python worker.py``: /healthz, /readyz and
/metrics (AGENT_MEMORY_WORKER_HTTP_ADDRESS), ready once it polls, and after a dream its
/metrics holds the Temporal SDK's series and the product's with that dream's figures;
its JSON logs (AGENT_MEMORY_LOG_FORMAT=json) carry the run ids on every line of an
activity, and an expected refusal (token_budget_exceeded) is one line, no traceback."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from activities.contracts import DISTILL_MEMORY
from memory.store import PostgresMemoryStore
from schemas.fleet import FleetDreamInput
from schemas.workflow_io import DistillationInput, DreamInput
from tests.api.test_health_and_metrics import samples
from tests.docs.test_observability import SDK_SERIES_ON_FAILURE, series_read
from tests.support.factories import note, unique_ref
from tests.support.http_app import free_port
from tests.workflows.test_worker_process import ROOT, _address, _wait_for
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow
from workflows.fleet_dream import FleetDreamWorkflow

pytestmark = pytest.mark.slow

CANARY = "log-canary-91c2"


def _worker(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py")],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def test_the_worker_reports_ready_and_a_dream_in_its_metrics(
    temporal_env: WorkflowEnvironment,
    database_url: str,
    store: PostgresMemoryStore,
    tmp_path: Path,
) -> None:
    task_queue = f"endpoint-{uuid.uuid4().hex[:8]}"
    port = free_port()
    process = _worker(
        {
            "TEMPORAL_ADDRESS": _address(temporal_env),
            "AGENT_MEMORY_TASK_QUEUE": task_queue,
            "DATABASE_URL": database_url,
            "AGENT_MEMORY_SECRETS_FILE": str(tmp_path / "secrets.json"),
            "AGENT_MEMORY_WORKER_HTTP_ADDRESS": f"127.0.0.1:{port}",
            "AGENT_MEMORY_LOG_FORMAT": "json",
        }
    )
    try:
        seen = await _wait_for(process, "polling task queue")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert (await http.get("/healthz")).json() == {"status": "alive"}
            ready = await http.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["worker"] == {
                "ok": True,
                "required": True,
                "detail": "this worker is polling",
            }
            ref = unique_ref()
            await store.put_many(ref, [note(f"endpoint metrics note {i}") for i in range(6)])
            result = await temporal_env.client.execute_workflow(
                DreamWorkflow.run,
                DreamInput(memory_ref=ref),
                id=f"dream-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
            )
            assert result.distillation is not None and result.distillation.source_count == 6
            # Two more agents of another tenant dreamed by the fleet's batches.
            fleet_tenant = "fleet" + uuid.uuid4().hex[:8]
            for agent in ("a", "b"):
                await store.put_many(
                    f"mem://{fleet_tenant}/{agent}", [note(f"fleet note {i}") for i in range(4)]
                )
            fleet = await temporal_env.client.execute_workflow(
                FleetDreamWorkflow.run,
                FleetDreamInput(tenant=fleet_tenant),
                id=f"fleet-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
            )
            assert fleet.progress.dreamed == 2
            text = (await http.get("/metrics")).text
        worker = ("process", "worker")

        def value(name: str, *labels: tuple[str, str]) -> float:
            # The SDK adds namespace, task queue and workflow or activity type.
            wanted = {worker, *labels}
            return sum(v for have, v in samples(text, name).items() if wanted <= have)

        dreams = ("agent_memory_dreams_total", ("path", "workflow"), ("outcome", "completed"))
        assert value(*dreams) == 1
        fleet_dreams = ("agent_memory_dreams_total", ("path", "fleet"), ("outcome", "completed"))
        assert value(*fleet_dreams) == 2
        assert value("agent_memory_distillation_sources_total", ("fate", "distilled")) == 6 + 8
        tokens = ("agent_memory_dream_tokens_total", ("activity_type", DISTILL_MEMORY.name))
        assert value(*tokens) == result.distillation.tokens_used > 0
        # The SDK's own series, from the same runtime: every one the dashboard reads.
        assert "temporal_workflow_completed_total" in text
        for name in series_read("temporal_") - SDK_SERIES_ON_FAILURE:
            assert f"\n{name}" in text, name
        # Labels carry no memoryRef, tenant or content.
        assert ref not in text and ref.split("/")[2] not in text
        assert "endpoint metrics note" not in text

        # An expected refusal: a 20-token budget under a pinned promise.
        refused_ref = unique_ref()
        await store.put(refused_ref, note(f"{CANARY} a long pinned promise. " * 10, pinned=True))
        refused_id = f"distill-{uuid.uuid4().hex[:8]}"
        with pytest.raises(WorkflowFailureError):
            await temporal_env.client.execute_workflow(
                DistillationWorkflow.run,
                DistillationInput(memory_ref=refused_ref, token_budget=20),
                id=refused_id,
                task_queue=task_queue,
            )
        handle = temporal_env.client.get_workflow_handle(refused_id)
        refused_run = (await handle.describe()).run_id
        process.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.to_thread(process.communicate, timeout=30)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
    _check_json_logs(seen + rest, refused_id, refused_run)


def _check_json_logs(output: str, workflow_id: str, run_id: str) -> None:
    """AGENT_MEMORY_LOG_FORMAT=json: every line one JSON object; the refusal one line
    with the run's ids and its error type, no traceback; no content anywhere."""
    lines = [line for line in output.splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]
    assert all({"time", "level", "logger", "message"} <= set(p) for p in parsed)
    failed = [p for p in parsed if p.get("error") == "token_budget_exceeded"]
    assert len(failed) == 1, lines
    (line,) = failed
    assert line["workflowId"] == workflow_id and line["runId"] == run_id
    assert line["activityType"] == "distill_memory" and line["attempt"] == 1
    assert "traceback" not in line and "Traceback" not in output
    assert CANARY not in output and "endpoint metrics note" not in output


async def test_a_bad_endpoint_address_stops_the_worker_naming_the_variable() -> None:
    process = _worker({"AGENT_MEMORY_WORKER_HTTP_ADDRESS": "localhost"})
    output, _ = await asyncio.to_thread(process.communicate, timeout=60)
    assert process.returncode == 2
    assert "AGENT_MEMORY_WORKER_HTTP_ADDRESS: must be host:port" in output
    assert "Traceback" not in output
