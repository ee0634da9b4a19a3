"""memoryctl schedule: nightly dream schedules on Temporal, and every schedule listed.

    memoryctl schedule create --memory-ref REF [--token-budget N] [--cron EXPR]
                              [--schedule-id ID]
    memoryctl schedule list | trigger ID | delete ID

`list` shows every schedule of the namespace (dreams, fleet dreams, the automations
applied proposals install, anything else by workflow type) with its target, its cron as
written and whether it is paused; `trigger` and `delete` take any schedule id (deleting
an automation's schedule is how docs/proposals.md uninstalls it).

The commands; the Temporal client calls they make are in memoryctl/dream_schedules.py, imported
only when a command runs (a database command never loads Temporal or workflow code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

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

schedule_app = typer.Typer(
    no_args_is_help=True, help="Temporal schedules: create a dream's; list, trigger, delete any."
)


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
    """List every schedule: dreams, fleet dreams, automations, anything else."""
    from memoryctl.dream_schedules import fleet_overlaps, list_schedules

    async def action() -> list[ScheduleRow]:
        return await list_schedules(await temporal_client())

    rows = run_action(action)
    if as_json:
        print_json(
            [
                {
                    "scheduleId": row.schedule_id,
                    "kind": row.kind,
                    "target": row.target,
                    "memoryRef": row.memory_ref,
                    "cron": row.cron,
                    "jitter": row.jitter,
                    "nextRun": row.next_run,
                    "paused": row.paused,
                }
                for row in rows
            ]
        )
        return
    table = Table()
    # Ids, memoryRefs and times whole (ids to copy); the rest wraps on a narrow terminal.
    table.add_column("schedule id", no_wrap=True)
    table.add_column("starts", overflow="fold")
    table.add_column("target", no_wrap=True)
    table.add_column("cron", overflow="fold")
    table.add_column("next run (UTC)", no_wrap=True)
    table.add_column("paused")
    for row in rows:
        # Minutes are what a cron sets: "2026-11-28 23:00", not the 25-character ISO form.
        next_run = row.next_run[:16].replace("T", " ") if row.next_run != "-" else "-"
        cron = f"{row.cron} (jitter {row.jitter})" if row.jitter else row.cron
        paused = "yes" if row.paused else "no"
        # Text: an id or a workflow type someone else chose is not rich markup.
        cells = (row.schedule_id, row.kind, row.target, cron, next_run, paused)
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)
    for dream, fleet in fleet_overlaps(rows):
        console.print(
            f"note: {dream.schedule_id} and {fleet.schedule_id} ({fleet.target}) both dream "
            f"{dream.memory_ref}: keep either the fleet schedule or the per-agent one",
            markup=False,
            soft_wrap=True,
        )


@schedule_app.command("trigger")
def schedule_trigger(schedule_id: str, as_json: JsonOption = False) -> None:
    """Run a schedule's action now (any schedule id)."""
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
    """Delete a schedule, any id (runs it started finish)."""
    from memoryctl.dream_schedules import delete_dream_schedule

    async def action() -> None:
        await delete_dream_schedule(await temporal_client(), schedule_id)

    run_action(action)
    if as_json:
        print_json({"scheduleId": schedule_id, "deleted": True})
        return
    console.print(f"deleted {schedule_id}")
