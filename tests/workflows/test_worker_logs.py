"""The worker's logs as an operator reads them: with AGENT_MEMORY_LOG_FORMAT=json every
line is one JSON object, the lines of an activity carry its workflow and run ids, and an
expected refusal (token_budget_exceeded) is one line with its type, no traceback."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from runtime.log_format import ExpectedFailuresOnOneLine, JsonLines
from schemas.workflow_io import DistillationInput
from tests.support.factories import note, unique_ref
from tests.workflows.test_worker_process import ROOT, _address, _wait_for
from workflows.distillation import DistillationWorkflow

pytestmark = pytest.mark.slow

CANARY = "log-canary-91c2"


async def test_json_lines_carry_the_run_ids_and_refusals_stay_one_line(
    temporal_env: WorkflowEnvironment,
    database_url: str,
    store: PostgresMemoryStore,
    tmp_path: Path,
) -> None:
    task_queue = f"logs-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": _address(temporal_env),
        "AGENT_MEMORY_TASK_QUEUE": task_queue,
        "DATABASE_URL": database_url,
        "AGENT_MEMORY_SECRETS_FILE": str(tmp_path / "secrets.json"),
        "AGENT_MEMORY_LOG_FORMAT": "json",
    }
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        seen = await _wait_for(process, "polling task queue")
        ref = unique_ref()
        await store.put(ref, note(f"{CANARY} a long pinned promise. " * 10, pinned=True))
        workflow_id = f"distill-{uuid.uuid4().hex[:8]}"
        with pytest.raises(WorkflowFailureError):
            await temporal_env.client.execute_workflow(
                DistillationWorkflow.run,
                DistillationInput(memory_ref=ref, token_budget=20),
                id=workflow_id,
                task_queue=task_queue,
            )
        run_id = (await temporal_env.client.get_workflow_handle(workflow_id).describe()).run_id
        process.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.to_thread(process.communicate, timeout=30)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
    lines = [line for line in (seen + rest).splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(p) for p in parsed)
    failed = [p for p in parsed if p.get("error") == "token_budget_exceeded"]
    assert len(failed) == 1, lines
    (line,) = failed
    assert line["workflowId"] == workflow_id and line["runId"] == run_id
    assert line["activityType"] == "distill_memory" and line["attempt"] == 1
    assert "traceback" not in line and "Traceback" not in "\n".join(lines)
    assert CANARY not in "\n".join(lines)


def _record(error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except BaseException:
        return logging.LogRecord(
            "temporalio.activity", logging.WARNING, __file__, 1, "Completing activity as failed",
            None, sys.exc_info(),
        )  # fmt: skip


def test_an_unexpected_failure_keeps_its_traceback() -> None:
    unexpected = _record(ApplicationError("connection reset", type="store_unavailable"))
    assert ExpectedFailuresOnOneLine().filter(unexpected)
    line = json.loads(JsonLines().format(unexpected))
    assert "Traceback" in line["traceback"] and "error" not in line
    refused = _record(ApplicationError("budget 20 < 96", type="token_budget_exceeded"))
    assert ExpectedFailuresOnOneLine().filter(refused)
    line = json.loads(JsonLines().format(refused))
    assert "traceback" not in line and line["error"] == "token_budget_exceeded"
    assert line["message"].endswith(": token_budget_exceeded: budget 20 < 96")
