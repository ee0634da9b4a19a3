"""memoryctl: the project's command line.

    memoryctl demo [--exit-after-run]                      the quick start's main job
    memoryctl schedule create --memory-ref REF [--token-budget N] [--cron EXPR]
    memoryctl schedule list | trigger ID | delete ID
    memoryctl db upgrade                                   apply migrations to DATABASE_URL
    memoryctl index show --memory-ref REF                  print MEMORY-INDEX.json
    memoryctl events --memory-ref REF                      print the content-free event log

Bad input exits with status 2 and a message naming the field; nothing is written.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from schemas.errors import InvalidInput

T = TypeVar("T")
app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
schedule_app = typer.Typer(no_args_is_help=True, help="Dream schedules on Temporal.")
db_app = typer.Typer(no_args_is_help=True, help="The memory store's database.")
index_app = typer.Typer(no_args_is_help=True, help="MEMORY-INDEX.json.")
app.add_typer(schedule_app, name="schedule")
app.add_typer(db_app, name="db")
app.add_typer(index_app, name="index")
console = Console()
errors = Console(stderr=True)

MemoryRefOption = Annotated[
    str, typer.Option("--memory-ref", help="mem://<tenant>/<agent>[/<scope>]")
]


def _error(message: str) -> None:
    # markup=False: messages quote grammar like mem://<tenant>/<agent>[/<scope>].
    errors.print(f"error: {message}", markup=False, style="red")


def _run(action: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine; turn input errors into exit status 2 with the field named."""
    try:
        return asyncio.run(action())  # type: ignore[arg-type]
    except InvalidInput as error:
        _error(str(error))
        raise typer.Exit(2) from None
    except ValidationError as error:
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"]) or "input"
            _error(f"{field}: {problem['msg']}")
        raise typer.Exit(2) from None


def _checked_ref(memory_ref: str) -> str:
    from schemas.memory_ref import parse_memory_ref

    try:
        return str(parse_memory_ref(memory_ref))
    except InvalidInput as error:
        _error(str(error))
        raise typer.Exit(2) from None


@app.command()
def demo(
    exit_after_run: Annotated[
        bool, typer.Option("--exit-after-run", help="Stop the stack once the dream is shown.")
    ] = False,
    temporal_port: Annotated[int, typer.Option(help="Temporal dev server gRPC port.")] = 7233,
    ui_port: Annotated[int, typer.Option(help="Temporal UI port.")] = 8233,
) -> None:
    """Start embedded PostgreSQL, the Temporal dev server and the worker; run a dream."""
    from memoryctl.demo import DemoOptions, run_demo

    options = DemoOptions(
        exit_after_run=exit_after_run, temporal_port=temporal_port, ui_port=ui_port
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
        str | None, typer.Option(help="Default: dream-<tenant>-<agent>.")
    ] = None,
) -> None:
    """Create a nightly dream schedule for a memoryRef."""
    from memoryctl.schedules import create_dream_schedule
    from runtime.client import connect
    from runtime.settings import Settings

    ref = _checked_ref(memory_ref)
    settings = Settings()

    async def action() -> str:
        client = await connect(settings)
        return await create_dream_schedule(
            client,
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
    from memoryctl.schedules import list_dream_schedules
    from runtime.client import connect

    async def action() -> list[object]:
        return list(await list_dream_schedules(await connect()))

    table = Table("schedule id", "memoryRef", "cron", "next run")
    for row in _run(action):
        table.add_row(row.schedule_id, row.memory_ref, row.cron, row.next_run)  # type: ignore[attr-defined]
    console.print(table)


@schedule_app.command("trigger")
def schedule_trigger(schedule_id: str) -> None:
    """Run a dream schedule's action now."""
    from memoryctl.schedules import trigger_dream_schedule
    from runtime.client import connect

    async def action() -> None:
        await trigger_dream_schedule(await connect(), schedule_id)

    _run(action)
    console.print(f"triggered {schedule_id}")


@schedule_app.command("delete")
def schedule_delete(schedule_id: str) -> None:
    """Delete a dream schedule (running dreams finish)."""
    from memoryctl.schedules import delete_dream_schedule
    from runtime.client import connect

    async def action() -> None:
        await delete_dream_schedule(await connect(), schedule_id)

    _run(action)
    console.print(f"deleted {schedule_id}")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply the Alembic migrations to DATABASE_URL (or the embedded server)."""
    from memory.database import create_engine, migrate

    async def action() -> None:
        engine = create_engine()
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    _run(action)
    console.print("database schema is at head")


@index_app.command("show")
def index_show(memory_ref: MemoryRefOption) -> None:
    """Print the latest MEMORY-INDEX.json of a memoryRef."""
    from memory.database import create_engine
    from memory.memory_index import INDEX_PATH, read_workspace_file
    from schemas.memory_ref import parse_memory_ref

    ref = parse_memory_ref(_checked_ref(memory_ref))

    async def action() -> tuple[int, bytes] | None:
        engine = create_engine()
        try:
            async with engine.connect() as connection:
                return await read_workspace_file(connection, ref, INDEX_PATH)
        finally:
            await engine.dispose()

    found = _run(action)
    if found is None:
        errors.print(f"no {INDEX_PATH} for {ref} yet (no dream has run)")
        raise typer.Exit(1)
    console.print_json(found[1].decode())


@app.command()
def events(
    memory_ref: MemoryRefOption,
    after_seq: Annotated[int, typer.Option(min=0)] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 100,
) -> None:
    """Print the event log of a memoryRef (content-free)."""
    from memory.database import create_engine
    from memory.store import PostgresMemoryStore

    ref = _checked_ref(memory_ref)

    async def action() -> list[dict[str, object]]:
        engine = create_engine()
        try:
            rows = await PostgresMemoryStore(engine).events(ref, after_seq=after_seq, limit=limit)
            return [row.to_wire() for row in rows]
        finally:
            await engine.dispose()

    for row in _run(action):
        console.print(json.dumps(row))


if __name__ == "__main__":
    app()
