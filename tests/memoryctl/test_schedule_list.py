"""`memoryctl schedule list` (issue 41): every schedule of the namespace, whoever created
it, with what it starts, its target and its cron as a person wrote it. The schedules come
from the `temporal` CLI exactly as the README creates them (the server keeps no cron
string, only calendars), from `memoryctl schedule create`, and from the installer of an
applied proposal, against a real dev server."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from typing import Any

import pytest
from temporalio.client import WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from activities.automation_schedules import schedule_of
from runtime.binaries import temporal_cli
from schemas.proposals import AutomationArtifact
from tests.support.docs_blocks import README, block_commands
from tests.support.waiting import eventually

TASK_QUEUE = "agent-memory"
AUTOMATION_ID = "automation/acme/prop-list-1"


def memoryctl(*args: str, address: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "220", "TEMPORAL_ADDRESS": address}
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def temporal(argv: list[str], address: str) -> None:
    assert argv[0] == "temporal"
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    done = subprocess.run(
        [temporal_cli(), *argv[1:]], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def readme_create(block: str) -> list[str]:
    """The README block's `temporal schedule create`, verbatim."""
    commands = block_commands(README, block)
    (create,) = [c for c in commands if c.startswith("temporal schedule create")]
    return shlex.split(create)


def created_like_readme(schedule_id: str, cron: list[str], kind: str, *rest: str) -> list[str]:
    """The README's dream `create` with another id, times, workflow type and input."""
    return [
        "temporal", "schedule", "create", "--schedule-id", schedule_id, *cron,
        "--overlap-policy", "Skip", "--execution-timeout", "6h", "--workflow-id", schedule_id,
        "--task-queue", TASK_QUEUE, "--type", kind, *rest,
    ]  # fmt: skip


def ref(tenant: str, agent: str) -> tuple[str, str]:
    """A row's target and memoryRef when it is about one memoryRef."""
    return (f"mem://{tenant}/{agent}",) * 2


# id -> (kind, target, memoryRef, cron, jitter, paused), for the schedules created below.
EXPECTED: dict[str, tuple[Any, ...]] = {
    "dream:acme:agent-1": ("dream", *ref("acme", "agent-1"), "0 23 * * *", None, False),
    "fleet-dream": ("fleet dream", "every tenant", None, "0 23 * * *", "10m", False),
    "list:quarter-hourly": ("fleet dream", "tenant acme", None, "*/15 * * * *", None, False),
    "list:weekdays": ("dream", *ref("list-acme", "agent-2"), "0 9 * * 1-5", None, True),
    "list:twice-monthly": (
        "ConsolidationWorkflow",
        *ref("list-acme", "agent-3"),
        "30 8 1,15 * *",
        None,
        False,
    ),
    "list:paris": (
        "dream",
        *ref("list-acme", "agent-4"),
        "CRON_TZ=Europe/Paris 0 7 * * *",
        None,
        False,
    ),
    "list:interval": ("ReembedWorkflow", "-", None, "every 2h offset 15m", None, False),
    "dream:list-acme:agent-5": ("dream", *ref("list-acme", "agent-5"), "@daily", None, False),
    AUTOMATION_ID: (
        "automation",
        *ref("acme", "agent-1"),
        "CRON_TZ=Europe/Berlin 30 8 * * 1",
        None,
        False,
    ),
}
# (per-agent dream, fleet dream) pairs the list notes: fleet-dream covers every tenant.
OVERLAPS = {
    ("dream:acme:agent-1", "fleet-dream (every tenant)", "mem://acme/agent-1"),
    ("dream:acme:agent-1", "list:quarter-hourly (tenant acme)", "mem://acme/agent-1"),
    ("list:paris", "fleet-dream (every tenant)", "mem://list-acme/agent-4"),
    ("dream:list-acme:agent-5", "fleet-dream (every tenant)", "mem://list-acme/agent-5"),
}


async def _create_all(env: WorkflowEnvironment, address: str) -> None:
    for argv in (
        readme_create("temporal-cli"),
        readme_create("temporal-cli-fleet"),
        created_like_readme(
            "list:quarter-hourly", ["--cron", "*/15 * * * *"], "FleetDreamWorkflow",
            "--input", '{"tenant": "acme"}',
        ),
        created_like_readme(
            "list:weekdays", ["--cron", "0 9 * * 1-5"], "DreamWorkflow", "--paused",
            "--input", '{"memoryRef": "mem://list-acme/agent-2"}',
        ),
        created_like_readme(
            "list:twice-monthly", ["--cron", "30 8 1,15 * *"], "ConsolidationWorkflow",
            "--search-attribute", 'MemoryRef="mem://list-acme/agent-3"',
            "--input", '{"memoryRef": "mem://list-acme/agent-3"}',
        ),
        created_like_readme(
            "list:paris", ["--cron", "CRON_TZ=Europe/Paris 0 7 * * *"], "DreamWorkflow",
            "--input", '{"memoryRef": "mem://list-acme/agent-4"}',
        ),
        created_like_readme("list:interval", ["--interval", "2h/15m"], "ReembedWorkflow"),
    ):  # fmt: skip
        await asyncio.to_thread(temporal, argv, address)
    made = await asyncio.to_thread(
        memoryctl, "schedule", "create", "--memory-ref", "mem://list-acme/agent-5",
        "--cron", "@daily", address=address,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    # As activities/proposal_activities.py installs an applied automation proposal.
    artifact = AutomationArtifact.model_validate(
        {
            "schedule": {
                "dayOfWeek": "monday",
                "hour": 8,
                "minute": 30,
                "timeZone": "Europe/Berlin",
            },
            "action": {"taskQueue": TASK_QUEUE, "input": {"memoryRef": "mem://acme/agent-1"}},
        }
    )
    memo = {"proposalId": "prop-list-1", "artifactSha256": "0" * 64}
    await env.client.create_schedule(
        AUTOMATION_ID, schedule_of(artifact, AUTOMATION_ID, memo), memo=memo
    )


async def _delete_all(env: WorkflowEnvironment) -> None:
    for schedule_id in EXPECTED:
        try:
            await env.client.get_schedule_handle(schedule_id).delete()
        except RPCError as error:  # not created, or deleted by the test: nothing to clean
            if error.status != RPCStatusCode.NOT_FOUND:
                raise


async def _listed(env: WorkflowEnvironment, address: str) -> dict[str, dict[str, Any]]:
    """The JSON rows of our schedules, once the server's listing (eventually consistent)
    has them all."""

    async def all_listed() -> bool:
        listed = {schedule.id async for schedule in await env.client.list_schedules()}
        return EXPECTED.keys() <= listed

    await eventually(all_listed, seconds=20)
    listed = await asyncio.to_thread(memoryctl, "schedule", "list", "--json", address=address)
    assert listed.returncode == 0, listed.stderr
    rows = {row["scheduleId"]: row for row in json.loads(listed.stdout)}
    return {schedule_id: row for schedule_id, row in rows.items() if schedule_id in EXPECTED}


async def test_schedule_list_shows_every_schedule_with_its_cron_as_written(
    temporal_env: WorkflowEnvironment,
) -> None:
    address = temporal_env.client.service_client.config.target_host
    await _delete_all(temporal_env)
    try:
        await _create_all(temporal_env, address)
        rows = await _listed(temporal_env, address)
        fields = ("kind", "target", "memoryRef", "cron", "jitter", "paused")
        shown = {
            schedule_id: tuple(row.get(field) for field in fields)
            for schedule_id, row in rows.items()
        }
        assert shown == EXPECTED
        # A paused schedule may have no next run; every other one has it in UTC.
        assert rows["dream:acme:agent-1"]["nextRun"].endswith("23:00:00+00:00")
        assert rows["fleet-dream"]["nextRun"].endswith("+00:00")

        table = await asyncio.to_thread(memoryctl, "schedule", "list", address=address)
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        header = next(line for line in lines if "schedule id" in line)
        for column in ("starts", "target", "cron", "next run (UTC)", "paused"):
            assert column in header
        fleet = next(line for line in lines if "fleet-dream" in line and "│" in line)
        for cell in ("fleet dream", "every tenant", "0 23 * * * (jitter 10m)", " no "):
            assert cell in fleet, fleet
        weekdays = next(line for line in lines if "list:weekdays" in line)
        assert "0 9 * * 1-5" in weekdays and " yes " in weekdays, weekdays
        # The overlap the README warns about, once per pair; never for a paused schedule.
        notes = {
            line for line in lines if line.startswith("note: ") and line.split()[1] in EXPECTED
        }
        assert notes == {
            f"note: {dream} and {fleet} both dream {memory_ref}: keep either the fleet "
            "schedule or the per-agent one"
            for dream, fleet, memory_ref in OVERLAPS
        }
    finally:
        await _delete_all(temporal_env)


@pytest.mark.parametrize("schedule_id", ["fleet-dream", AUTOMATION_ID])
async def test_trigger_and_delete_take_any_schedule_id(
    temporal_env: WorkflowEnvironment, schedule_id: str
) -> None:
    """Not only dreams: deleting an automation's schedule is how docs/proposals.md
    uninstalls it. Nothing serves these task queues here, so a triggered run just waits."""
    address = temporal_env.client.service_client.config.target_host
    await _delete_all(temporal_env)
    try:
        await _create_all(temporal_env, address)
        triggered = await asyncio.to_thread(
            memoryctl, "schedule", "trigger", schedule_id, "--json", address=address
        )
        assert triggered.returncode == 0, triggered.stderr
        assert json.loads(triggered.stdout) == {"scheduleId": schedule_id, "triggered": True}
        # The trigger started a run (nothing serves its task queue here: it waits).
        await eventually(lambda: _started_runs(temporal_env, schedule_id), seconds=20)
        deleted = await asyncio.to_thread(
            memoryctl, "schedule", "delete", schedule_id, "--json", address=address
        )
        assert deleted.returncode == 0, deleted.stderr
        assert json.loads(deleted.stdout) == {"scheduleId": schedule_id, "deleted": True}
        rows = await asyncio.to_thread(memoryctl, "schedule", "list", "--json", address=address)
        assert schedule_id not in {row["scheduleId"] for row in json.loads(rows.stdout)}
    finally:
        await _delete_all(temporal_env)
        # A waiting run would otherwise outlive the test.
        for run in await _runs(temporal_env, schedule_id):
            if run.status == WorkflowExecutionStatus.RUNNING:
                await temporal_env.client.get_workflow_handle(run.id, run_id=run.run_id).terminate()


async def _runs(env: WorkflowEnvironment, schedule_id: str) -> list[WorkflowExecution]:
    query = f"TemporalScheduledById = '{schedule_id}'"
    return [run async for run in env.client.list_workflows(query)]


async def _started_runs(env: WorkflowEnvironment, schedule_id: str) -> bool:
    return bool(await _runs(env, schedule_id))
