"""The quick start's main job (``memoryctl demo``, memoryctl/demo.py): the whole stack on
the embedded default, one dream end to end, the results on screen, and the Temporal UI
link of the run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from temporalio.client import Client, ScheduleActionExecutionStartWorkflow

from memory.distillation.memory_index import INDEX_PATH, counted_tiers
from memory.redaction.vault import FileSecretVault
from memory.storage.embedded import asyncpg_url_for, default_data_dir, start_embedded_postgres
from memory.storage.engines import create_engine, migrate
from memory.store import PostgresMemoryStore
from memoryctl.cli import plural
from memoryctl.demo_api import check_and_show, serving_api
from memoryctl.demo_data import TENANTS, load_or_create_secrets, seed_demo_memory
from memoryctl.dev_server import temporal_dev_server
from memoryctl.dream_schedules import DEFAULT_CRON, schedule_id_for
from runtime.binaries import temporal_cli
from runtime.client import connect_when_ready
from runtime.intent_link_keys import intent_links_for
from runtime.log_format import configure_logging
from runtime.metrics import MetricsExporter
from runtime.settings import DEFAULT_TASK_QUEUE, Settings
from runtime.tracing import start_tracing
from runtime.workflow_ids import workflow_ids_for
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamResult
from worker import serving_worker
from workflows.distillation import DistillationWorkflow

# Piped output (CI, logs) gets a wide fixed width so tables and links are not cut.
console = Console(width=None if sys.stdout.isatty() else 140)
DEMO_BUDGET = 8000
QUICK_STOP = timedelta(seconds=1)


@dataclass(frozen=True)
class DemoOptions:
    exit_after_run: bool = False
    new_day: bool = False
    temporal_port: int = 7233
    ui_port: int = 8233
    api_port: int = 8000


def _cli(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    return subprocess.run(
        [temporal_cli(), *args], env=env, capture_output=True, text=True, timeout=60
    )


def ensure_schedule_with_cli(address: str, memory_ref: str) -> tuple[str, bool]:
    """Create the dream schedule with the Temporal CLI, as a user would (README); the
    schedule id, and whether it was created now (False: an earlier run made it)."""
    schedule_id = schedule_id_for(memory_ref)
    if _cli(address, "schedule", "describe", "--schedule-id", schedule_id).returncode == 0:
        return schedule_id, False
    payload = json.dumps({"memoryRef": memory_ref, "tokenBudget": DEMO_BUDGET})
    created = _cli(
        address,
        "schedule", "create",
        "--schedule-id", schedule_id,
        "--cron", DEFAULT_CRON,
        "--overlap-policy", "Skip",
        "--execution-timeout", "6h",
        "--workflow-id", schedule_id,
        "--task-queue", DEFAULT_TASK_QUEUE,
        "--type", "DreamWorkflow",
        "--input", payload,
    )  # fmt: skip
    if created.returncode != 0:
        raise RuntimeError(f"temporal schedule create failed: {created.stderr.strip()}")
    return schedule_id, True


async def trigger_and_find_run(
    client: Client, address: str, schedule_id: str
) -> tuple[str, str, bool]:
    """Trigger with the CLI and return (workflow id, run id, True) of the run it started;
    or (..., False) for the dream an interrupted quick start left running, which this
    run's worker resumes (the schedule skips a trigger while its last dream runs)."""
    handle = client.get_schedule_handle(schedule_id)
    description = await handle.describe()
    for running in description.info.running_actions:
        if isinstance(running, ScheduleActionExecutionStartWorkflow):
            console.print(
                f"{schedule_id}: the dream an earlier run left running resumes "
                f"({running.workflow_id})",
                soft_wrap=True,
                markup=False,
            )
            return running.workflow_id, running.first_execution_run_id, False
    before = len(description.info.recent_actions)
    triggered = await asyncio.to_thread(
        _cli, address, "schedule", "trigger", "--schedule-id", schedule_id
    )
    if triggered.returncode != 0:
        raise RuntimeError(f"temporal schedule trigger failed: {triggered.stderr.strip()}")
    for _ in range(150):
        actions = (await handle.describe()).info.recent_actions
        if len(actions) > before or (before == len(actions) == 10):
            action = actions[-1].action
            if isinstance(action, ScheduleActionExecutionStartWorkflow):
                return action.workflow_id, action.first_execution_run_id, True
        await asyncio.sleep(0.2)
    raise RuntimeError("the schedule did not start a dream within 30 s")


async def wait_with_progress(
    client: Client, runs: dict[str, tuple[str, str]]
) -> dict[str, DreamResult]:
    results: dict[str, DreamResult] = {}
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console
    ) as progress:
        tasks = {ref: progress.add_task(f"{ref}: starting", total=1) for ref in runs}
        pending = {
            ref: asyncio.ensure_future(
                client.get_workflow_handle(wid, run_id=rid, result_type=DreamResult).result()
            )
            for ref, (wid, rid) in runs.items()
        }
        while pending:
            for ref, future in list(pending.items()):
                if future.done():
                    results[ref] = future.result()
                    progress.update(tasks[ref], description=f"{ref}: dream complete", completed=1)
                    del pending[ref]
                    continue
                with contextlib.suppress(Exception):
                    child = client.get_workflow_handle(
                        workflow_ids_for(Settings()).distillation(ref)
                    )
                    # Until this dream starts its child, the id names yesterday's run:
                    # its last progress is not this dream's.
                    if (await child.describe()).parent_run_id != runs[ref][1]:
                        continue
                    status = await child.query(DistillationWorkflow.progress)
                    progress.update(tasks[ref], description=f"{ref}: {status}")
            await asyncio.sleep(0.25)
    return results


async def show_results(
    store: PostgresMemoryStore,
    results: dict[str, DreamResult],
    runs: dict[str, tuple[str, str]],
    ui_url: str | None,
    vault: dict[str, dict[str, str]],
) -> None:
    table = Table(title="Dreams")
    table.add_column("memoryRef", no_wrap=True)
    for column in (
        "status",
        "sources",
        "deferred",
        "tokens used/budget",
        "archive",
        "long-term in -> out",
    ):
        table.add_column(column, no_wrap=True)
    for ref, result in results.items():
        d = result.distillation
        c = result.consolidation
        table.add_row(
            ref,
            d.status if d else result.status,
            str(d.source_count if d else 0),
            str(d.deferred_count if d else 0),
            f"{d.tokens_used if d else 0} / {d.token_budget if d else '-'}",
            (d.archive_checksum or "-")[:16] if d else "-",
            f"{c.input_count} -> {c.output_count}" if c else "-",
        )
    console.print(table)
    for ref, result in results.items():
        console.rule(ref)
        distillation = result.distillation
        if distillation and distillation.output_id:  # yesterday's event is not this run's
            compacted = await store.events(ref, types=["memory.compacted"], limit=100_000)
            console.print("[bold]memory.compacted[/bold]")
            console.print_json(json.dumps(compacted[-1].payload))
        else:
            console.print("nothing new to distill since the last dream: no memory.compacted")
        consolidation = result.consolidation
        if consolidation is not None:
            console.print(
                f"consolidation pass {consolidation.pass_id}: "
                f"{consolidation.input_count} -> {consolidation.output_count} long-term entries, "
                f"{consolidation.merged_count} merged, {consolidation.superseded_count} "
                f"superseded, {consolidation.conflict_count} new conflicts "
                "(memoryctl consolidate audit | conflicts | undo)",
                soft_wrap=True,
            )
        commitments = result.commitments
        if commitments is not None:
            inferred = commitments.inference
            # The time and predicate counts are of every commitment read, new or known.
            read = inferred.created + inferred.already_known
            unread = (
                f"{plural(inferred.unparsable_count, 'entry', 'entries')} not understood "
                f"(memoryctl commitments infer --memory-ref {ref} says why), "
                if inferred.unparsable_count
                else ""
            )
            console.print(
                f"commitments: {plural(read, 'commitment')} found "
                f"({inferred.time_commitments} time, {inferred.predicate_commitments} "
                f"predicate), {inferred.created} new, {unread}"
                f"{plural(commitments.armed.started, 'workflow')} armed, "
                f"{commitments.armed.deferred} due beyond 24 h left to the horizon workflow "
                f"(memoryctl commitments list --memory-ref {ref})",
                soft_wrap=True,
                markup=False,
            )
        proposals = result.proposals
        if proposals is not None and proposals.routines:
            console.print(
                f"proposals: {len(proposals.created)} new from {proposals.routines} recurring "
                f"requests, inert until applied (memoryctl proposals list --tenant "
                f"{parse_memory_ref(ref).tenant})",
                soft_wrap=True,
                markup=False,
            )
        if distillation and distillation.archive_checksum:
            console.print(
                f"archive checksum: [bold]{distillation.archive_checksum}[/bold]", soft_wrap=True
            )
        parsed = parse_memory_ref(ref)
        found = await store.index_file(parsed)
        if found:
            version, body = found
            index = json.loads(body)
            top = ", ".join(f"{t['tag']} ({t['count']})" for t in index["tags"][:5])
            console.print(
                f"{INDEX_PATH} v{version}: {index['sizeTokens']} tokens "
                f"(cap {index['maxSizeTokens']}), {plural(index['archiveCount'], 'archive')}, "
                f"entries: {counted_tiers(index['entryCounts'])}, top tags: {top}",
                soft_wrap=True,
            )
        if distillation and distillation.output_id:
            output = await store.get(ref, distillation.output_id)
            secrets_left = [
                secret_id
                for secret_id, value in vault.get(parsed.tenant, {}).items()
                if output is not None and value in output.content
            ]
            registered = len(vault.get(parsed.tenant, {}))
            if secrets_left:
                console.print(
                    "SR-1: registered secrets found in the distilled entry: [red]"
                    + ", ".join(secrets_left)
                    + "[/red]"
                )
            else:
                console.print(
                    "SR-1: the distilled entry holds none of the "
                    f"{plural(registered, 'secret')} registered for {parsed.tenant}",
                    markup=False,
                )
        if ui_url:
            workflow_id, run_id = runs[ref]
            # soft_wrap keeps the link on one line so terminals can open it.
            # Encoded as the UI's own links are: schedule ids contain ':'.
            link = (
                f"{ui_url}/namespaces/default/workflows/"
                f"{urllib.parse.quote(workflow_id, safe='')}/{run_id}/history"
            )
            console.print(f"Temporal UI: {link}", soft_wrap=True)


async def run_demo(options: DemoOptions) -> int:
    # The quick start's screen is its own output: warnings and errors only, one line each
    # (the SDK's INFO lines, worker shutdown among them, would interleave with it).
    configure_logging("text", level=logging.WARNING)
    # memoryctl demo holds the state dir's lock and checked the ports (demo_guard.py).
    state_dir = default_data_dir().parent
    secrets_path = state_dir / "secrets.json"
    vault = load_or_create_secrets(secrets_path)
    console.print(f"[bold]agent-memory quick start[/bold] (state in {state_dir})")
    server = start_embedded_postgres()
    engine = create_engine(asyncpg_url_for(server))
    try:
        await migrate(engine)
        # Links events to intents under the same key as memoryctl's own store.
        store = PostgresMemoryStore(engine, intent_links=intent_links_for(Settings()))
        async with temporal_dev_server(
            state_dir / "temporal", port=options.temporal_port, ui_port=options.ui_port
        ) as dev:
            settings = Settings(
                TEMPORAL_ADDRESS=dev.address,
                AGENT_MEMORY_SECRETS_FILE=str(secrets_path),
                AGENT_MEMORY_API_PORT=options.api_port,
                # The quick start is where a user tries openwop's conformance suite.
                OPENWOP_TEST_SEAM_ENABLED=True,
            )
            # An open port is not a ready server: a dev server reopening yesterday's
            # database answers "Frontend is not healthy yet" for a while (seen under load).
            # One metrics runtime for the worker's client and the API: the API's /metrics
            # shows the SDK's series and every product series of the quick start.
            metrics = MetricsExporter.start(process="quickstart")
            start_tracing("agent-memory-quickstart")  # with OTEL_EXPORTER_OTLP_ENDPOINT set
            client = await connect_when_ready(settings, seconds=60, runtime=metrics.runtime)
            console.print(
                f"PostgreSQL 18 (embedded) and Temporal dev server at {dev.address} are up"
            )
            file_vault = FileSecretVault(secrets_path)
            # Ctrl-C should stop the quick start at once: an activity still running
            # after a second is cancelled, and the next run's worker picks it up again.
            worker = serving_worker(
                client, settings, store, file_vault, graceful_shutdown=QUICK_STOP
            )
            api = serving_api(
                settings, store, client, file_vault, state_dir, TENANTS[0].tenant, metrics
            )
            async with worker, api as http_api:
                await _seed_once(store, vault, state_dir, new_day=options.new_day)
                runs: dict[str, tuple[str, str]] = {}
                created, triggered = [], []
                for tenant in TENANTS:
                    schedule_id, new = ensure_schedule_with_cli(dev.address, tenant.memory_ref)
                    workflow_id, run_id, started = await trigger_and_find_run(
                        client, dev.address, schedule_id
                    )
                    runs[tenant.memory_ref] = (workflow_id, run_id)
                    created += [schedule_id] if new else []
                    triggered += [schedule_id] if started else []
                show_schedules(created, triggered)
                results = await wait_with_progress(client, runs)
                await show_results(store, results, runs, dev.ui_url, vault)
                await check_and_show(http_api, TENANTS[0].memory_ref, console)
                show_next_steps(dev.address, dev.ui_url, state_dir, options)
                if not options.exit_after_run:
                    console.print(
                        f"\nThe stack is up (UI {dev.ui_url}, API {http_api.url}); the worker "
                        f"is polling '{DEFAULT_TASK_QUEUE}'. Press Ctrl-C to stop."
                    )
                    await _wait_for_interrupt()
        console.print("Stopped the API, the worker and the Temporal dev server.")
        return 0
    finally:
        await engine.dispose()
        server.cleanup()


def show_schedules(created: list[str], triggered: list[str]) -> None:
    """What this run did to the schedules, and only that: on a second run they exist
    already, and a schedule whose dream an interrupted run left running is not
    triggered (that dream resumes)."""
    made = (
        f"Created dream schedules {', '.join(created)} with `temporal schedule create`"
        if created
        else "The dream schedules exist already"
    )
    fired = (
        f"triggered {', '.join(triggered)} with `temporal schedule trigger`"
        if triggered
        else "triggered none"
    )
    console.print(f"{made} (cron '{DEFAULT_CRON}'); {fired}", soft_wrap=True, markup=False)


def show_next_steps(
    address: str, ui_url: str | None, state_dir: Path, options: DemoOptions
) -> None:
    """The exact environment a second terminal needs: `temporal` and `memoryctl` live in
    the venv's bin directory, and the ports may not be the defaults."""
    running = not options.exit_after_run
    bin_dir = Path(sys.executable).parent
    lines = [f'export PATH="{bin_dir}:$PATH"  # temporal and memoryctl live here']
    lines.append(f"export TEMPORAL_ADDRESS={address}")
    if os.environ.get("AGENT_MEMORY_STATE_DIR"):
        lines.append(f"export AGENT_MEMORY_STATE_DIR={state_dir}")
    lines += [
        "temporal workflow list --query \"WorkflowType = 'DreamWorkflow'\"",
        "memoryctl schedule list",
        f"memoryctl memory list --memory-ref {TENANTS[0].memory_ref} --limit 5",
        f"memoryctl proposals list --tenant {TENANTS[0].tenant}",
    ]
    when = (
        "In another terminal, while this one runs"
        if running
        else f"Next: run {_quickstart_command(options)} (it stays up until Ctrl-C) and, in "
        "another terminal"
    )
    console.print(f"{when}:", markup=False)
    for line in lines:
        console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    if ui_url:
        # The UI lists every workflow; commitment workflows (one per promise) would bury
        # the dreams, so this link shows the dreams only.
        query = urllib.parse.quote("WorkflowType = 'DreamWorkflow'")
        console.print(
            f"Dreams in the Temporal UI: {ui_url}/namespaces/default/workflows?query={query}",
            soft_wrap=True,
            markup=False,
        )


async def _seed_once(
    store: PostgresMemoryStore, vault: dict[str, dict[str, str]], state_dir: Path, *, new_day: bool
) -> None:
    """The demo's memory is written once per state dir: run after run, the dream works
    on what is there and what the user added, and memory does not grow by itself.
    ``--new-day`` adds another day's notes (and a changed fact) on purpose."""
    existing = sum([await store.count(tenant.memory_ref) for tenant in TENANTS])
    if existing and not new_day:
        console.print(
            f"Demo memory already seeded ({existing} entries); nothing added. "
            "`memoryctl demo --new-day` adds another day's notes.",
            soft_wrap=True,
            markup=False,
        )
        return
    written = await seed_demo_memory(store, vault, _next_demo_day(state_dir))
    console.print("Seeded " + ", ".join(f"{n} entries into {ref}" for ref, n in written.items()))


def _next_demo_day(state_dir: Path) -> int:
    counter = state_dir / "demo-runs"  # the days seeded so far (the name predates --new-day)
    number = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(number))
    return number


async def _wait_for_interrupt() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def _quickstart_command(options: DemoOptions) -> str:
    """./quickstart.sh with the ports this run used, where they are not the defaults."""
    defaults = DemoOptions()
    ports = [
        f"--{name}-port {value}"
        for name, value, default in (
            ("temporal", options.temporal_port, defaults.temporal_port),
            ("ui", options.ui_port, defaults.ui_port),
            ("api", options.api_port, defaults.api_port),
        )
        if value != default
    ]
    return " ".join(["./quickstart.sh", *ports])
