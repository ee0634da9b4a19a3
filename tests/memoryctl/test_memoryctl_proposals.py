"""memoryctl proposals, run as a user runs it (a subprocess against the test's own
database, the dev server and a worker on the test's task queue; commands that never
reach Temporal run in-process, tests/support/memoryctl_inprocess.py): list prints every
proposal of the tenant (a table readable at 80 columns, or the wire form), show serves
the artifact, revise changes title and artifact, apply installs exactly the stored
artifact as a schedule (or, under approval-gate, waits for decide), reject installs
nothing, an applied proposal cannot be archived, and an unknown id or another tenant's
is not found (exit 1, one line, without asking Temporal)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from activities.automation_schedules import installed_checksum
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import PLAIN
from schemas.memory_ref import parse_memory_ref
from tests.memoryctl.test_memoryctl_forget import ok, one_line_error
from tests.support.factories import unique_ref
from tests.support.memoryctl_inprocess import memoryctl as in_process_memoryctl
from tests.support.proposals import installed, last_mondays, seed_routine

Result = subprocess.CompletedProcess[str]


def memoryctl(*args: str, env: dict[str, str], stdin_text: str | None = None) -> Result:
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "proposals", *args],
        env={**os.environ, "COLUMNS": "200", **env},
        input=stdin_text,
        stdin=subprocess.DEVNULL if stdin_text is None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def run(*args: str, env: dict[str, str], stdin_text: str | None = None) -> Result:
    """memoryctl in a thread: the test's event loop (and its worker) keeps running."""
    return await asyncio.to_thread(memoryctl, *args, env=env, stdin_text=stdin_text)


async def in_process(*args: str, env: dict[str, str]) -> Result:
    """memoryctl proposals in this process (tests/support/memoryctl_inprocess.py), for
    commands that never reach Temporal: no interpreter start-up per command."""
    ran = await asyncio.to_thread(in_process_memoryctl, ["proposals", *args], env)
    assert ran.crash is None, ran.crash
    return subprocess.CompletedProcess(args, ran.status, ran.stdout, ran.stderr)


def _tenant() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


async def _drafts(
    engine: AsyncEngine, store: PostgresMemoryStore, tenant: str, task_queue: str, agents: int
) -> list[str]:
    """One weekly routine per agent of ``tenant``, synthesized into a draft each; an
    applied one would run on ``task_queue``."""
    ids: list[str] = []
    for n in range(1, agents + 1):
        ref = unique_ref(tenant, f"agent-{n}")
        await seed_routine(engine, ref, last_mondays(3))
        result = await store.proposals.synthesize(parse_memory_ref(ref), "run-1", task_queue)
        ids.extend(result.created)
    assert len(ids) == agents
    return ids


@pytest.fixture
def env(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, database_url: str
) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }


async def test_list_and_show_print_the_tenants_proposals(
    engine: AsyncEngine, store: PostgresMemoryStore, database_url: str
) -> None:
    tenant = _tenant()
    first, second = await _drafts(engine, store, tenant, "agents-queue", agents=2)
    stored = await store.proposals.get(tenant, first)
    # Reads never ask Temporal (it is unreachable here).
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": "127.0.0.1:9"}

    listed = json.loads(ok(await in_process("list", "--tenant", tenant, "--json", env=env)))
    assert [row["id"] for row in listed] == [first, second]
    assert {row["state"] for row in listed} == {"draft"}
    assert listed[0]["artifactDigest"] == f"sha256:{stored.artifact_sha256}"
    only = await in_process(
        "list", "--tenant", tenant, "--memory-ref", stored.memory_ref, "--json", env=env
    )
    assert [row["id"] for row in json.loads(ok(only))] == [first]
    none_applied = await in_process(
        "list", "--tenant", tenant, "--state", "applied", "--json", env=env
    )
    assert json.loads(ok(none_applied)) == []

    # The table reads at 80 columns: every line fits, the id is whole on its line with
    # the state, and the memoryRef and title are there.
    table = ok(await run("list", "--tenant", tenant, env={**env, "COLUMNS": "80"}))
    assert all(len(line) <= 80 for line in table.splitlines()), table
    (line,) = [line for line in table.splitlines() if first in line]
    assert "draft" in line
    assert stored.memory_ref in table and "Run the agent" in table

    shown = json.loads(ok(await in_process("show", "--tenant", tenant, first, "--json", env=env)))
    assert shown["artifact"] == stored.artifact
    assert shown["artifact"]["action"]["taskQueue"] == "agents-queue"
    assert shown["rationale"] == stored.rationale
    assert shown["provenance"] == {"sourceRunIds": ["run-1"]}
    assert (shown["duplicateOf"], shown["activation"]) == (None, None)
    details = ok(await run("show", "--tenant", tenant, first, env={**env, "COLUMNS": "80"}))
    assert f"id:             {first}" in details
    assert f"artifactDigest: sha256:{stored.artifact_sha256}" in details
    assert json.loads(details.split("artifact:\n", 1)[1]) == stored.artifact


async def test_revise_apply_reject_and_archive(
    env: dict[str, str],
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    worker_task_queue: str,
    temporal_env: WorkflowEnvironment,
    tmp_path: Path,
) -> None:
    client = temporal_env.client
    tenant = _tenant()
    first, second = await _drafts(engine, store, tenant, worker_task_queue, agents=2)
    schedule_id = PLAIN.automation(tenant, first)

    revised = await run("revise", "--tenant", tenant, first, "--title", "Weekly report", env=env)
    assert f"{first}: revised" in ok(revised)
    shown = json.loads(ok(await in_process("show", "--tenant", tenant, first, "--json", env=env)))
    assert (shown["state"], shown["title"]) == ("revised", "Weekly report")

    # A new artifact on stdin: the apply installs exactly that one.
    artifact = shown["artifact"]
    artifact["schedule"]["hour"] = 7
    from_stdin = ("--artifact-file", "-")
    changed = await run(
        "revise", "--tenant", tenant, first, *from_stdin, env=env, stdin_text=json.dumps(artifact)
    )
    assert f"{first}: revised" in ok(changed)
    not_json = tmp_path / "artifact.json"
    not_json.write_text("hour: 7")
    refused = await in_process(
        "revise", "--tenant", tenant, first, "--artifact-file", str(not_json), env=env
    )
    assert "--artifact-file" in one_line_error(refused, 2)
    proposal = await store.proposals.get(tenant, first)
    assert proposal.artifact["schedule"]["hour"] == 7
    assert not await installed(client, schedule_id)

    try:
        applied = ok(await run("apply", "--tenant", tenant, first, env=env))
        proposal = await store.proposals.get(tenant, first)
        installed_ref = f"temporal-schedule:{schedule_id}#sha256:{proposal.artifact_sha256}"
        assert f"{first}: applied, schedule {installed_ref}" in applied
        assert proposal.state == "applied"
        assert proposal.activation is not None
        assert proposal.activation.activated_by == "memoryctl"
        assert await installed_checksum(client, schedule_id) == proposal.artifact_sha256

        rejected = await run(
            "reject", "--tenant", tenant, second, "--reason", "done by hand", "--json", env=env
        )
        wire = json.loads(ok(rejected))
        assert (wire["state"], wire["rejectionReason"]) == ("rejected", "done by hand")
        assert (await store.proposals.get(tenant, second)).state == "rejected"
        assert not await installed(client, PLAIN.automation(tenant, second))

        archived = await run("archive", "--tenant", tenant, first, env=env)
        assert "cannot be archived" in one_line_error(archived, 1)
        assert (await store.proposals.get(tenant, first)).state == "applied"
    finally:
        if await installed(client, schedule_id):
            await client.get_schedule_handle(schedule_id).delete()


async def test_approval_gate_apply_waits_for_decide(
    env: dict[str, str],
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    worker_task_queue: str,
    temporal_env: WorkflowEnvironment,
) -> None:
    client = temporal_env.client
    tenant = _tenant()
    (proposal_id,) = await _drafts(engine, store, tenant, worker_task_queue, agents=1)
    schedule_id = PLAIN.automation(tenant, proposal_id)
    gated = {**env, "AGENT_MEMORY_PROPOSAL_ACTIVATION": "approval-gate"}
    try:
        waiting = ok(await run("apply", "--tenant", tenant, proposal_id, env=gated))
        assert f"{proposal_id}: awaiting approval" in waiting
        assert (await store.proposals.get(tenant, proposal_id)).state == "draft"
        assert not await installed(client, schedule_id)

        granted = await run(
            "decide", "--tenant", tenant, proposal_id, "granted", "--json", env=gated
        )
        wire = json.loads(ok(granted))
        assert wire["state"] == "applied"
        assert wire["activation"]["mode"] == "approval-gate"
        stored = await store.proposals.get(tenant, proposal_id)
        assert wire["activation"]["installedArtifactRef"] == (
            f"temporal-schedule:{schedule_id}#sha256:{stored.artifact_sha256}"
        )
        assert await installed_checksum(client, schedule_id) == stored.artifact_sha256
    finally:
        if await installed(client, schedule_id):
            await client.get_schedule_handle(schedule_id).delete()


async def test_unknown_and_other_tenants_ids_are_not_found(
    engine: AsyncEngine, store: PostgresMemoryStore, database_url: str
) -> None:
    tenant, other = _tenant(), _tenant()
    (proposal_id,) = await _drafts(engine, store, tenant, "unused-queue", agents=1)
    title = (await store.proposals.get(tenant, proposal_id)).title
    assert title
    # Temporal unreachable: a proposal that is not found is refused before it is asked.
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": "127.0.0.1:9"}

    unknown = await in_process("show", "--tenant", tenant, "prop-000000000000000000000000", env=env)
    assert "not_found" in one_line_error(unknown, 1)
    for args in (
        ("show", "--tenant", other, proposal_id, "--json"),
        ("apply", "--tenant", other, proposal_id),
        ("reject", "--tenant", other, proposal_id, "--reason", "not yours"),
        ("archive", "--tenant", other, proposal_id),
    ):
        foreign = await in_process(*args, env=env)
        assert "not_found" in one_line_error(foreign, 1), args
        assert title not in foreign.stdout + foreign.stderr
    assert json.loads(ok(await in_process("list", "--tenant", other, "--json", env=env))) == []
    assert (await store.proposals.get(tenant, proposal_id)).state == "draft"

    bad_tenant = await in_process("list", "--tenant", "../x", env=env)
    assert "--tenant" in one_line_error(bad_tenant, 2)
