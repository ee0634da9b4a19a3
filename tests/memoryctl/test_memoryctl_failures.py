"""memoryctl when things go wrong: Temporal or the database down or silent, a bad cron,
an unknown or taken schedule id. Each failure is exactly one line on stderr (never a
traceback, never the DATABASE_URL password) and a non-zero exit status: 1 for a refused
operation or unreachable infrastructure, 2 for bad input."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from memory.storage.embedded import asyncpg_url_for
from memoryctl.dream_schedules import schedule_id_for
from tests.support.factories import note

PASSWORD = "pw"
TEMPORAL_COMMANDS = [
    ["schedule", "create", "--memory-ref", "mem://acme/agent-1"],
    ["schedule", "list"],
    ["schedule", "trigger", "dream:acme:agent-1"],
    ["schedule", "delete", "dream:acme:agent-1"],
]
DATABASE_COMMANDS = [
    ["db", "upgrade"],
    ["index", "show", "--memory-ref", "mem://acme/agent-1"],
    ["events", "--memory-ref", "mem://acme/agent-1"],
]


def memoryctl(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # A narrow terminal: a message that rich would wrap shows up as two lines.
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *args],
        env={**os.environ, "COLUMNS": "60", **env},
        capture_output=True,
        text=True,
        timeout=30,  # a hang fails the test instead of the suite
    )


def one_line_error(result: subprocess.CompletedProcess[str], status: int) -> str:
    """The single stderr line of a failed command, after checking status and shape."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert result.returncode == status, result.stderr
    return lines[0]


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that completes the TCP handshake and then never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield int(listener.getsockname()[1])


def _id(args: list[str]) -> str:
    return " ".join(args[:2])


# ---------------------------------------------------------------------- Temporal down


@pytest.mark.parametrize("args", TEMPORAL_COMMANDS, ids=_id)
def test_temporal_down_is_one_line(args: list[str], closed_port: int) -> None:
    address = f"127.0.0.1:{closed_port}"
    line = one_line_error(memoryctl(*args, TEMPORAL_ADDRESS=address), 1)
    assert f"cannot reach Temporal at {address}: connection refused" in line
    assert "TEMPORAL_ADDRESS" in line


def test_temporal_that_never_answers_fails_within_seconds(silent_port: int) -> None:
    started = time.monotonic()
    result = memoryctl("schedule", "list", TEMPORAL_ADDRESS=f"127.0.0.1:{silent_port}")
    assert time.monotonic() - started < 15
    assert "no answer within 5 s" in one_line_error(result, 1)


async def test_unknown_namespace_is_one_line(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    result = memoryctl(
        "schedule", "trigger", "dream:acme:agent-1",
        TEMPORAL_ADDRESS=address, TEMPORAL_NAMESPACE="no-such-namespace",
    )  # fmt: skip
    line = one_line_error(result, 1)
    assert "no-such-namespace" in line
    assert "no such schedule" not in line  # the namespace is missing, not the schedule


# ---------------------------------------------------------------------- database down


@pytest.mark.parametrize("args", DATABASE_COMMANDS, ids=_id)
def test_database_down_is_one_line_without_the_password(args: list[str], closed_port: int) -> None:
    url = f"postgresql+asyncpg://u:{PASSWORD}@127.0.0.1:{closed_port}/x"
    result = memoryctl(*args, DATABASE_URL=url)
    line = one_line_error(result, 1)
    assert f"cannot reach the database at 127.0.0.1:{closed_port}/x" in line
    assert "DATABASE_URL" in line
    assert PASSWORD not in result.stdout + result.stderr


def test_database_that_never_answers_fails_within_seconds(
    silent_port: int, closed_port: int
) -> None:
    def elapsed(port: int) -> tuple[float, subprocess.CompletedProcess[str]]:
        url = f"postgresql+asyncpg://u:{PASSWORD}@127.0.0.1:{port}/x"
        started = time.monotonic()
        result = memoryctl("events", "--memory-ref", "mem://acme/agent-1", DATABASE_URL=url)
        return time.monotonic() - started, result

    # The same command against a port that refuses at once is the baseline: the process
    # start and its imports, which a loaded machine stretches (a bound on the whole run
    # failed at 9.5 s against 9 with nothing wrong). What is left is the wait for the
    # silent server: the 5 s timeout, far from asyncpg's own default of 60 s.
    refused, _ = elapsed(closed_port)
    silent, result = elapsed(silent_port)
    assert silent - refused < 15, (silent, refused)
    assert "no answer within 5 s" in one_line_error(result, 1)


def test_database_that_refuses_the_connection_is_one_line(pg_server) -> None:
    url = asyncpg_url_for(pg_server, "no_such_database")
    result = memoryctl("events", "--memory-ref", "mem://acme/agent-1", DATABASE_URL=url)
    line = one_line_error(result, 1)
    assert 'refused the connection (database "no_such_database" does not exist' in line


async def test_database_without_the_schema_says_to_upgrade(pg_server) -> None:
    name = f"empty_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(asyncpg_url_for(pg_server), isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.exec_driver_sql(f"CREATE DATABASE {name}")
    await admin.dispose()
    url = asyncpg_url_for(pg_server, name)
    result = memoryctl("events", "--memory-ref", "mem://acme/agent-1", DATABASE_URL=url)
    assert "no memory schema" in one_line_error(result, 1)
    assert "run memoryctl db upgrade" in result.stderr


@pytest.mark.parametrize("url", ["not a url", "mysql://u:pw@db/x", "postgresql://u:pw@db:port/x"])
def test_malformed_database_url_is_bad_input(url: str) -> None:
    result = memoryctl("db", "upgrade", DATABASE_URL=url)
    assert one_line_error(result, 2).startswith("error: DATABASE_URL: must be a URL")
    assert PASSWORD not in result.stderr


async def test_events_are_one_json_object_a_line_whatever_the_width(
    database_url: str, store
) -> None:
    """A pipe is 80 columns to rich; events wider than that stay one line each."""
    ref = f"mem://wide-{uuid.uuid4().hex[:8]}/agent-1"
    await store.put_many(ref, [note(f"a note long enough to matter {i} " * 4) for i in range(3)])
    for command in (("events",), ("events", "tail", "--json")):
        result = memoryctl(*command, "--memory-ref", ref, DATABASE_URL=database_url)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) >= 3 and any(len(line) > 80 for line in lines), command
        assert all(json.loads(line)["memoryRef"] == ref for line in lines), command


async def test_a_closed_pipe_ends_quietly_not_as_a_database_outage(
    database_url: str, store, tmp_path
) -> None:
    ref = f"mem://pipe-{uuid.uuid4().hex[:8]}/agent-1"
    await store.put_many(ref, [note(f"piped note {i}") for i in range(400)])
    errors = tmp_path / "stderr"
    pipeline = (
        f"{shlex.quote(sys.executable)} -m memoryctl.main events tail --memory-ref {ref} "
        f"2>{shlex.quote(str(errors))} | head -n 1; echo status=${{PIPESTATUS[0]}}"
    )
    result = subprocess.run(
        ["bash", "-c", pipeline],
        capture_output=True,
        text=True,
        env={**os.environ, "DATABASE_URL": database_url},
        timeout=120,
        check=False,
    )
    first, status = result.stdout.splitlines()
    assert ref in first
    # Click's ending for a closed pipe: exit 1 without a word (it was "cannot reach the
    # database", a BrokenPipeError being an OSError).
    assert status == "status=1"
    assert errors.read_text() == ""


def test_database_commands_still_work_against_a_live_database(database_url: str) -> None:
    assert memoryctl("db", "upgrade", DATABASE_URL=database_url).returncode == 0
    events = memoryctl("events", "--memory-ref", "mem://acme/agent-1", DATABASE_URL=database_url)
    assert (events.returncode, events.stdout, events.stderr) == (0, "", "")


# ---------------------------------------------------------------------- bad arguments


def _create_with_cron(
    temporal_env: WorkflowEnvironment, cron: str
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """`memoryctl schedule create --cron CRON` for a fresh memoryRef."""
    address = temporal_env.client.service_client.config.target_host
    ref = f"mem://cron-{uuid.uuid4().hex[:8]}/agent-1"
    return ref, memoryctl(
        "schedule", "create", "--memory-ref", ref, "--cron", cron, TEMPORAL_ADDRESS=address
    )


@pytest.mark.parametrize("cron", ["61 * * * *", "not a cron at all", "*/0 * * * *"])
async def test_invalid_cron_is_bad_input_and_creates_nothing(
    temporal_env: WorkflowEnvironment, cron: str
) -> None:
    ref, result = _create_with_cron(temporal_env, cron)
    line = one_line_error(result, 2)
    assert line.startswith("error: cron: not a valid cron expression ("), line
    assert cron not in line  # what was typed is not repeated
    with pytest.raises(RPCError) as missing:
        await temporal_env.client.get_schedule_handle(schedule_id_for(ref)).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND


@pytest.mark.parametrize("cron", ["0 0 23 * * *", "0 23 * * * 2027", "0 23 * *"])
async def test_a_cron_without_five_fields_is_refused_not_read_another_way(
    temporal_env: WorkflowEnvironment, cron: str
) -> None:
    """The server reads six fields as seconds first or a year last: a Quartz-style
    "0 0 23 * * *" (23:00 daily) would run at midnight on the 23rd, monthly."""
    ref, result = _create_with_cron(temporal_env, cron)
    line = one_line_error(result, 2)
    fields = len(cron.split())
    assert line == (
        "error: cron: 5 fields (minute hour day-of-month month day-of-week), "
        f"got {fields}; no seconds or year field"
    )
    with pytest.raises(RPCError):
        await temporal_env.client.get_schedule_handle(schedule_id_for(ref)).describe()


@pytest.mark.parametrize("cron", ["CRON_TZ=Europe/Paris 0 23 * * *", "@daily", "@every 12h"])
async def test_time_zones_and_descriptors_are_still_accepted(
    temporal_env: WorkflowEnvironment, cron: str
) -> None:
    ref, result = _create_with_cron(temporal_env, cron)
    assert result.returncode == 0, result.stderr
    await temporal_env.client.get_schedule_handle(schedule_id_for(ref)).delete()


@pytest.mark.parametrize("command", ["trigger", "delete"])
def test_unknown_schedule_id_is_one_line(temporal_env: WorkflowEnvironment, command: str) -> None:
    address = temporal_env.client.service_client.config.target_host
    result = memoryctl("schedule", command, "dream:nobody:nothing", TEMPORAL_ADDRESS=address)
    line = one_line_error(result, 1)
    assert line == "error: schedule id 'dream:nobody:nothing': no such schedule"


async def test_taken_schedule_id_is_one_line(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    ref = f"mem://taken-{uuid.uuid4().hex[:8]}/agent-1"
    first = memoryctl("schedule", "create", "--memory-ref", ref, TEMPORAL_ADDRESS=address)
    assert first.returncode == 0, first.stderr
    again = memoryctl("schedule", "create", "--memory-ref", ref, TEMPORAL_ADDRESS=address)
    assert "already exists" in one_line_error(again, 1)
    await temporal_env.client.get_schedule_handle(schedule_id_for(ref)).delete()


# ---------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ["schedule", "create", "--memory-ref", "mem://a/b", "--token-budget", "0"],
            "--token-budget",
        ),
        (["schedule", "create"], "--memory-ref"),
        (["events", "--memory-ref", "mem://a/b", "--limit", "x"], "--limit"),
        # What was typed is not repeated (it may be a value that lost its option name).
        (["schedule", "frobnicate"], "No such command '<value>'"),
    ],
)
def test_usage_errors_are_one_line_naming_the_option(args: list[str], named: str) -> None:
    line = one_line_error(memoryctl(*args), 2)
    assert named in line


def test_a_value_that_lost_its_option_name_is_not_echoed() -> None:
    """`memory put` with the text but without --content, or a value where a command
    goes: click would quote it back; memoryctl says what is wrong without it."""
    secret = "the vault code is 4471-alpha"
    line = one_line_error(memoryctl("memory", "put", "--memory-ref", "mem://a/b", secret), 2)
    assert secret not in line and "4471" not in line
    line = one_line_error(memoryctl("sk_live_4471secret"), 2)
    assert "No such command '<value>'" in line and "4471" not in line
    line = one_line_error(memoryctl("events", "--memory-ref", "mem://a/b", "--limit", "4471x"), 2)
    assert "--limit" in line and "4471" not in line
