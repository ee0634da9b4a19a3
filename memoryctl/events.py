"""memoryctl events: a memoryRef's event log (content-free: ids, tags, counts).

    memoryctl events --memory-ref REF [--after-seq N] [--limit N]   one JSON object a line
    memoryctl events tail --memory-ref REF [--type T ...] [--after SEQ] [--follow] [--json]

The events group: its typer app (whose callback is ``events`` alone) and ``tail``.
``events`` alone prints a page of the log as it always has; ``tail`` prints every event
after a sequence number and, with --follow, keeps polling until Ctrl-C (exit 0).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from memoryctl.cli import (
    MEMORY_REF_HELP,
    JsonOption,
    MemoryRefOption,
    bad_input,
    checked_ref,
    open_store,
    run_action,
    with_store,
)
from schemas.events import EventType

if TYPE_CHECKING:
    from schemas.events import EventRecord

POLL_INTERVAL_S = 0.5
_PAGE = 1000
# Event sequence numbers are BIGINT: a larger --after is refused as the option's own.
MAX_SEQ = 2**63 - 1

events_app = typer.Typer(invoke_without_command=True, no_args_is_help=False)


@events_app.callback()
def events(
    ctx: typer.Context,
    memory_ref: Annotated[
        str | None,
        typer.Option("--memory-ref", help=MEMORY_REF_HELP, show_default=False),
    ] = None,
    after_seq: Annotated[int, typer.Option(min=0, max=MAX_SEQ)] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 100,
) -> None:
    """Print the event log of a memoryRef (content-free), one JSON object a line;
    `events tail` filters by type and follows the log."""
    if ctx.invoked_subcommand is not None:
        return
    if memory_ref is None:
        # Public API only: typer vendors click from 0.2x on, so its exception classes
        # live in different modules across the versions pyproject allows.
        raise typer.BadParameter("is required", ctx=ctx, param_hint="'--memory-ref'")
    ref = checked_ref(memory_ref)

    rows = with_store(lambda store: store.events(ref, after_seq=after_seq, limit=limit))
    # typer.echo, not the rich console: rich wraps at the terminal's width (80 columns in
    # a pipe), which split one JSON object over several lines.
    _emit(rows, as_json=True)


def _line(row: EventRecord, as_json: bool) -> str:
    if as_json:
        return json.dumps(row.to_wire())
    wire = row.to_wire()
    payload = json.dumps(row.payload, separators=(",", ":"), sort_keys=True)
    return f"{row.seq:>6}  {wire['occurredAt']}  {row.type:<26} {payload}"


def _emit(rows: list[EventRecord], as_json: bool) -> None:
    # Plain stdout, flushed per batch: a pipe (| grep) sees each event as it comes.
    for row in rows:
        typer.echo(_line(row, as_json))
    sys.stdout.flush()


def _event_types(types: list[str]) -> list[str]:
    """The --type values, each a known event type; otherwise one line listing them (the
    value typed is not repeated: memoryctl/usage.py)."""
    known = [str(t) for t in EventType]
    if any(t not in known for t in types):
        raise bad_input(f"--type: not an event type; the types are {', '.join(known)}")
    return types


@events_app.command("tail")
def tail(
    memory_ref: MemoryRefOption,
    types: Annotated[
        list[str] | None,
        typer.Option(
            "--type",
            metavar="TYPE",
            help="Only events of this type (memory.written, commitment.fired, ...); repeat "
            "for several.",
        ),
    ] = None,
    after: Annotated[
        int,
        typer.Option("--after", min=0, max=MAX_SEQ, help="Only events after this sequence number."),
    ] = 0,
    follow: Annotated[
        bool,
        typer.Option("--follow", help=f"Keep polling (every {POLL_INTERVAL_S:g} s) until Ctrl-C."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Print the events after --after: seq, occurredAt, type and the content-free
    payload, one a line (--json: one JSON object a line). With --follow, print new
    events as they are written until Ctrl-C, which ends the command with exit 0."""
    ref = checked_ref(memory_ref)
    wanted = _event_types(types) if types else None

    async def action() -> None:
        last = after
        async with open_store() as store:
            while True:
                rows = await store.events(ref, after_seq=last, limit=_PAGE, types=wanted)
                _emit(rows, as_json)
                if rows:
                    last = rows[-1].seq
                if len(rows) == _PAGE:
                    continue  # more already written: no pause
                if not follow:
                    return
                await asyncio.sleep(POLL_INTERVAL_S)

    try:
        run_action(action)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
