"""docs/proposals.md's proposals block, run verbatim (memoryctl and the `temporal` binary
as a user runs them) against the quick start's demo routine: the first dream of
mem://acme/support-agent proposes exactly one automation, the printed id is the one the
doc names, apply installs the schedule `temporal schedule list` shows, a trigger
runs the agent, and rejecting another proposal leaves nothing installed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import uuid

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from memoryctl.demo_data import TENANTS, seed_weekly_routine
from runtime.binaries import temporal_cli
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamInput
from tests.support.docs_blocks import block_commands, doc
from tests.support.proposals import last_mondays, seed_routine
from tests.support.waiting import eventually
from worker import build_worker
from workflows.dream import DreamWorkflow

DEMO_REF = TENANTS[0].memory_ref  # mem://acme/support-agent
PROPOSAL_ID = "prop-2945854dd878bcc1ed77609f"


def _run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    program = (
        [temporal_cli()] if argv[0] == "temporal" else [sys.executable, "-m", "memoryctl.main"]
    )
    return subprocess.run(
        [*program, *argv[1:]],
        env={**os.environ, "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


async def test_the_readme_proposal_block_applies_the_demo_routine(
    temporal_env: WorkflowEnvironment,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    database_url: str,
) -> None:
    client = temporal_env.client
    address = client.service_client.config.target_host
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": address}
    commands = block_commands(doc("proposals"), "proposals")
    assert [c.split()[:3] for c in commands] == [
        ["memoryctl", "proposals", "list"],
        ["memoryctl", "proposals", "show"],
        ["memoryctl", "proposals", "apply"],
        ["temporal", "schedule", "list"],
        ["temporal", "schedule", "trigger"],
        ["temporal", "workflow", "list"],
    ]
    await seed_weekly_routine(store, DEMO_REF)  # what the quick start seeds
    other_ref = f"mem://acme/agent-{uuid.uuid4().hex[:6]}"
    await seed_routine(engine, other_ref, last_mondays(3))
    # The doc's commands target the default task queue, as the quick start's worker.
    async with build_worker(client, Settings(), store, StaticSecretVault({})):
        dream = await client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=DEMO_REF),
            id=f"dream-{uuid.uuid4().hex[:8]}",
            task_queue=Settings().task_queue,
        )
        assert dream.proposals is not None and dream.proposals.created == (PROPOSAL_ID,)
        schedule_id = PLAIN.automation("acme", PROPOSAL_ID)
        try:
            listed = await asyncio.to_thread(_run, commands[0], env)
            assert listed.returncode == 0 and PROPOSAL_ID in listed.stdout, listed.stderr
            inert = await asyncio.to_thread(_run, commands[3], env)
            assert inert.returncode == 0 and schedule_id not in inert.stdout
            shown = await asyncio.to_thread(_run, commands[1], env)
            assert shown.returncode == 0 and '"dayOfWeek": "monday"' in shown.stdout
            applied = await asyncio.to_thread(_run, commands[2], env)
            assert applied.returncode == 0 and "applied" in applied.stdout, applied.stderr
            schedules = await asyncio.to_thread(_run, commands[3], env)
            assert schedules.returncode == 0 and schedule_id in schedules.stdout
            triggered = await asyncio.to_thread(_run, commands[4], env)
            assert triggered.returncode == 0, triggered.stderr
            query = f"WorkflowType = 'AgentRunWorkflow' AND MemoryRef = '{DEMO_REF}'"

            async def agent_ran() -> bool:
                return bool([run async for run in client.list_workflows(query)])

            await eventually(agent_ran, seconds=20)
            runs = await asyncio.to_thread(_run, commands[5], env)
            assert runs.returncode == 0 and schedule_id in runs.stdout, runs.stdout

            # Rejecting another proposal leaves nothing installed.
            await store.proposals.synthesize(
                parse_memory_ref(other_ref), "readme-run", Settings().task_queue
            )
            (other,) = await store.proposals.list("acme", memory_ref=parse_memory_ref(other_ref))
            rejected = await asyncio.to_thread(
                _run, f"memoryctl proposals reject --tenant acme {other.id} --json", env
            )
            assert rejected.returncode == 0 and json.loads(rejected.stdout)["state"] == "rejected"
            after = await asyncio.to_thread(_run, commands[3], env)
            assert PLAIN.automation("acme", other.id) not in after.stdout
        finally:
            with contextlib.suppress(RPCError):
                await client.get_schedule_handle(schedule_id).delete()
