"""memoryctl consolidate: run a pass, audit what passes marked, list conflicts, undo.

    memoryctl consolidate run --memory-ref REF [--json]        a pass on Temporal, waited for
    memoryctl consolidate audit --memory-ref REF [--pass ID] [--json]
    memoryctl consolidate conflicts --memory-ref REF [--json]
    memoryctl consolidate undo --memory-ref REF --pass ID [--json]

The consolidate group: its typer app and every command in it. Output is ids, counts and
kinds, never entry content (read that with the store's get).
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
    short_instant,
    start_and_wait,
    with_store,
)

if TYPE_CHECKING:
    from schemas.consolidation import (
        ConsolidationResult,
    )


consolidate_app = typer.Typer(
    no_args_is_help=True, help="Consolidation: merge duplicates, supersede stale keys."
)
PassOption = Annotated[str, typer.Option("--pass", help="A pass id (cp-...).")]


@consolidate_app.command("run")
def run(
    memory_ref: MemoryRefOption,
    paraphrases: Annotated[
        bool,
        typer.Option("--paraphrases", help="Also merge texts that say the same in other words."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Start a ConsolidationWorkflow for the memoryRef and wait for its counts."""
    ref = checked_ref(memory_ref)

    async def action() -> ConsolidationResult:
        from runtime.settings import Settings
        from runtime.workflow_ids import workflow_ids_for
        from schemas.consolidation import ConsolidationInput
        from workflows.consolidation import ConsolidationWorkflow

        result: ConsolidationResult = await start_and_wait(
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=ref, paraphrases=paraphrases),
            workflow_id=workflow_ids_for(Settings()).consolidation(ref),
            summary=f"consolidate {ref} (memoryctl)",
            busy=f"a consolidation of {ref} is already running",
            what=f"consolidating {ref}",
        )
        return result

    result = run_action(action)
    if as_json:
        print_json(result.to_wire())
        return
    table = Table(title=f"pass {result.pass_id}")
    table.add_column("")
    table.add_column("count", justify="right")
    for label, value in (
        ("long-term entries in", result.input_count),
        ("long-term entries out", result.output_count),
        ("merged (duplicates)", result.merged_count),
        ("superseded (older key values)", result.superseded_count),
        ("new conflicts recorded", result.conflict_count),
        ("clusters left for the next pass", result.skipped_clusters),
    ):
        table.add_row(label, str(value))
    console.print(table)


@consolidate_app.command("audit")
def audit(
    memory_ref: MemoryRefOption,
    pass_id: Annotated[str | None, typer.Option("--pass", help="Only this pass.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Rows passes marked (merged or superseded): invisible to list/get, kept for undo."""
    ref = checked_ref(memory_ref)

    rows = with_store(lambda store: store.superseded(ref, pass_id=pass_id))
    if as_json:
        print_json([row.to_wire() for row in rows])
        return
    if not rows:
        console.print("nothing marked")
        return
    table = Table()
    table.add_column("id", no_wrap=True)  # whole, so it can be copied
    for column in ("reason", "superseded by", "pass"):
        table.add_column(column, overflow="fold")
    table.add_column("at", no_wrap=True)
    for row in rows:
        table.add_row(
            row.id,
            row.reason,
            row.superseded_by,
            row.pass_id or "",
            short_instant(row.superseded_at),
        )
    console.print(table)


@consolidate_app.command("conflicts")
def conflicts(memory_ref: MemoryRefOption, as_json: JsonOption = False) -> None:
    """Look-alikes left unmerged because a number, date, negation, name or identifier
    differs (one is probably stale: edit or forget it)."""
    ref = checked_ref(memory_ref)

    rows = with_store(lambda store: store.conflicts(ref))
    if as_json:
        print_json([row.to_wire() for row in rows])
        return
    if not rows:
        console.print("no open conflicts")
        return
    table = Table()
    for column in ("entry", "entry", "differ in", "found by"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row.first_id, row.second_id, ", ".join(row.kinds), row.pass_id)
    console.print(table)


@consolidate_app.command("undo")
def undo(memory_ref: MemoryRefOption, pass_id: PassOption, as_json: JsonOption = False) -> None:
    """Bring back every row a pass marked and take their corroboration off survivors."""
    ref = checked_ref(memory_ref)

    report = with_store(lambda store: store.undo_consolidation(ref, pass_id))
    if as_json:
        print_json(report.to_wire())
        return
    console.print(
        f"pass {report.pass_id} undone: {report.restored} entries restored, "
        f"{report.survivors_changed} survivors changed"
    )
