"""The project CLI: schedules against a real dev server, and bad input exits non-zero
naming the field."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from temporalio.testing import WorkflowEnvironment

from memoryctl.schedules import schedule_id_for


def memoryctl(*args: str, address: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    if address:
        env["TEMPORAL_ADDRESS"] = address
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_schedule_id_is_readable() -> None:
    assert schedule_id_for("mem://acme/agent-1") == "dream-acme-agent-1"
    assert schedule_id_for("mem://acme/agent-1/support") == "dream-acme-agent-1-support"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["schedule", "create", "--memory-ref", "mem://../x"], "memoryRef"),
        (["schedule", "create", "--memory-ref", "http://acme/a"], "memoryRef: must start with"),
        (
            ["schedule", "create", "--memory-ref", "mem://a/b", "--token-budget", "0"],
            "token-budget",
        ),
        (["events", "--memory-ref", "mem://acme"], "memoryRef"),
    ],
)
def test_bad_input_exits_non_zero_and_names_the_field(args: list[str], message: str) -> None:
    result = memoryctl(*args)
    assert result.returncode == 2
    assert message in result.stderr + result.stdout


async def test_schedule_create_list_delete(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    created = memoryctl(
        "schedule", "create", "--memory-ref", "mem://cli-tenant/agent-9", "--token-budget",
        "5000", address=address,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "dream-cli-tenant-agent-9" in created.stdout
    listed = memoryctl("schedule", "list", address=address)
    assert listed.returncode == 0, listed.stderr
    assert "dream-cli-tenant-agent-9" in listed.stdout
    assert "mem://cli-tenant/agent-9" in listed.stdout
    handle = temporal_env.client.get_schedule_handle("dream-cli-tenant-agent-9")
    description = await handle.describe()
    assert description.schedule.policy.overlap.name == "SKIP"
    deleted = memoryctl("schedule", "delete", "dream-cli-tenant-agent-9", address=address)
    assert deleted.returncode == 0, deleted.stderr
    assert "dream-cli-tenant-agent-9" not in memoryctl("schedule", "list", address=address).stdout
