"""memoryctl: the project's command line.

    memoryctl demo [--exit-after-run]                      the quick start's main job
    memoryctl schedule create --memory-ref REF [--token-budget N] [--cron EXPR]
    memoryctl schedule list | trigger ID | delete ID
    memoryctl db upgrade                                   apply migrations to DATABASE_URL
    memoryctl index show --memory-ref REF                  print MEMORY-INDEX.json
    memoryctl events --memory-ref REF                      print the content-free event log
    memoryctl events tail --memory-ref REF [--type T ...] [--after SEQ] [--follow] [--json]
    memoryctl forget --memory-ref REF (--id ID ... | --tag TAG | --subject S [--tenant-wide])
                     [--dry-run] [--yes] [--json]          erase entries and their derived copies
    memoryctl lineage --memory-ref REF --id ID [--json]    where an entry's text went
    memoryctl consolidate run | audit | conflicts | undo   see memoryctl/consolidate.py
    memoryctl commitments infer | list | show | cancel     see memoryctl/commitments.py
    memoryctl memory put | get | list | forget             entries by hand (memoryctl/entries.py)
    memoryctl dream run --memory-ref REF [--token-budget N] [--json]   a dream now, waited for
    memoryctl keys create --tenant T | list | revoke KEY_ID   the HTTP API's keys
    memoryctl serve [--host H] [--port P]                  run the HTTP API until Ctrl-C
    memoryctl capabilities [--json]                        the live discovery document

Every failure is one line on stderr, never a traceback:
  exit 2  bad input, naming the field (memoryRef, token-budget, cron, DATABASE_URL, ...)
  exit 1  the operation was refused (no such schedule or pass, schedule id taken, a pass
          already running, an undo whose key is taken again) or Temporal or
          the database cannot be reached (named with its address, never a password)
Nothing is written when a command fails.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from memoryctl.capabilities import capabilities
from memoryctl.cli import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    MemoryRefOption,
    _checked_ref,
    _engine,
    _error,
    _print_json,
    _run,
    _temporal,
    bad_input,
    console,
    errors,
    exit_process,
    with_store,
)
from memoryctl.commitments import commitments_app
from memoryctl.consolidate import consolidate_app
from memoryctl.dream import dream_app
from memoryctl.entries import memory_app
from memoryctl.events import events_app
from memoryctl.keys import keys_app
from memoryctl.payload_keys import payload_keys_app
from memoryctl.serve import serve
from memoryctl.usage import usage_line

if TYPE_CHECKING:
    from memory.store import PostgresMemoryStore
    from schemas.erasure import ErasureReport
    from schemas.memory_entry import ForgetRequest

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
schedule_app = typer.Typer(no_args_is_help=True, help="Dream schedules on Temporal.")
db_app = typer.Typer(no_args_is_help=True, help="The memory store's database.")
index_app = typer.Typer(no_args_is_help=True, help="MEMORY-INDEX.json.")
app.add_typer(schedule_app, name="schedule")
app.add_typer(db_app, name="db")
app.add_typer(index_app, name="index")
app.add_typer(consolidate_app, name="consolidate")
app.add_typer(commitments_app, name="commitments")
app.add_typer(events_app, name="events")
app.add_typer(memory_app, name="memory")
app.add_typer(dream_app, name="dream")
app.add_typer(keys_app, name="keys")
app.add_typer(payload_keys_app, name="payload-keys")
app.command("serve")(serve)
app.command("capabilities")(capabilities)


@app.command()
def demo(
    exit_after_run: Annotated[
        bool, typer.Option("--exit-after-run", help="Stop the stack once the dream is shown.")
    ] = False,
    temporal_port: Annotated[int, typer.Option(help="Temporal dev server gRPC port.")] = 7233,
    ui_port: Annotated[int, typer.Option(help="Temporal UI port.")] = 8233,
    api_port: Annotated[int, typer.Option(help="HTTP API port.", min=1, max=65535)] = 8000,
) -> None:
    """Start embedded PostgreSQL, the Temporal dev server, the worker and the HTTP API;
    run a dream."""
    from memoryctl.demo import DemoOptions, run_demo

    options = DemoOptions(
        exit_after_run=exit_after_run,
        temporal_port=temporal_port,
        ui_port=ui_port,
        api_port=api_port,
    )
    try:
        raise typer.Exit(asyncio.run(run_demo(options)))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


@schedule_app.command("create")
def schedule_create(
    memory_ref: MemoryRefOption,
    token_budget: Annotated[int | None, typer.Option(min=1)] = None,
    cron: Annotated[
        str, typer.Option(help="Cron expression (server time zone UTC).")
    ] = "0 23 * * *",
    schedule_id: Annotated[
        str | None, typer.Option(help="Default: dream:<tenant>:<agent>[:<scope>].")
    ] = None,
) -> None:
    """Create a nightly dream schedule for a memoryRef."""
    from memoryctl.schedules import create_dream_schedule
    from runtime.settings import Settings

    ref = _checked_ref(memory_ref)
    settings = Settings()

    async def action() -> str:
        return await create_dream_schedule(
            await _temporal(),
            ref,
            task_queue=settings.task_queue,
            token_budget=token_budget,
            cron=cron,
            schedule_id=schedule_id,
        )

    console.print(f"created schedule {_run(action)}")


@schedule_app.command("list")
def schedule_list() -> None:
    """List dream schedules."""
    from memoryctl.schedules import ScheduleRow, list_dream_schedules

    async def action() -> list[ScheduleRow]:
        return await list_dream_schedules(await _temporal())

    table = Table("schedule id", "memoryRef", "cron", "next run")
    for row in _run(action):
        table.add_row(row.schedule_id, row.memory_ref, row.cron, row.next_run)
    console.print(table)


@schedule_app.command("trigger")
def schedule_trigger(schedule_id: str) -> None:
    """Run a dream schedule's action now."""
    from memoryctl.schedules import trigger_dream_schedule

    async def action() -> None:
        await trigger_dream_schedule(await _temporal(), schedule_id)

    _run(action)
    console.print(f"triggered {schedule_id}")


@schedule_app.command("delete")
def schedule_delete(schedule_id: str) -> None:
    """Delete a dream schedule (running dreams finish)."""
    from memoryctl.schedules import delete_dream_schedule

    async def action() -> None:
        await delete_dream_schedule(await _temporal(), schedule_id)

    _run(action)
    console.print(f"deleted {schedule_id}")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply the Alembic migrations to DATABASE_URL (or the embedded server)."""
    from memory.database import migrate

    async def action() -> None:
        engine = _engine()
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    _run(action)
    console.print("database schema is at head")


@index_app.command("show")
def index_show(memory_ref: MemoryRefOption) -> None:
    """Print the latest MEMORY-INDEX.json of a memoryRef."""
    from memory.memory_index import INDEX_PATH, read_workspace_file
    from schemas.memory_ref import parse_memory_ref

    ref = parse_memory_ref(_checked_ref(memory_ref))

    async def action() -> tuple[int, bytes] | None:
        engine = _engine()
        try:
            async with engine.connect() as connection:
                return await read_workspace_file(connection, ref, INDEX_PATH)
        finally:
            await engine.dispose()

    found = _run(action)
    if found is None:
        _error(f"no {INDEX_PATH} for {ref} yet (no dream has run)")
        raise typer.Exit(1)
    console.print_json(found[1].decode())


# ---------------------------------------------------------------------- erasure

# A ForgetRequest field, as the option that sets it.
_FORGET_OPTIONS = {"ids": "--id", "tag": "--tag", "subject": "--subject"}
_ERASURE_ROWS = (
    ("source entries", "entries"),
    ("distilled entries rewritten", "distilled_rewritten"),
    ("distilled entries removed", "distilled_removed"),
    ("archives rewritten", "archives_rewritten"),
    ("archives removed", "archives_removed"),
    ("snapshots dropped", "snapshots_dropped"),
)


def _forget_request(
    ids: list[str], tag: str | None, subject: str | None, tenant_wide: bool
) -> ForgetRequest:
    """The request the options describe, or one line naming the option and exit 2."""
    from schemas.memory_entry import ForgetRequest

    present = (("--id", bool(ids)), ("--tag", tag is not None), ("--subject", subject is not None))
    given = [option for option, is_given in present if is_given]
    if not given:
        raise bad_input("forget: give one of --id, --tag or --subject")
    if len(given) > 1:
        raise bad_input(
            f"{given[0]}: cannot be combined with {given[1]} "
            "(give exactly one of --id, --tag or --subject)"
        )
    if tenant_wide and subject is None:
        raise bad_input("--tenant-wide: applies to --subject only")
    try:
        return ForgetRequest(ids=tuple(ids), tag=tag, subject=subject, tenant_wide=tenant_wide)
    except ValidationError as error:
        problem = error.errors()[0]  # one line, naming the option and the rule
        option = _FORGET_OPTIONS.get(str(problem["loc"][0]), str(problem["loc"][0]))
        raise bad_input(f"{option}: {problem['msg']}") from None


def _stdin_is_a_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def _erase(ref: str, request: ForgetRequest, *, dry_run: bool) -> ErasureReport:
    from memory.vault import registry_for_tenant, vault_from_settings
    from runtime.settings import Settings
    from schemas.memory_ref import parse_memory_ref

    async def erase(store: PostgresMemoryStore) -> ErasureReport:
        # The tenant's secrets: a distillate line a dream redacted with a secret
        # registered after the write is still found and erased. Read inside the run, so
        # a vault that refuses a secret is a one-line error too.
        registry = registry_for_tenant(
            vault_from_settings(Settings().secrets_file),
            parse_memory_ref(ref).tenant,
            "memoryctl-forget",
        )
        return await store.erase(ref, request, dry_run=dry_run, secrets=registry)

    return with_store(erase)


def _print_erasure(report: ErasureReport, out: Console) -> None:
    title = "would erase" if report.dry_run else "erased"
    table = Table("artifact", "count", title=title, caption=report.memory_ref)
    for label, field in _ERASURE_ROWS:
        table.add_row(label, str(getattr(report, field)))
    out.print(table)
    if report.entry_ids:
        listed = len(report.entry_ids)
        more = f" (first {listed} of {report.entries})" if report.entries > listed else ""
        out.print(f"entry ids{more}:", markup=False)
        for entry_id in report.entry_ids:
            out.print(f"  {entry_id}", markup=False, soft_wrap=True)


@app.command()
def forget(
    memory_ref: MemoryRefOption,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="An entry id; repeat for several.")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Every entry with this tag.")] = None,
    subject: Annotated[str | None, typer.Option(help="Every entry about this subject.")] = None,
    tenant_wide: Annotated[
        bool,
        typer.Option("--tenant-wide", help="With --subject: every memoryRef of the ref's tenant."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would be erased; change nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Erase without asking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Erase entries and every derived copy of their text (distilled entries, archives,
    snapshots). Without --yes it shows a dry run first and asks."""
    ref = _checked_ref(memory_ref)
    request = _forget_request(ids or [], tag, subject, tenant_wide)
    if not (dry_run or yes or _stdin_is_a_terminal()):
        raise bad_input("forget: pass --yes to erase without a prompt (or --dry-run)")
    if not (dry_run or yes):
        preview = _erase(ref, request, dry_run=True)
        if preview.entries == 0:  # nothing to confirm: the preview is the answer
            _print_report(preview, as_json, "nothing matches: nothing to erase")
            return
        # With --json, stdout carries only the final report; the preview is for the prompt.
        _print_erasure(preview, errors if as_json else console)
        entries = "1 entry" if preview.entries == 1 else f"{preview.entries} entries"
        question = f"Erase {entries} and every derived copy?"
        if not typer.confirm(question, default=False, err=as_json):
            errors.print("not erased", soft_wrap=True)
            raise typer.Exit(EXIT_FAILED)
    report = _erase(ref, request, dry_run=dry_run)
    _print_report(report, as_json)


# The same command under `memoryctl memory`, beside put, get and list.
memory_app.command("forget")(forget)


def _print_report(report: ErasureReport, as_json: bool, note: str | None = None) -> None:
    if as_json:
        _print_json(report.to_wire())
    elif note is not None:
        console.print(note)
    else:
        _print_erasure(report, console)


def _checked_entry_id(entry_id: str) -> str:
    from pydantic import TypeAdapter

    from schemas.memory_entry import EntryId

    try:
        return TypeAdapter(EntryId).validate_python(entry_id)
    except ValidationError as error:
        raise bad_input(f"--id: {error.errors()[0]['msg']}") from None


@app.command()
def lineage(
    memory_ref: MemoryRefOption,
    entry_id: Annotated[str, typer.Option("--id", help="The entry id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the links as JSON.")] = False,
) -> None:
    """Where an entry's text went: every distilled entry, archive and snapshot it reached."""

    ref = _checked_ref(memory_ref)
    entry_id = _checked_entry_id(entry_id)

    links = with_store(lambda store: store.lineage(ref, entry_id))
    if as_json:
        _print_json([link.to_wire() for link in links])
        return
    if not links:
        console.print("no derived copies")
        return
    indirect = any(link.source_id != entry_id for link in links)
    table = Table(title=entry_id)
    table.add_column("kind", no_wrap=True)
    table.add_column("artifact id", overflow="fold")
    if indirect:
        table.add_column("via", overflow="fold")
    for link in links:
        via = [link.source_id if link.source_id != entry_id else ""] if indirect else []
        table.add_row(link.artifact_kind, link.artifact_id, *via)
    console.print(table)


def main() -> None:
    """The console script (see cli.exit_process for how it ends)."""
    try:
        _main()
    except SystemExit as done:
        code = done.code
        exit_process(code if isinstance(code, int) else 0 if code is None else 1)


def _main() -> None:
    """Click's usage errors (a missing option, --token-budget 0) are one line too, like
    every other failure, instead of a framed help box."""
    # Typer 0.2x vendors click; its exception classes are only importable from there.
    from typer._click.exceptions import UsageError

    try:
        status = app(standalone_mode=False)
    except UsageError as error:
        if error.format_message():
            _error(f"{usage_line(error, sys.argv[1:])} (see --help)")
        elif error.ctx is not None:  # no arguments at all: show the help
            console.print(error.ctx.get_help(), markup=False)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except typer.Abort:
        raise SystemExit(130) from None
    raise SystemExit(status if isinstance(status, int) else 0)


if __name__ == "__main__":
    main()
