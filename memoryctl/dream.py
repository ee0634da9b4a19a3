"""memoryctl dream run: one dream (distil, consolidate, infer commitments, collect
garbage) on Temporal now, waited for, its counts printed; memoryctl dream fleet: the same
for every agent with new work, one FleetDreamWorkflow (workflows/fleet_dream.py).

    memoryctl dream run --memory-ref REF [--token-budget N] [--json]
    memoryctl dream fleet [--tenant T] [--token-budget N] [--batch-size N]
                          [--concurrency N] [--json]

The workflow id is the memoryRef's schedule id, ``dream:<tenant>:<agent>``; a dream its
schedule started is that id with the scheduled time appended. Both distil under the same
child id, ``distill/<memoryRef>``, so the two never distil one memoryRef at once: the
later one reports ``skipped-overlap``.
The dream group: its typer app and its one command. Output is statuses, counts and
checksums, never entry content.
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
    errors,
    print_json,
    run_action,
    start_and_wait,
)

if TYPE_CHECKING:
    from schemas.fleet import FleetDreamResult
    from schemas.workflow_io import DreamResult

dream_app = typer.Typer(
    no_args_is_help=True, help="Dreams: distil, consolidate and infer commitments now."
)


@dream_app.command("run")
def run(
    memory_ref: MemoryRefOption,
    token_budget: Annotated[
        int | None,
        typer.Option("--token-budget", min=1, help="Distillation budget (default: the maximum)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Start a DreamWorkflow for the memoryRef and wait for it (a spinner shows while it
    runs); print its summary. Ctrl-C stops waiting, not the dream."""
    ref = checked_ref(memory_ref)

    async def action() -> DreamResult:
        from runtime.settings import Settings
        from runtime.workflow_ids import workflow_ids_for
        from schemas.workflow_io import DreamInput
        from workflows.dream import DreamWorkflow

        result: DreamResult = await start_and_wait(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=token_budget),
            workflow_id=workflow_ids_for(Settings()).dream(ref),
            summary=f"dream over {ref} (memoryctl)",
            busy=f"a dream over {ref} started by memoryctl is already running",
            what=f"dreaming over {ref}",
        )
        return result

    # On stderr and transient: stdout carries only the summary (or the JSON).
    with errors.status(f"waiting for the dream over {ref}", spinner="dots"):
        result = run_action(action)
    if as_json:
        print_json(result.to_wire())
        return
    console.print(_summary(result))


@dream_app.command("fleet")
def fleet(
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="One tenant's agents (default: every tenant).")
    ] = None,
    token_budget: Annotated[
        int | None,
        typer.Option("--token-budget", min=1, help="Distillation budget (default: the maximum)."),
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, max=500, help="Agents per activity.")
    ] = 50,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=64, help="Batches in flight at once.")
    ] = 4,
    as_json: JsonOption = False,
) -> None:
    """Dream every agent with something new now (idle agents cost nothing), wait for it
    and print the counts. The workflow id is ``fleet-dream/<tenant>`` or
    ``fleet-dream/all``: a second fleet dream of the same scope while one runs is refused."""
    from pydantic import ValidationError

    from schemas.fleet import FleetDreamInput

    try:
        request = FleetDreamInput(
            tenant=tenant,
            token_budget=token_budget,
            batch_size=batch_size,
            concurrency=concurrency,
        )
    except ValidationError as error:
        raise typer.BadParameter(str(error.errors()[0]["msg"]), param_hint="--tenant") from None

    async def action() -> FleetDreamResult:
        from runtime.settings import Settings
        from runtime.workflow_ids import workflow_ids_for
        from workflows.fleet_dream import FleetDreamWorkflow

        result: FleetDreamResult = await start_and_wait(
            FleetDreamWorkflow.run,
            request,
            workflow_id=workflow_ids_for(Settings()).fleet_dream(tenant),
            summary=f"fleet dream of {tenant or 'every tenant'} (memoryctl)",
            busy=f"a fleet dream of {tenant or 'every tenant'} is already running",
            what=f"dreaming the agents of {tenant or 'every tenant'} with new work",
        )
        return result

    with errors.status("waiting for the fleet dream", spinner="dots"):
        result = run_action(action)
    if as_json:
        print_json(result.to_wire())
        return
    p = result.progress
    table = Table(title=f"fleet dream of {result.tenant or 'every tenant'}", show_header=False)
    table.add_column("", no_wrap=True)
    table.add_column("", overflow="fold")
    table.add_row("agents dreamed", str(p.dreamed))
    table.add_row("left with more to do", f"{p.more_left} (budget full; due again next run)")
    table.add_row("failed", f"{p.failed} {' '.join(p.failed_refs)}".rstrip())
    table.add_row("batches / pages", f"{p.batches} / {p.pages}")
    console.print(table)


def _summary(result: DreamResult) -> Table:
    table = Table(title=f"dream over {result.memory_ref}", show_header=False)
    table.add_column("", no_wrap=True)
    table.add_column("", overflow="fold")
    table.add_row("status", result.status)
    distilled = result.distillation
    if distilled is not None:
        table.add_row("distillation", distilled.status)
        left = f" ({distilled.deferred_count} deferred, {distilled.oversized_count} oversized)"
        table.add_row("sources distilled", f"{distilled.source_count}{left}")
        table.add_row("tokens used / budget", f"{distilled.tokens_used} / {distilled.token_budget}")
        table.add_row("archive checksum", distilled.archive_checksum or "-")
    consolidated = result.consolidation
    if consolidated is not None:
        table.add_row(
            "consolidation",
            f"{consolidated.input_count} -> {consolidated.output_count} long-term entries, "
            f"{consolidated.merged_count} merged, {consolidated.superseded_count} superseded, "
            f"{consolidated.conflict_count} new conflicts",
        )
    commitments = result.commitments
    if commitments is not None:
        found = commitments.inference
        table.add_row(
            "commitments",
            f"{found.scanned} entries scanned, {found.created} new "
            f"({found.time_commitments} time, {found.predicate_commitments} predicate), "
            f"{found.already_known} already known, {commitments.armed.started} armed",
        )
    garbage = result.garbage
    if garbage is not None:
        table.add_row(
            "expired",
            f"{garbage.expired_entries} entries, {garbage.expired_archives} archives, "
            f"{garbage.old_snapshots} snapshots",
        )
    return table
