"""memoryctl keys, memory, dream, events tail, capabilities and serve against the test's
own database, the dev server and a worker on the test's task queue: keys authenticate
until revoked and are never listed, entries round trip (SR-1 redacted) while only
`memory get` prints content, a dream prints its summary, `events tail --follow` streams
until Ctrl-C, capabilities reports what is down without failing, and serve answers until
Ctrl-C. Commands whose exit path, signals or usage errors are under test run as the
console script (a subprocess; independent ones concurrently); the round trips of many
database commands run the same typer app in-process (InProcess), which spares an
interpreter start-up per command and keeps this file fast."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import IO

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import MAX_SCOPES, ApiKeyStore, KeyIdentity
from schemas.errors import InvalidInput
from tests.support.factories import WRITTEN_TEXTS, canary, note, unique_ref
from tests.support.http_app import free_port

COMMAND = [sys.executable, "-m", "memoryctl.main"]
Result = subprocess.CompletedProcess[str]


def memoryctl(*args: str, env: dict[str, str], stdin_text: str | None = None) -> Result:
    # A wide terminal: ids in tables stay whole. No terminal on stdin.
    return subprocess.run(
        [*COMMAND, *args],
        env={**os.environ, "COLUMNS": "200", **env},
        input=stdin_text,
        stdin=subprocess.DEVNULL if stdin_text is None else None,
        capture_output=True,
        text=True,
        timeout=60,  # a hang fails the test instead of the suite
    )


async def run(*args: str, env: dict[str, str], stdin_text: str | None = None) -> Result:
    """memoryctl in a thread: the test's event loop (and its worker) keeps running."""
    return await asyncio.to_thread(memoryctl, *args, env=env, stdin_text=stdin_text)


def ok(result: Result) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout


def one_line_error(result: Result, status: int) -> str:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert result.returncode == status, result.stderr
    return lines[0]


class InProcess:
    """memoryctl through typer's CliRunner in a thread (one at a time: the runner swaps
    sys.stdout): the same app as the console script, without an interpreter start-up
    per command. Exit statuses and the one-line errors are those of the script, except
    click's usage errors (those are checked through the script, see below)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = {"COLUMNS": "200", **env}

    async def __call__(self, *args: str, stdin_text: str | None = None) -> Result:
        return await asyncio.to_thread(self._invoke, list(args), stdin_text)

    def _invoke(self, args: list[str], stdin_text: str | None) -> Result:
        from memoryctl.main import app

        done = CliRunner().invoke(app, args, env=self.env, input=stdin_text, catch_exceptions=False)
        return subprocess.CompletedProcess(args, done.exit_code, done.stdout, done.stderr)


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _spawn(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, *args],
        env={**os.environ, "COLUMNS": "200", **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _readline(stream: IO[str] | None, seconds: float = 30) -> str:
    assert stream is not None
    line = await asyncio.wait_for(asyncio.to_thread(stream.readline), seconds)
    assert line, "the command ended before printing"
    return line


async def _interrupt(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C; the exit status and stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.to_thread(process.communicate, timeout=30)
    return process.returncode, stderr


def _cells(row: str) -> list[str]:
    """The cells of one row of a rich table."""
    return [cell.strip() for cell in row.strip().strip("│").split("│")]


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate()


# ---------------------------------------------------------------------- keys


async def test_keys_create_list_revoke(database_url: str, engine: AsyncEngine) -> None:
    cli = InProcess({"DATABASE_URL": database_url})
    tenant = f"keys-{uuid.uuid4().hex[:8]}"
    created = json.loads(ok(await cli("keys", "create", "--tenant", tenant, "--json")))
    key, key_id = created["key"], created["keyId"]
    assert (created["tenant"], key.startswith(f"amk_{key_id}_")) == (tenant, True)
    secret = key.removeprefix(f"amk_{key_id}_")
    digest = hashlib.sha256(secret.encode()).hexdigest()
    keys = ApiKeyStore(engine)
    assert await keys.authenticate(key) == KeyIdentity(tenant, key_id, frozenset())

    # create without --json: the key id, then the key alone on its line (copyable).
    plain = ok(await cli("keys", "create", "--tenant", tenant, "--name", "ci"))
    other_key = plain.splitlines()[-1]
    other_id = plain.split()[3]  # "created key id <id> for tenant ..."
    assert other_key.startswith("amk_")
    assert await keys.authenticate(other_key) == KeyIdentity(tenant, other_id, frozenset())
    table = ok(await cli("keys", "list"))
    listed = ok(await cli("keys", "list", "--tenant", tenant, "--json"))
    assert key_id in table and "ci" in table
    assert [row["keyId"] for row in json.loads(listed)] == [key_id, other_id]
    for output in (table, listed):
        assert secret not in output and digest not in output and "amk_" not in output
    assert "secret" not in listed.lower()

    assert key_id in ok(await cli("keys", "revoke", key_id))
    assert await keys.authenticate(key) is None
    assert await keys.authenticate(other_key) is not None  # only the one revoked
    again = await cli("keys", "revoke", key_id)
    assert f"key id {key_id!r}" in one_line_error(again, 1)
    assert "already revoked" in again.stderr
    one_line_error(await cli("keys", "revoke", "000000000000"), 1)
    assert "tenant" in one_line_error(await cli("keys", "create", "--tenant", "no/slash"), 2)


async def test_keys_create_writes_a_key_file_and_list_shows_when_a_key_was_used(
    database_url: str, engine: AsyncEngine, tmp_path: Path
) -> None:
    # Issue 41: "last used" was never written; a script had to scrape the key off a
    # terminal (docs/conformance.md now reads it from a file).
    cli = InProcess({"DATABASE_URL": database_url})
    tenant = f"keyfile-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "tenant.key"
    written = ok(await cli("keys", "create", "--tenant", tenant, "--key-file", str(path)))
    assert f"key written to {path}" in written and "amk_" not in written
    assert path.stat().st_mode & 0o777 == 0o600
    key = path.read_text().strip()
    key_id = written.split()[3]
    unused = json.loads(ok(await cli("keys", "list", "--tenant", tenant, "--json")))
    assert [row.get("lastUsedAt") for row in unused] == [None]

    keys = ApiKeyStore(engine)
    assert await keys.authenticate(key) == KeyIdentity(tenant, key_id, frozenset())
    (used,) = json.loads(ok(await cli("keys", "list", "--tenant", tenant, "--json")))
    assert used["lastUsedAt"] is not None
    table = ok(await cli("keys", "list", "--tenant", tenant))
    assert table.count(used["lastUsedAt"][:10]) == 2  # created and last used, the same day
    missing = await cli("keys", "create", "--tenant", tenant, "--key-file", "/nonexistent/k")
    assert "--key-file: its directory must exist" in one_line_error(missing, 2)


async def test_keys_carry_scopes(database_url: str, engine: AsyncEngine) -> None:
    cli = InProcess({"DATABASE_URL": database_url})
    tenant = f"scopes-{uuid.uuid4().hex[:8]}"
    keys = ApiKeyStore(engine)

    # The store: checked, duplicates collapsed, sorted; authenticate returns them.
    created = await keys.create(
        tenant, "apply", ["proposals:apply", "memory.read", "proposals:apply"]
    )
    first_id, first_scopes = created.record.key_id, ("memory.read", "proposals:apply")
    assert created.record.scopes == first_scopes
    identity = await keys.authenticate(created.key)
    assert identity == KeyIdentity(tenant, first_id, frozenset(first_scopes))

    # The CLI: --scope repeated, printed on creation, listed back (JSON and table).
    scoped = ("--scope", "runs:*", "--scope", "a-b_c")
    made = json.loads(ok(await cli("keys", "create", "--tenant", tenant, *scoped, "--json")))
    assert made["scopes"] == ["a-b_c", "runs:*"]
    assert await keys.authenticate(made["key"]) == KeyIdentity(
        tenant, made["keyId"], frozenset({"a-b_c", "runs:*"})
    )
    plain = ok(await cli("keys", "create", "--tenant", tenant, "--scope", "proposals:apply"))
    plain_id = plain.split()[3]
    assert "scopes: proposals:apply" in plain
    bare = ok(await cli("keys", "create", "--tenant", tenant))
    bare_id = bare.split()[3]
    assert "scopes: -" in bare
    expected = [
        (first_id, list(first_scopes)),
        (made["keyId"], ["a-b_c", "runs:*"]),
        (plain_id, ["proposals:apply"]),
        (bare_id, []),
    ]
    listed = json.loads(ok(await cli("keys", "list", "--tenant", tenant, "--json")))
    assert [(row["keyId"], row["scopes"]) for row in listed] == expected
    assert [(r.key_id, list(r.scopes)) for r in await keys.list(tenant)] == expected
    # The table at 80 columns (the console script, so the width is the one given): two
    # lines a key, every line fits, the id and every scope whole.
    narrow = {"DATABASE_URL": database_url, "COLUMNS": "80"}
    table = ok(await asyncio.to_thread(memoryctl, "keys", "list", "--tenant", tenant, env=narrow))
    lines = table.splitlines()
    assert all(len(line) <= 80 for line in lines), table
    assert "scopes" in lines[2], table  # the header's second line: tenant, scopes
    rows = [_cells(line) for line in lines[4:-1]]  # below the header's rule
    starts = [i for i, cells in enumerate(rows) if re.fullmatch(r"[0-9a-f]{12}", cells[0])]
    for key_id, scopes in ((first_id, "memory.read proposals:apply"), (bare_id, "-")):
        at = next(i for i in starts if rows[i][0] == key_id)
        end = next((i for i in starts if i > at), len(rows))
        assert rows[at + 1][0] == tenant, table
        assert " ".join(cells[1] for cells in rows[at + 1 : end] if cells[1]) == scopes, table

    # A bad scope is refused naming scopes, and no key is written.
    too_many = [f"s{number}" for number in range(MAX_SCOPES + 1)]
    for bad in (["Proposals:apply"], ["1st"], ["a" * 65], ["has space"], [""], too_many):
        with pytest.raises(InvalidInput) as refused:
            await keys.create(tenant, "bad", bad)
        assert refused.value.field == "scopes"
        options = [part for scope in bad for part in ("--scope", scope)]
        line = one_line_error(await cli("keys", "create", "--tenant", tenant, *options), 2)
        assert line.startswith("error: scopes: "), line
    assert "at most 16 scopes" in str(refused.value)
    assert len(await keys.list(tenant)) == len(expected)

    # A revoked key is refused whatever its scopes.
    assert await keys.revoke(first_id)
    assert await keys.authenticate(created.key) is None


# ---------------------------------------------------------------------- memory


async def test_memory_put_get_list_forget_and_tail(database_url: str, tmp_path: Path) -> None:
    ref = unique_ref()
    tenant = ref.removeprefix("mem://").split("/")[0]
    token = canary()
    vault = tmp_path / "secrets.json"
    vault.write_text(json.dumps({tenant: {"deploy-token": token}}))
    cli = InProcess({"DATABASE_URL": database_url, "AGENT_MEMORY_SECRETS_FILE": str(vault)})
    marker = uuid.uuid4().hex
    keyed_text = f"Deploys use the token {token}; rotate it monthly ({marker})"
    piped_text = f"The on-call rota changes on Mondays ({marker})"
    WRITTEN_TEXTS.update({keyed_text, piped_text})

    keyed = await cli(
        "memory", "put", "--memory-ref", ref, "--content", keyed_text, "--tag", "ops",
        "--tier", "semantic", "--namespace", "deploy", "--key", "token", "--json",
    )  # fmt: skip
    written = json.loads(ok(keyed))
    assert (written["memoryRef"], written["tier"], written["key"]) == (ref, "semantic", "token")
    assert "content" not in written
    piped = await cli(
        "memory", "put", "--memory-ref", ref, "--content", "-", "--tag", "rota",
        stdin_text=piped_text + "\n",
    )  # fmt: skip
    assert ok(piped).startswith("wrote ")
    piped_id = piped.stdout.split()[1]

    entry = json.loads(ok(await cli("memory", "get", "--memory-ref", ref, written["id"], "--json")))
    # SR-1: the tenant's registered secret was redacted on the way in.
    assert token not in entry["content"] and f"rotate it monthly ({marker})" in entry["content"]
    assert (entry["namespace"], entry["tags"]) == ("deploy", ["ops"])
    got_plain = ok(await cli("memory", "get", "--memory-ref", ref, piped_id))
    assert got_plain.endswith(f"\n{piped_text}\n")  # stdin's own newline dropped
    listed = ok(await cli("memory", "list", "--memory-ref", ref, "--json"))
    rows = json.loads(listed)
    assert {row["id"] for row in rows} == {written["id"], piped_id}
    assert all("content" not in row and "createdAt" in row for row in rows)
    table = ok(await cli("memory", "list", "--memory-ref", ref))
    assert written["id"] in table and piped_id in table
    tagged = ok(await cli("memory", "list", "--memory-ref", ref, "--tag", "rota", "--json"))
    assert [row["id"] for row in json.loads(tagged)] == [piped_id]

    # tail: seq, occurredAt, type and payload a line, oldest first.
    tail = ok(await cli("events", "tail", "--memory-ref", ref))
    lines = tail.splitlines()
    assert [int(line.split()[0]) for line in lines] == list(range(1, len(lines) + 1))
    assert {line.split()[2] for line in lines} == {"memory.created", "memory.written"}
    assert written["id"] in tail and piped_id in tail
    written_events = ok(
        await cli("events", "tail", "--memory-ref", ref, "--type", "memory.written", "--json")
    )
    events = [json.loads(line) for line in written_events.splitlines()]
    assert {e["type"] for e in events} == {"memory.written"}
    assert {e["payload"]["memoryId"] for e in events} == {written["id"], piped_id}
    after = str(len(lines) - 1)
    assert (
        len(ok(await cli("events", "tail", "--memory-ref", ref, "--after", after)).splitlines())
        == 1
    )
    # Only `memory get` prints content.
    for output in (keyed.stdout, piped.stdout, listed, table, tagged, tail, written_events):
        assert marker not in output and token not in output

    forgot = await cli(
        "memory", "forget", "--memory-ref", ref, "--id", written["id"], "--yes", "--json"
    )
    assert json.loads(ok(forgot))["entries"] == 1
    gone = await cli("memory", "get", "--memory-ref", ref, written["id"])
    assert f"no entry {written['id']}" in one_line_error(gone, 1)
    never = await cli("memory", "get", "--memory-ref", ref, "m-never-written")
    assert one_line_error(never, 1) == f"error: not_found: no entry m-never-written in {ref}"
    left = json.loads(ok(await cli("memory", "list", "--memory-ref", ref, "--json")))
    assert [row["id"] for row in left] == [piped_id]


async def test_memory_put_takes_the_hosts_own_id_once(database_url: str) -> None:
    # The commitments doc's example is an entry "mem-88": a host's own id (issue 41).
    ref = unique_ref()
    cli = InProcess({"DATABASE_URL": database_url})
    put = ("memory", "put", "--memory-ref", ref, "--id", "mem-88", "--content", "SOC2 filing")
    assert ok(await cli(*put)).startswith(f"wrote mem-88 to {ref} ")
    again = await cli(*put)
    assert again.returncode == 1
    assert again.stderr.strip() == (
        "error: duplicate_key: id: an entry with this id already exists in this memoryRef"
    )
    listed = json.loads(ok(await cli("memory", "list", "--memory-ref", ref, "--json")))
    assert [row["id"] for row in listed] == ["mem-88"]


async def test_memory_list_reads_at_80_columns(database_url: str) -> None:
    # Issue 41: at 80 columns the tags column was 3 characters wide and a distilled
    # entry's tags wrapped over 30 lines. A process of its own per width: rich reads
    # COLUMNS once, when memoryctl is imported.
    ref = unique_ref()
    many = [f"topic-{n}" for n in range(24)]
    setup = InProcess({"DATABASE_URL": database_url})
    tagged = ("memory", "put", "--memory-ref", ref, "--content", "a summary")
    ok(await setup(*tagged, *(arg for tag in many for arg in ("--tag", tag))))
    ok(await setup("memory", "put", "--memory-ref", ref, "--content", "x", "--tag", "ops"))
    listed = json.loads(ok(await setup("memory", "list", "--memory-ref", ref, "--json")))
    ids = [row["id"] for row in listed]

    def table(columns: str) -> str:
        env = {"DATABASE_URL": database_url, "COLUMNS": columns}
        return ok(memoryctl("memory", "list", "--memory-ref", ref, env=env))

    narrow = await asyncio.to_thread(table, "80")
    rows = [line for line in narrow.splitlines() if any(i in line for i in ids)]
    assert len(rows) == 2 and all(len(line) <= 80 for line in narrow.splitlines())
    assert "topic-0, topic-1" in narrow and "ops" in narrow
    assert "expires" not in narrow  # no entry expires: no column for it
    assert "topic-0, topic-1, topic-2 +21" in await asyncio.to_thread(table, "120")


async def test_an_empty_list_says_when_the_tenant_or_agent_does_not_exist(
    database_url: str,
) -> None:
    # Issue 41: a misspelt tenant listed nothing with exit 0, like an empty memory.
    ref = unique_ref()
    tenant, agent = ref.removeprefix("mem://").split("/")[:2]
    cli = InProcess({"DATABASE_URL": database_url})
    ok(await cli("memory", "put", "--memory-ref", ref, "--content", "the quote went out"))

    typo = await cli("memory", "list", "--memory-ref", f"mem://{tenant}/{agent}x")
    assert (typo.returncode, typo.stdout.strip()) == (0, "no entries")
    assert (
        typo.stderr.strip() == f"note: tenant {tenant} has no agent {agent}x; its agents: {agent}"
    )
    unknown = await cli("proposals", "list", "--tenant", f"{tenant}x", "--json")
    assert (unknown.returncode, json.loads(unknown.stdout)) == (0, [])
    assert unknown.stderr.strip() == (
        f"note: tenant {tenant}x has no memory here (no agent of it holds an entry)"
    )
    commitments = await cli("commitments", "list", "--memory-ref", f"mem://{tenant}x/{agent}")
    assert "has no memory here" in commitments.stderr
    # A real agent with nothing of that kind: an empty list, no note.
    real = await cli("commitments", "list", "--memory-ref", ref)
    assert (real.returncode, real.stdout.strip(), real.stderr) == (0, "no commitments", "")


async def test_bad_input_is_one_line_naming_the_option(closed_port: int) -> None:
    # Nothing listens at either address: bad input is refused before connecting.
    env = {"DATABASE_URL": f"postgresql+asyncpg://u:pw@127.0.0.1:{closed_port}/x"}
    down = {**env, "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port}"}
    ref = unique_ref()
    cases: list[tuple[list[str], dict[str, str], int, str]] = [
        (["memory", "put", "--memory-ref", "mem://../x", "--content", "x"], env, 2, "memoryRef"),
        (["memory", "get", "--memory-ref", "mem://acme", "e1"], env, 2, "memoryRef"),
        (["memory", "list", "--memory-ref", "http://a/b"], env, 2, "memoryRef"),
        (["memory", "forget", "--memory-ref", "mem://acme", "--id", "e1", "--yes"], env, 2,
         "memoryRef"),
        (["events", "tail", "--memory-ref", "mem://acme"], env, 2, "memoryRef"),
        (["dream", "run", "--memory-ref", "mem://../x"], down, 2, "memoryRef"),
        (["memory", "put", "--memory-ref", ref, "--content", "x", "--namespace", "n"], env, 2,
         "--namespace"),
        (["memory", "put", "--memory-ref", ref, "--content", "x", "--tier", "core"], env, 2,
         "--tier"),
        # An empty entry is no memory (issue 41).
        (["memory", "put", "--memory-ref", ref, "--content", "  "], env, 2,
         "--content: must hold some text"),
        (["memory", "put", "--memory-ref", ref, "--content", "x", "--id", "../m"], env, 2,
         "--id: String should match"),
        (["memory", "get", "--memory-ref", ref, "../etc"], env, 2, "ID"),
        (["events", "tail", "--memory-ref", ref, "--type", "memory.nope"], env, 2, "--type"),
        (["dream", "run", "--memory-ref", ref, "--token-budget", "0"], down, 2, "--token-budget"),
        (["keys", "create"], env, 2, "--tenant"),
        (["dream", "run", "--memory-ref", ref], down, 1, "cannot reach Temporal"),
    ]  # fmt: skip
    results = await asyncio.gather(*(run(*args, env=e) for args, e, _, _ in cases))
    for (args, _, status, named), result in zip(cases, results, strict=True):
        line = one_line_error(result, status)
        assert named in line, args
        # A refusal names the option and the rule; never a placeholder for what was typed
        # (issue 41: "--type" said "'<value>' is not one of ...").
        assert "<value>" not in line, (args, line)
    # The old `events` command is unchanged beside `events tail` (more in
    # test_memoryctl_failures.py): its usage errors still name its options.
    assert "--memory-ref" in one_line_error(await run("events", env=env), 2)


async def test_events_tail_follow_streams_until_ctrl_c(
    database_url: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    first = await store.put(ref, note("Standup moved to 9:30"))
    process = _spawn(
        "events", "tail", "--memory-ref", ref, "--follow", "--json",
        env={"DATABASE_URL": database_url},
    )  # fmt: skip
    try:
        seen = json.loads(await _readline(process.stdout))
        assert (seen["seq"], seen["payload"]["memoryId"]) == (1, first.id)
        second = await store.put(ref, note("Standup is back at 9:00"))
        while seen["payload"].get("memoryId") != second.id:  # polled every 0.5 s
            seen = json.loads(await _readline(process.stdout))
        status, stderr = await _interrupt(process)
        assert (status, "Traceback" in stderr) == (0, False), stderr
    finally:
        _stop(process)


# ---------------------------------------------------------------------- dream


def _worker_env(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, database_url: str
) -> dict[str, str]:
    """What memoryctl needs to reach this test's database, server and worker."""
    return {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }


@pytest.mark.slow
async def test_dream_run_prints_the_summary(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    env = _worker_env(temporal_env, worker_task_queue, database_url)
    refs = [unique_ref(), unique_ref()]
    texts = [f"Invoice {i} for {ref} is due on the 5th." for ref in refs for i in range(3)]
    for ref in refs:
        await store.put_many(ref, [note(text) for text in texts if ref in text])
    as_table, as_json = await asyncio.gather(
        run("dream", "run", "--memory-ref", refs[0], "--token-budget", "5000", env=env),
        run("dream", "run", "--memory-ref", refs[1], "--json", env=env),
    )
    result = json.loads(ok(as_json))
    distilled = result["distillation"]
    assert (result["status"], distilled["status"], distilled["sourceCount"]) == (
        "completed", "distilled", 3,
    )  # fmt: skip
    assert distilled["archiveChecksum"] and "consolidation" in result and "commitments" in result
    summary = ok(as_table)
    for label in ("completed", "sources distilled", "tokens used / budget", "archive checksum"):
        assert label in summary
    assert "/ 5000" in summary and "consolidation" in summary and "commitments" in summary
    # The workflow id a user can look up: the schedule's, as every dream of the ref has.
    assert f"dream:{refs[0].removeprefix('mem://').replace('/', ':')}" in as_table.stderr
    for text in texts:
        assert text not in summary + as_json.stdout


@pytest.mark.slow
async def test_dream_fleet_dreams_the_agents_with_work_and_prints_the_counts(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    env = _worker_env(temporal_env, worker_task_queue, database_url)
    tenant = f"t{uuid.uuid4().hex[:8]}"
    refs = [unique_ref(tenant, f"agent-{i}") for i in range(3)]
    texts = [f"Shipment {i} for {ref} leaves on Monday." for ref in refs for i in range(2)]
    for ref in refs:
        await store.put_many(ref, [note(text) for text in texts if ref in text])
    result = json.loads(ok(await run("dream", "fleet", "--tenant", tenant, "--json", env=env)))
    assert result["progress"]["dreamed"] == 3 and result["progress"]["failed"] == 0
    again = ok(await run("dream", "fleet", "--tenant", tenant, env=env))
    assert "agents dreamed" in again and " 0 " in again.replace("│", " ")
    refused = await run("dream", "fleet", "--tenant", "../x", env=env)
    assert refused.returncode == 2 and "--tenant" in refused.stderr
    for text in texts:
        assert text not in again


# ---------------------------------------------------------------------- capabilities


@pytest.mark.slow
async def test_capabilities_report_the_worker(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, database_url: str
) -> None:
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
    }
    nobody = f"nobody-polls-{uuid.uuid4().hex[:8]}"
    served, unserved, table = await asyncio.gather(
        run("capabilities", "--json", env={**env, "AGENT_MEMORY_TASK_QUEUE": worker_task_queue}),
        run("capabilities", "--json", env={**env, "AGENT_MEMORY_TASK_QUEUE": nobody}),
        run("capabilities", env={**env, "AGENT_MEMORY_TASK_QUEUE": nobody}),
    )
    live = json.loads(ok(served))
    assert live["memory"]["supported"] is True
    assert live["x-host-agent-memory-status"]["worker"]["available"] is True
    assert all(live["memoryDimensions"].values()) and len(live["memoryDimensions"]) == 8
    idle = json.loads(ok(unserved))
    status = idle["x-host-agent-memory-status"]
    assert (status["temporal"]["available"], status["worker"]["available"]) == (True, False)
    assert nobody in status["worker"]["detail"]
    assert idle["memory"]["supported"] is True
    assert idle["memoryDimensions"]["compaction"] is False
    assert idle["memory"]["distillation"]["supported"] is False
    lines = ok(table).splitlines()
    assert ["compaction", "no"] in [_cells(line) for line in lines]
    assert any(line.startswith("worker:") and "unavailable" in line for line in lines)


async def test_capabilities_without_database_or_temporal_exit_zero(closed_port: int) -> None:
    # Documented behaviour: the probe ran, so exit 0; the document says what is down.
    env = {
        "DATABASE_URL": f"postgresql+asyncpg://u:pw@127.0.0.1:{closed_port}/x",
        "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port}",
    }
    as_json, as_table, malformed = await asyncio.gather(
        run("capabilities", "--json", env=env),
        run("capabilities", env=env),
        run("capabilities", env={**env, "DATABASE_URL": "mysql://u:pw@db/x"}),
    )
    document = json.loads(ok(as_json))
    assert document["memory"]["supported"] is False
    assert not any(document["memoryDimensions"].values())
    status = document["x-host-agent-memory-status"]
    assert not any(status[name]["available"] for name in ("database", "temporal", "worker"))
    assert "pw" not in as_json.stdout + as_table.stdout
    lines = ok(as_table).splitlines()
    assert any(line.startswith("database:") and "unavailable" in line for line in lines)
    # Where it looked, from this machine's settings (issue 41: the address was missing).
    assert f"temporal: unavailable at 127.0.0.1:{closed_port} (" in as_table.stdout
    assert f"database: unavailable at 127.0.0.1:{closed_port}/x (" in as_table.stdout
    assert "DATABASE_URL" in one_line_error(malformed, 2)


# ---------------------------------------------------------------------- serve


async def test_serve_answers_until_ctrl_c(database_url: str, closed_port: int) -> None:
    port = free_port()
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port}"}
    process = _spawn("serve", "--port", str(port), env=env)
    try:
        line = await _readline(process.stdout)
        assert f"http://127.0.0.1:{port}/" in line
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            for _ in range(200):  # the line comes before the database is migrated
                try:
                    response = await client.get("/.well-known/openwop")
                    break
                except httpx.TransportError:
                    assert process.poll() is None, process.communicate()
                    await asyncio.sleep(0.05)
        assert response.status_code == 200
        document = response.json()
        assert document["memory"]["supported"] is True
        assert document["x-host-agent-memory-status"]["temporal"]["available"] is False
        taken = await run("serve", "--port", str(port), env=env)
        assert f"cannot listen on 127.0.0.1:{port}" in one_line_error(taken, 1)
        status, stderr = await _interrupt(process)
        assert (status, "Traceback" in stderr) == (0, False), stderr
    finally:
        _stop(process)
