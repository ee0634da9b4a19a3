"""memoryctl commitments, run as a user runs it (a subprocess against the test's own
database and the dev server): infer waits for the workflow and lists unparsable entries
by id, list and show print ids, states and instants (show alone serves the intention),
cancel ends the commitment in the store and its workflow, and bad input is one line with
a non-zero exit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.commitments import commitment_workflow_id
from schemas.memory_ref import parse_memory_ref
from tests.memoryctl.test_memoryctl_forget import ok, one_line_error
from tests.support.factories import note, unique_ref
from tests.support.waiting import closed_status

# Within the arming horizon, so inference starts its workflow for the cancel to end.
INTENTION = "Remind me in 3 hours to ask Marguerite about the Ostrander lease"


def memoryctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "commitments", *args],
        env={**os.environ, "COLUMNS": "200", **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_infer_list_show_and_cancel(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    ref = unique_ref()
    source = await store.put(ref, note(INTENTION))
    vague = await store.put(ref, note("Remind me about the thing with the vendor"))
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }
    inferred = json.loads(
        ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, "--json", env=env))
    )
    assert inferred["inference"]["created"] == 1
    assert inferred["inference"]["unparsableIds"] == [vague.id]
    assert inferred["armed"]["started"] == 1

    listed = ok(await asyncio.to_thread(memoryctl, "list", "--memory-ref", ref, "--json", env=env))
    (row,) = json.loads(listed)
    assert (row["memoryId"], row["state"], row["condition"]) == (source.id, "armed", "time")
    assert "Marguerite" not in listed and "Ostrander" not in listed
    cid = row["commitmentId"]

    shown = json.loads(
        ok(
            await asyncio.to_thread(
                memoryctl, "show", "--memory-ref", ref, "--id", cid, "--json", env=env
            )
        )
    )
    assert shown["intention"] == INTENTION
    assert shown["spec"]["kind"] == "once"

    # The table reads at 80 columns: every line fits, and the id is whole to copy.
    narrow = {**env, "COLUMNS": "80"}
    table = ok(await asyncio.to_thread(memoryctl, "list", "--memory-ref", ref, env=narrow))
    assert all(len(line) <= 80 for line in table.splitlines()), table
    (line,) = [line for line in table.splitlines() if cid in line]
    assert "armed" in line
    details = ok(
        await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, "--id", cid, env=narrow)
    )
    assert f"id: {cid}" in details and f"entry: {source.id}" in details

    cancelled = ok(
        await asyncio.to_thread(memoryctl, "cancel", "--memory-ref", ref, "--id", cid, env=env)
    )
    assert f"{cid}: cancelled" in cancelled
    (after,) = await store.commitments.list(ref)
    assert after.state == "cancelled"
    handle = temporal_env.client.get_workflow_handle(commitment_workflow_id(cid))
    assert await closed_status(handle) == WorkflowExecutionStatus.CANCELED

    # Another tenant's ref finds nothing, whatever the id.
    other = unique_ref()
    missing = await asyncio.to_thread(
        memoryctl, "show", "--memory-ref", other, "--id", cid, env=env
    )
    assert cid in one_line_error(missing, 1)
    assert "Marguerite" not in missing.stdout + missing.stderr


async def test_bad_input_is_one_line_and_a_non_zero_exit(
    store: PostgresMemoryStore, database_url: str
) -> None:
    env = {"DATABASE_URL": database_url}
    bad_ref = await asyncio.to_thread(memoryctl, "list", "--memory-ref", "mem://../x", env=env)
    assert "memoryRef" in one_line_error(bad_ref, 2) or "segments" in bad_ref.stderr
    bad_zone = await asyncio.to_thread(
        memoryctl, "timezone", "--tenant", "acme", "Mars/Olympus", env=env
    )
    assert "timeZone" in one_line_error(bad_zone, 2)
    set_zone = await asyncio.to_thread(
        memoryctl, "timezone", "--tenant", "acme", "Europe/Berlin", env=env
    )
    assert ok(set_zone).strip() == "Europe/Berlin"
    assert await store.commitments.time_zone("acme") == "Europe/Berlin"
    ref = unique_ref()
    assert parse_memory_ref(ref)
    no_such = await asyncio.to_thread(
        memoryctl, "cancel", "--memory-ref", ref, "--id", "cmt-0", env=env
    )
    one_line_error(no_such, 1)
