"""memoryctl schedule: nightly dream schedules on Temporal.

    memoryctl schedule create --memory-ref REF [--token-budget N] [--cron EXPR]
                              [--schedule-id ID]
    memoryctl schedule list | trigger ID | delete ID

The commands; the Temporal client calls they make are in memoryctl/dream_schedules.py, imported
only when a command runs (a database command never loads Temporal or workflow code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from memoryctl.cli import (
    JsonOption,
    MemoryRefOption,
    checked_ref,
    console,
    print_json,
    run_action,
    temporal_client,
)

if TYPE_CHECKING:
    from memoryctl.dream_schedules import ScheduleRow

schedule_app = typer.Typer(no_args_is_help=True, help="Dream schedules on Temporal.")


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
    as_json: JsonOption = False,
) -> None:
    """Create a nightly dream schedule for a memoryRef."""
    from memoryctl.dream_schedules import create_dream_schedule
    from runtime.settings import Settings

    ref = checked_ref(memory_ref)
    settings = Settings()

    async def action() -> str:
        return await create_dream_schedule(
            await temporal_client(),
            ref,
            task_queue=settings.task_queue,
            token_budget=token_budget,
            cron=cron,
            schedule_id=schedule_id,
        )

    created = run_action(action)
    if as_json:
        print_json({"scheduleId": created, "memoryRef": str(ref), "cron": cron})
        return
    console.print(f"created schedule {created}")


@schedule_app.command("list")
def schedule_list(as_json: JsonOption = False) -> None:
    """List dream schedules."""
    from memoryctl.dream_schedules import list_dream_schedules

    async def action() -> list[ScheduleRow]:
        return await list_dream_schedules(await temporal_client())

    rows = run_action(action)
    if as_json:
        print_json(
            [
                {
                    "scheduleId": row.schedule_id,
                    "memoryRef": row.memory_ref,
                    "cron": row.cron,
                    "nextRun": row.next_run,
                }
                for row in rows
            ]
        )
        return
    table = Table("schedule id", "memoryRef", "cron", "next run (UTC)")
    for row in rows:
        # Minutes are what a cron sets: "2026-11-28 23:00", not the 25-character ISO form.
        next_run = row.next_run[:16].replace("T", " ") if row.next_run != "-" else "-"
        table.add_row(row.schedule_id, row.memory_ref, row.cron, next_run)
    console.print(table)


@schedule_app.command("trigger")
def schedule_trigger(schedule_id: str, as_json: JsonOption = False) -> None:
    """Run a dream schedule's action now."""
    from memoryctl.dream_schedules import trigger_dream_schedule

    async def action() -> None:
        await trigger_dream_schedule(await temporal_client(), schedule_id)

    run_action(action)
    if as_json:
        print_json({"scheduleId": schedule_id, "triggered": True})
        return
    console.print(f"triggered {schedule_id}")


@schedule_app.command("delete")
def schedule_delete(schedule_id: str, as_json: JsonOption = False) -> None:
    """Delete a dream schedule (running dreams finish)."""
    from memoryctl.dream_schedules import delete_dream_schedule

    async def action() -> None:
        await delete_dream_schedule(await temporal_client(), schedule_id)

    run_action(action)
    if as_json:
        print_json({"scheduleId": schedule_id, "deleted": True})
        return
    console.print(f"deleted {schedule_id}")
