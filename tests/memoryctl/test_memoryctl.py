"""The project CLI: schedules against a real dev server, and bad input exits non-zero
naming the field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import chain, combinations
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import ScheduleActionStartWorkflow
from temporalio.testing import WorkflowEnvironment

from memoryctl.dream_schedules import schedule_id_for
from runtime.binaries import temporal_cli
from schemas.memory_ref import MemoryRef, parse_memory_ref, try_parse_memory_ref
from workflows.policies import DREAM_EXECUTION_TIMEOUT


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
    assert schedule_id_for("mem://acme/agent-1") == "dream:acme:agent-1"
    assert schedule_id_for("mem://acme/agent-1/support") == "dream:acme:agent-1:support"


def test_schedule_ids_of_refs_differing_only_in_where_a_dash_falls_differ() -> None:
    # With '-' as the separator both were dream-a-b-c: trigger/delete by that id reached
    # the other tenant's schedule.
    assert schedule_id_for("mem://a-b/c") != schedule_id_for("mem://a/b-c")
    assert schedule_id_for("mem://a/b-c") != schedule_id_for("mem://a/b/c")


# Segments from the full grammar, and from a tiny alphabet rich in '-', '_' and '.' so
# that near-collisions (same characters, different segment boundaries) come up often.
_any_segment = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?", fullmatch=True)
_dashy_segment = st.from_regex(r"[ab](?:[ab._-]{0,6}[ab_-])?", fullmatch=True)
_segment = st.one_of(_dashy_segment, _any_segment)
_refs = st.builds(MemoryRef, _segment, _segment, st.none() | _segment)
_dashy_refs = st.builds(MemoryRef, _dashy_segment, _dashy_segment, st.none() | _dashy_segment)


@given(_refs)
def test_schedule_id_for_can_be_decoded_back_to_its_ref(ref: MemoryRef) -> None:
    # A left inverse exists, so no two refs share an id: ':' never occurs in a segment.
    assert parse_memory_ref(str(ref)) == ref  # the strategy yields only valid refs
    prefix, *segments = schedule_id_for(str(ref)).split(":")
    assert prefix == "dream"
    assert MemoryRef(*segments) == ref


def _recuts(ref: MemoryRef) -> Iterator[MemoryRef]:
    """Every valid ref with the same characters as ``ref`` but its '/' and '-' moved:
    the refs most likely to share an id with it (random pairs almost never collide)."""
    path = str(ref).removeprefix("mem://")
    cuts = [i for i, char in enumerate(path) if char in "/-"]
    for slashes in chain(combinations(cuts, 1), combinations(cuts, 2)):
        text = "".join(
            "/" if i in slashes else "-" if i in cuts else char for i, char in enumerate(path)
        )
        other = try_parse_memory_ref("mem://" + text)
        if other is not None:
            yield other


@given(_dashy_refs)
def test_schedule_id_for_is_injective(ref: MemoryRef) -> None:
    for other in _recuts(ref):
        assert (schedule_id_for(str(other)) == schedule_id_for(str(ref))) == (other == ref)


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
    assert "dream:cli-tenant:agent-9" in created.stdout
    listed = memoryctl("schedule", "list", address=address)
    assert listed.returncode == 0, listed.stderr
    assert "dream:cli-tenant:agent-9" in listed.stdout
    assert "mem://cli-tenant/agent-9" in listed.stdout
    handle = temporal_env.client.get_schedule_handle("dream:cli-tenant:agent-9")
    description = await handle.describe()
    assert description.schedule.policy.overlap.name == "SKIP"
    # Without an execution timeout a stuck run would hold the Skip schedule forever.
    action = description.schedule.action
    assert isinstance(action, ScheduleActionStartWorkflow)
    assert action.execution_timeout == DREAM_EXECUTION_TIMEOUT
    deleted = memoryctl("schedule", "delete", "dream:cli-tenant:agent-9", address=address)
    assert deleted.returncode == 0, deleted.stderr
    assert "dream:cli-tenant:agent-9" not in memoryctl("schedule", "list", address=address).stdout


async def test_schedule_list_names_the_memory_ref_of_a_schedule_the_temporal_cli_made(
    temporal_env: WorkflowEnvironment,
) -> None:
    """The README's `temporal schedule create` sets no memo: the list reads the
    memoryRef from the schedule's input instead of showing '?'."""
    address = temporal_env.client.service_client.config.target_host
    created = subprocess.run(
        [
            temporal_cli(), "schedule", "create", "--address", address,
            "--schedule-id", "dream-cli-made", "--cron", "0 23 * * *",
            "--workflow-id", "dream-cli-made", "--task-queue", "agent-memory",
            "--type", "DreamWorkflow",
            "--input", '{"memoryRef": "mem://cli-made/agent-7", "tokenBudget": 8000}',
        ],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    try:
        listed = memoryctl("schedule", "list", address=address)
        assert listed.returncode == 0, listed.stderr
        row = next(line for line in listed.stdout.splitlines() if "dream-cli-made" in line)
        assert "mem://cli-made/agent-7" in row and "?" not in row
    finally:
        await temporal_env.client.get_schedule_handle("dream-cli-made").delete()


# Long-running processes with no result to print (mcp speaks the MCP protocol on stdout),
# and a command whose output is the JSON file itself.
WITHOUT_JSON = {"serve", "demo", "mcp", "index show"}


def test_every_command_takes_json_as_the_docs_promise() -> None:
    """docs/cli.md: 'Every command has --json for scripts'."""
    import typer

    from memoryctl.main import app

    def leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                yield from leaves(child, (*path, name))
        else:
            yield " ".join(path), command

    missing = sorted(
        name
        for name, command in leaves(typer.main.get_command(app))
        if name not in WITHOUT_JSON
        and "--json" not in {opt for param in command.params for opt in getattr(param, "opts", [])}
    )
    assert missing == []


def test_no_help_shows_a_flag_as_if_it_took_a_value() -> None:
    # Typer 0.29 printed "--json <bool>" (issue 41): every command's help, as a user sees it.
    import typer
    from typer.testing import CliRunner

    from memoryctl.main import app

    def paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
        yield path
        for name, child in (getattr(command, "commands", None) or {}).items():
            yield from paths(child, (*path, name))

    runner = CliRunner()
    helps = {
        " ".join(path): runner.invoke(app, [*path, "--help"], terminal_width=120).output
        for path in paths(typer.main.get_command(app))
    }
    assert len(helps) > 40 and "--json" in helps["memory list"]
    assert [name for name, text in helps.items() if "<bool>" in text] == []


async def test_schedule_commands_print_json(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    ref = "mem://json-tenant/agent-3"
    created = memoryctl("schedule", "create", "--memory-ref", ref, "--json", address=address)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout) == {
        "scheduleId": "dream:json-tenant:agent-3",
        "memoryRef": ref,
        "cron": "0 23 * * *",
    }
    listed = json.loads(memoryctl("schedule", "list", "--json", address=address).stdout)
    (row,) = [row for row in listed if row["scheduleId"] == "dream:json-tenant:agent-3"]
    assert row["memoryRef"] == ref and row["nextRun"].endswith("23:00:00+00:00")
    deleted = memoryctl(
        "schedule", "delete", "dream:json-tenant:agent-3", "--json", address=address
    )
    assert json.loads(deleted.stdout) == {
        "scheduleId": "dream:json-tenant:agent-3",
        "deleted": True,
    }


def test_counts_read_as_words() -> None:
    """Plurals a person reads (issue 41): "1 archive", "3 archives", "0 archives"."""
    from memoryctl.cli import plural

    assert [plural(n, "archive") for n in (0, 1, 3, 1200)] == [
        "0 archives",
        "1 archive",
        "3 archives",
        "1,200 archives",
    ]
    assert plural(2, "entry", "entries") == "2 entries"


def test_the_help_names_no_source_file() -> None:
    """memoryctl --help is read by people who have not opened the code (issue 41)."""
    shown = subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert ".py" not in shown.stdout, shown.stdout
    assert "memoryctl mcp" in shown.stdout
