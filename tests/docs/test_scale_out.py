"""docs/scale-out.md: its Temporal CLI block, run verbatim against a dev server with two
workers polling the task queue (as two scaled replicas would), and its claims about
docker-compose.yml and the settings checked against the files they describe. The compose
file's own structure is checked in tests/docs/test_compose.py."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
from typing import Any

import yaml
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from memory.embeddings.choice import EMBEDDING_ENV_VARS
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from runtime import settings
from runtime.binaries import temporal_cli
from tests.support.docs_blocks import ROOT, block_commands, doc
from tests.support.worker_clients import clients_with_identities
from worker import build_worker

SCALE_OUT = doc("scale-out")
COMPOSE_FILE = ROOT / "docker-compose.yml"
BLOCK = "temporal-cli-scale-out"
IDENTITIES = ("replica-1@scale-out-test", "replica-2@scale-out-test")


def run(command: str, address: str) -> subprocess.CompletedProcess[str]:
    """The command as the doc writes it, with TEMPORAL_ADDRESS naming the dev server (the
    doc's stack publishes its frontend on localhost:7233, the CLI's default)."""
    argv = shlex.split(command)
    assert argv[0] == "temporal"
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    return subprocess.run(
        [temporal_cli(), *argv[1:]], env=env, capture_output=True, text=True, timeout=60
    )


def _compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def _bash_fences(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


async def _workers_polling(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> list[Worker]:
    """Two workers of the product, each with its own client and identity, like two
    containers of the compose `worker` service."""
    clients = await clients_with_identities(temporal_env, IDENTITIES)
    return [
        build_worker(client, settings.Settings(), store, StaticSecretVault({}))
        for client in clients
    ]


async def test_the_check_block_runs_against_two_workers(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    address = temporal_env.client.service_client.config.target_host
    commands = block_commands(SCALE_OUT, BLOCK)
    assert [shlex.split(c)[1:3] for c in commands] == [
        ["operator", "cluster"],
        ["operator", "cluster"],
        ["task-queue", "describe"],
    ]
    assert f"--task-queue {settings.DEFAULT_TASK_QUEUE}" in commands[2]

    health = await asyncio.to_thread(run, commands[0], address)
    assert health.returncode == 0, health.stderr
    assert "SERVING" in health.stdout

    described = await asyncio.to_thread(run, commands[1], address)
    assert described.returncode == 0, described.stderr
    # The two columns the doc points at (the dev server's store is sqlite).
    assert "PersistenceStore" in described.stdout and "HistoryShardCount" in described.stdout
    assert "sqlite" in described.stdout

    first, second = await _workers_polling(temporal_env, store)
    async with first, second:
        pollers = ""
        for _ in range(50):
            result = await asyncio.to_thread(run, commands[2], address)
            assert result.returncode == 0, result.stderr
            pollers = result.stdout.split("Pollers:", 1)[-1]
            rows = [line.split() for line in pollers.splitlines()]
            seen = {(row[1], row[2]) for row in rows if len(row) >= 3}
            wanted = {(kind, who) for kind in ("workflow", "activity") for who in IDENTITIES}
            if wanted <= seen:
                break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError(f"both workers should poll both task types:\n{pollers}")


def test_every_temporal_command_in_the_doc_is_in_the_runnable_block() -> None:
    """The doc names `temporal` commands in prose too: each must be one the block runs."""
    text = SCALE_OUT.read_text()
    runnable = block_commands(SCALE_OUT, BLOCK)
    fenced = [
        line.strip()
        for fence in _bash_fences(text)
        for line in fence.replace("\\\n", " ").splitlines()
        if line.strip().startswith("temporal ")
    ]
    assert fenced and all(line in runnable for line in fenced), fenced
    spans = [span for span in re.findall(r"`([^`\n]+)`", text) if span.startswith("temporal ")]
    for span in spans:
        assert any(command.startswith(span) for command in runnable), span


def test_the_settings_table_names_what_each_process_reads() -> None:
    text = SCALE_OUT.read_text()
    section = text.split("## Settings each process reads", 1)[1].split("\n## ", 1)[0]
    rows = {
        row.split("|")[1].strip(): row.split("|")[2]
        for row in section.splitlines()
        if row.startswith("| ") and not row.startswith("| process")
    }
    worker = next(cells for name, cells in rows.items() if name.startswith("worker"))
    api = next(cells for name, cells in rows.items() if name.startswith("HTTP API"))
    for name in (*settings.WORKER_ENV_VARS, *EMBEDDING_ENV_VARS):
        assert f"`{name}`" in worker, name
    for name in set(settings.API_ENV_VARS) - set(settings.ENV_VARS):
        assert f"`{name}`" in api, name
    temporal = next(cells for name, cells in rows.items() if name.startswith("Temporal"))
    server = next(
        svc
        for svc in _compose()["services"].values()
        if str(svc.get("image", "")).startswith("temporalio/server:")
    )
    for name in server["environment"]:
        assert f"`{name}`" in temporal, name


def test_the_compose_commands_in_the_docs_name_real_services() -> None:
    services = _compose()["services"]
    profiles = {profile for svc in services.values() for profile in svc.get("profiles") or []}
    commands = [
        line.strip()
        for path in (SCALE_OUT, doc("operations"))
        for fence in _bash_fences(path.read_text())
        for line in fence.replace("\\\n", " ").splitlines()
        if line.strip().startswith("docker compose")
    ]
    scale_out = [command for command in commands if "--profile scale-out" in command]
    assert scale_out, "no scale-out command in the docs"
    for command in commands:
        argv = shlex.split(command, comments=True)
        for profile in (argv[i + 1] for i, arg in enumerate(argv) if arg == "--profile"):
            assert profile in profiles, command
        active = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--profile"}
        for scaled in (argv[i + 1] for i, arg in enumerate(argv) if arg == "--scale"):
            name = scaled.split("=", 1)[0]
            assert name in services, command
            needed = set(services[name].get("profiles") or [])
            assert not needed or needed & active, f"{command}: {name} needs {needed}"
            assert "container_name" not in services[name], name


def test_the_doc_names_the_load_balancer_address_compose_publishes() -> None:
    balancer = _compose()["services"]["api-lb"]
    (published,) = balancer["ports"]
    host, port, _ = published.split(":")
    assert host == "127.0.0.1"
    assert f"http://localhost:{port}" in SCALE_OUT.read_text()
    assert f"http://localhost:{port}" in doc("operations").read_text()
