"""One trace from an HTTP seam call to the SQL: `memoryctl serve` and `python worker.py`,
as users run them with OTEL_EXPORTER_OTLP_ENDPOINT set, export to an OTLP receiver on
loopback; the seam's HTTP span, the workflow it starts, the workflow's activity and the
activity's SQL statements share one trace, and no span carries memory content."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from activities.contracts import DISTILL_MEMORY
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.tracing import tracing_requested
from tests.support.http_app import free_port
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, otlp_receiver
from tests.workflows.test_worker_process import ROOT, _address, _wait_for

pytestmark = pytest.mark.slow

SEAM = "/v1/host/sample/memory/distill"
CANARY = "trace-canary-5d1e"


@contextlib.contextmanager
def _process(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        args,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


async def _wait_for_spans(receiver: OtlpReceiver, trace_id: str, names: set[str]) -> None:
    for _ in range(200):
        if names <= {span.name for span in receiver.in_trace(trace_id)}:
            return
        await asyncio.sleep(0.1)
    seen = sorted({(s.service, s.name) for s in receiver.in_trace(trace_id)})
    raise AssertionError(f"missing {names} in trace {trace_id}: {seen}")


async def test_one_trace_spans_the_http_call_the_workflow_its_activity_and_its_sql(
    temporal_env: WorkflowEnvironment,
    database_url: str,
    store: PostgresMemoryStore,
    tmp_path: Path,
) -> None:
    task_queue = f"traced-{uuid.uuid4().hex[:8]}"
    api_port = free_port()
    tenant = "t" + uuid.uuid4().hex[:10]
    key = (await ApiKeyStore(store.engine).create(tenant)).key
    async with otlp_receiver() as receiver:
        env = {
            "TEMPORAL_ADDRESS": _address(temporal_env),
            "AGENT_MEMORY_TASK_QUEUE": task_queue,
            "DATABASE_URL": database_url,
            "AGENT_MEMORY_SECRETS_FILE": str(tmp_path / "secrets.json"),
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",  # export within 0.1 s, not 5 s
        }
        assert tracing_requested(env)
        api_env = {
            **env,
            "AGENT_MEMORY_API_PORT": str(api_port),
            "OPENWOP_TEST_SEAM_ENABLED": "true",
        }
        worker_args = [sys.executable, str(ROOT / "worker.py")]
        api_args = [sys.executable, "-m", "memoryctl.main", "serve"]
        with _process(worker_args, env) as worker, _process(api_args, api_env):
            await _wait_for(worker, f"polling task queue '{task_queue}'")
            url = f"http://127.0.0.1:{api_port}"
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                for _ in range(300):
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get("/readyz")).status_code == 200:
                            break
                    await asyncio.sleep(0.1)
                response = await http.post(
                    SEAM,
                    json={
                        "memoryRef": f"mem://{tenant}/traced",
                        "sources": [f"{CANARY} note {i}" for i in range(3)],
                    },
                    headers={"X-API-Key": key},
                )
            assert response.status_code == 200, response.text
            http_span = await _the_http_span(receiver)
            run_activity = f"RunActivity:{DISTILL_MEMORY.name}"
            wanted = {
                "StartWorkflow:DistillationWorkflow",
                "RunWorkflow:DistillationWorkflow",
                run_activity,
            }
            await _wait_for_spans(receiver, http_span.trace_id, wanted)
    trace = receiver.in_trace(http_span.trace_id)
    services = {span.name: span.service for span in trace}
    assert services["StartWorkflow:DistillationWorkflow"] == "agent-memory-api"
    assert services[run_activity] == "agent-memory-worker"
    # The activity's SQL, under the activity's span.
    sql = [span for span in trace if span.attributes.get("db.system", "").find("postgresql") >= 0]
    assert sql, sorted(services)
    under_activity = [
        span for span in sql if any(a.name == run_activity for a in receiver.ancestors(span))
    ]
    assert under_activity, "no SQL span under the activity"
    # Everything hangs off the HTTP span: one tree, not pieces that share an id.
    for span in trace:
        if span is not http_span:
            chain = [a.span_id for a in receiver.ancestors(span)]
            assert http_span.span_id in chain, (span.service, span.name)
    # No span anywhere carries the content the seam wrote.
    for span in receiver.spans:
        assert CANARY not in span.name
        assert all(CANARY not in value for value in span.attributes.values()), span


async def _the_http_span(receiver: OtlpReceiver) -> ReceivedSpan:
    for _ in range(200):
        for span in receiver.spans:
            if span.service == "agent-memory-api" and span.name == f"POST {SEAM}":
                return span
        await asyncio.sleep(0.1)
    raise AssertionError(sorted({(s.service, s.name) for s in receiver.spans}))
