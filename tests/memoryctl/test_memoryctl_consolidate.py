"""memoryctl consolidate, run as a user runs it (a subprocess against the test's own
database and the dev server): run waits for the pass and prints its counts, audit and
conflicts list ids and kinds (never content), undo brings a pass back, and refusals are
one line with exit status 1, bad input exit status 2."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.memory_entry import Tier
from tests.memoryctl.test_memoryctl_forget import ok, one_line_error
from tests.support.factories import WRITTEN_TEXTS, note, unique_ref
from tests.support.session_history_audit import MIN_TEXT_LENGTH

FACTS = (
    "The customer prefers invoices in EUR",
    "Note: the customer prefers invoices in EUR.",
    "The trial lasts 14 days",
    "The trial lasts 21 days",
)


def memoryctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "consolidate", *args],
        env={**os.environ, "COLUMNS": "200", **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _no_content(output: str) -> None:
    # Texts as short as another test's note("a") occur in any output by chance: the same
    # floor as the session's history audit.
    for text in WRITTEN_TEXTS:
        if len(text) >= MIN_TEXT_LENGTH:
            assert text not in output


async def test_run_audit_conflicts_and_undo(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    ref = unique_ref()
    written = await store.put_many(ref, [note(text, tier=Tier.SEMANTIC) for text in FACTS])
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }
    ran = await asyncio.to_thread(memoryctl, "run", "--memory-ref", ref, "--json", env=env)
    result = json.loads(ok(ran))
    assert (result["inputCount"], result["outputCount"], result["conflictCount"]) == (4, 3, 1)

    audit = json.loads(ok(memoryctl("audit", "--memory-ref", ref, "--json", env=env)))
    assert [row["reason"] for row in audit] == ["merged"]
    assert audit[0]["passId"] == result["passId"]
    conflicts = json.loads(ok(memoryctl("conflicts", "--memory-ref", ref, "--json", env=env)))
    assert [set(c["kinds"]) for c in conflicts] == [{"number"}]
    tables = ok(memoryctl("audit", "--memory-ref", ref, env=env)) + ok(
        memoryctl("conflicts", "--memory-ref", ref, env=env)
    )
    assert audit[0]["id"] in tables
    _no_content(ran.stdout + tables)

    undone = json.loads(
        ok(memoryctl("undo", "--memory-ref", ref, "--pass", result["passId"], "--json", env=env))
    )
    assert undone["restored"] == 1
    assert {e.id for e in await store.list(ref)} == {e.id for e in written}
    again = memoryctl("undo", "--memory-ref", ref, "--pass", result["passId"], env=env)
    assert f"pass {result['passId']} was undone already" in one_line_error(again, 1)


async def test_refusals_and_bad_input_are_one_line(
    store: PostgresMemoryStore, database_url: str
) -> None:
    ref = unique_ref()
    env = {"DATABASE_URL": database_url}
    one_line_error(memoryctl("audit", "--memory-ref", "mem://../x", env=env), 2)
    malformed = memoryctl("undo", "--memory-ref", ref, "--pass", "cp-nope", env=env)
    assert "--pass: must be a pass id" in one_line_error(malformed, 2)
    unknown = memoryctl("undo", "--memory-ref", ref, "--pass", "cp-" + "0" * 20, env=env)
    assert "not_found" in one_line_error(unknown, 1)
    # A key taken again since the pass: undo is refused whole.
    await store.put(ref, note("Region: eu-west-1", tier=Tier.SEMANTIC, namespace="d", key="r"))
    await store.put(ref, note("Region: eu-west-2", tier=Tier.SEMANTIC, namespace="D", key="R"))
    done = await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key="k"))
    await store.put(ref, note("Region: us-east-1", tier=Tier.SEMANTIC, namespace="d", key="r"))
    refused = memoryctl("undo", "--memory-ref", ref, "--pass", done.pass_id, env=env)
    assert "consolidation_refused" in one_line_error(refused, 1)
    unreachable = memoryctl(
        "run", "--memory-ref", ref, env={**env, "TEMPORAL_ADDRESS": "127.0.0.1:9"}
    )
    assert "cannot reach Temporal" in one_line_error(unreachable, 1)
