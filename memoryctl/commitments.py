"""memoryctl commitments: infer, list, show and cancel inferred commitments.

    memoryctl commitments infer --memory-ref REF [--json]     an inference on Temporal, waited for
    memoryctl commitments list --memory-ref REF [--state armed] [--json]
    memoryctl commitments show --memory-ref REF ID [--json]       ID: cmt-..., as list shows it
    memoryctl commitments confirm --memory-ref REF ID [--json]
    memoryctl commitments cancel --memory-ref REF ID [--json]
    memoryctl commitments timezone --tenant acme [Europe/Berlin]
    memoryctl commitments settings --tenant acme [--time-zone Z] [--require-confirmation
        | --no-require-confirmation] [--date-order MDY|DMY|YMD]
        [--next-weekday refuse-when-ambiguous|coming|following-week] [--json]

The commitments group: its typer app and every command in it. list, confirm and cancel
print ids, states, instants, counts and what inference understood (an instant, a rule
and its zone, a predicate's name, the span's offsets, the conventions applied); show
also serves the parsed condition, the span it read and the intention as the entry
stores them (SR-1 redacted when written), one ``label: value`` line each, ``-`` for
none. infer names each entry it could not read with the parser's reason, a category
(docs/time-grammar.md), never the entry's words. Events never carry that text. A
tenant that requires confirmation gets its inferred commitments as ``proposed``:
nothing fires until ``confirm``.
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich import box
from rich.table import Table

from memoryctl.cli import (
    EXIT_FAILED,
    JsonOption,
    MemoryRefOption,
    bad_input,
    checked_ref,
    console,
    errors,
    open_store,
    plural,
    print_json,
    run_action,
    start_and_wait,
    temporal_client,
    with_store,
)
from memoryctl.empty_lists import list_or_why

if TYPE_CHECKING:
    from memory.store import PostgresMemoryStore
    from schemas.commitment_spec import OnceSpec, PredicateSpec, RecurringSpec
    from schemas.commitments import (
        CommitmentDetail,
        CommitmentInferenceResult,
        CommitmentRecord,
        InferenceResult,
        TenantCommitmentSettings,
    )

commitments_app = typer.Typer(
    no_args_is_help=True, help="Inferred commitments: reminders and follow-ups kept once."
)
# Positional, as every other show takes its id (`proposals show --tenant T ID`,
# `memory get --memory-ref REF ID`).
IdArgument = Annotated[
    str, typer.Argument(metavar="ID", help="A commitment id (cmt-..., list shows it).")
]
StateOption = Annotated[
    Literal["proposed", "armed", "fired", "cancelled", "expired", "missed"] | None,
    typer.Option("--state", help="Only commitments in this state."),
]


def _checked_id(commitment_id: str) -> str:
    """ID by the commitment id grammar (cmt- and hex digits), or one line and exit 2: a
    refusal quotes only an id of that grammar, never arbitrary text."""
    from pydantic import TypeAdapter, ValidationError

    from schemas.commitments import CommitmentId

    try:
        return TypeAdapter(CommitmentId).validate_python(commitment_id)
    except ValidationError:
        raise bad_input("ID: must be a commitment id: cmt- and hex digits") from None


class _Failed(Exception):
    """The one line to print for a refusal."""

    exit_status = EXIT_FAILED


@commitments_app.command("infer")
def infer(memory_ref: MemoryRefOption, as_json: JsonOption = False) -> None:
    """Start a CommitmentInferenceWorkflow for the memoryRef and wait for its counts."""
    ref = checked_ref(memory_ref)

    async def action() -> CommitmentInferenceResult:
        from runtime.settings import Settings
        from runtime.workflow_ids import workflow_ids_for
        from schemas.commitments import CommitmentInferenceInput
        from workflows.commitment_inference import CommitmentInferenceWorkflow

        result: CommitmentInferenceResult = await start_and_wait(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref),
            workflow_id=workflow_ids_for(Settings()).inference(ref),
            summary=f"infer commitments of {ref} (memoryctl)",
            busy=f"an inference over {ref} is already running",
            what=f"inferring commitments of {ref}",
        )
        return result

    result = run_action(action)
    if as_json:
        print_json(result.to_wire())
        return
    found = result.inference
    # The time and predicate counts are of every commitment read, new or already known.
    console.print(
        f"{plural(found.scanned, 'entry', 'entries')} scanned: "
        f"{plural(found.created + found.already_known, 'commitment')} found "
        f"({found.time_commitments:,} time, {found.predicate_commitments:,} predicate), "
        f"{found.created:,} new, {found.already_known:,} already known; "
        f"{plural(result.armed.started, 'workflow')} started, "
        f"{result.armed.deferred:,} due beyond 24 h left to the horizon workflow",
        markup=False,
        soft_wrap=True,
    )
    if found.unparsable_count:
        _print_unparsable(found)


# What each reason code of memory.commitment_parsing.inference.REASONS means, for a
# reader without docs/time-grammar.md: a category, never the entry's words (a workflow
# result carries the code only, and the CLI never reads the entry here).
UNPARSABLE_REASONS: dict[str, str] = {
    "no-time-or-condition": "no time or condition the grammar reads",
    "empty-condition": "a condition with nothing to wait for",
    "time-and-condition": "a time and a condition in one entry",
    "unsupported-recurrence": "a recurrence the grammar cannot read or hold",
    "unresolvable-time": "time words that do not resolve to one instant",
    "time-in-past": "the time is not after when it was written",
    "leftover-words": "words left over after the time phrase",
    "invalid-date": "a date that does not exist",
    "ambiguous-date-order": "a numeric date the tenant's date order cannot place",
    "ambiguous-two-digit-year": "a two-digit year too far away to pick its century",
    "ambiguous-next-weekday": '"next <weekday>" with two readings (settings --next-weekday)',
    "unknown-zone-abbreviation": "a time zone abbreviation not on the allow-list",
}


def _print_unparsable(found: InferenceResult) -> None:
    """Each entry inference could not read, by id, with why (and the reason's code, as
    docs/time-grammar.md lists it). A result from a worker older than reasons has ids
    only."""
    console.print(
        f"{plural(found.unparsable_count, 'entry', 'entries')} not understood:", markup=False
    )
    entries: list[tuple[str, str | None]] = [
        (entry.memory_id, entry.reason) for entry in found.unparsable_entries
    ] or [(memory_id, None) for memory_id in found.unparsable_ids]
    for memory_id, reason in entries:
        why = (
            f"{UNPARSABLE_REASONS.get(reason, 'not understood')} ({reason})"
            if reason
            else "reason not recorded"
        )
        console.print(f"  {memory_id}: {why}", markup=False, soft_wrap=True)
    if found.unparsable_count > len(entries):
        console.print(f"  and {found.unparsable_count - len(entries):,} more", markup=False)


def _span(row: CommitmentRecord) -> str:
    return f"{row.reading.span_start}-{row.reading.span_end}" if row.reading else "-"


def _table(rows: list[CommitmentRecord]) -> Table:
    """What tells commitments apart, readable at 80 columns: the id whole (to copy into
    show, confirm or cancel), its state, when it fires next and how often it fired. The
    rest (entry, condition, reading) is in `show` and --json; nine folded columns made
    every cell a few letters wide."""
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("next (UTC)", no_wrap=True)
    table.add_column("fired", no_wrap=True, justify="right")
    for row in rows:
        table.add_row(
            row.commitment_id,
            row.state,
            row.next_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if row.next_at else "-",
            f"{row.fire_count}" + (f" ({row.missed_count} missed)" if row.missed_count else ""),
        )
    return table


def _fields(detail: CommitmentDetail) -> list[tuple[str, str]]:
    """``show``'s lines, each label once: the record, then the parsed condition under a
    label of its kind (when, repeats, watches), then what inference read. ``-`` for
    what is not there."""
    row = detail.commitment
    reading = row.reading
    return [
        ("id", row.commitment_id),
        ("entry", row.memory_id),
        ("condition", row.condition),
        _spec_field(row.condition, detail.spec),
        ("state", row.state),
        ("understood", row.understood or "-"),
        ("next", row.next_at.isoformat() if row.next_at else "-"),
        ("fired", str(row.fire_count)),
        ("missed", str(row.missed_count)),
        ("intention", _one_line(detail.intention) or "(source entry forgotten)"),
        ("read", _read(detail)),
        ("span", _span(row)),
        ("conventions", ", ".join(reading.conventions) if reading and reading.conventions else "-"),
    ]


def _one_line(text: str | None) -> str:
    """Stored text on its label's line, as typed otherwise: line breaks and tabs become
    spaces, other control and format characters (a terminal escape, a bidi override)
    their escape. --json has the text exactly."""
    import unicodedata

    def plain(char: str) -> str:
        if char in "\r\n\t\v\f":
            return " "
        if unicodedata.category(char) in ("Cc", "Cf"):
            return repr(char)[1:-1]
        return char

    return "".join(plain(char) for char in text or "")


def _spec_field(condition: str, stored: dict[str, object] | None) -> tuple[str, str]:
    """The parsed condition as text (schemas/commitment_spec.py): ``when`` an instant,
    in its zone; ``repeats`` a rule, its time of day and zone; ``watches`` a predicate
    and its arguments."""
    from pydantic import TypeAdapter, ValidationError

    from schemas.commitment_spec import CommitmentSpec, OnceSpec, RecurringSpec

    label = "watches" if condition == "predicate" else "when"
    if not stored:
        return label, "-"
    try:
        spec = TypeAdapter(CommitmentSpec).validate_python(stored)
    except ValidationError:
        return label, "(a condition this version cannot read)"
    if isinstance(spec, OnceSpec):
        return "when", _once(spec)
    if isinstance(spec, RecurringSpec):
        return "repeats", _repeats(spec)
    return "watches", _watches(spec)


def _once(spec: OnceSpec) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return f"{spec.at.astimezone(ZoneInfo(spec.time_zone)).isoformat()} {spec.time_zone}"
    except (ZoneInfoNotFoundError, ValueError):
        return f"{spec.at.astimezone(UTC).isoformat()} (zone {spec.time_zone} unknown here)"


def _repeats(spec: RecurringSpec) -> str:
    """``FREQ=WEEKLY;BYDAY=MO at 09:00 Europe/Berlin, starting 2026-11-30``: the rule, a
    single time of day said as one, INTERVAL=1 left out (it is the default)."""
    parts = dict(part.split("=", 1) for part in spec.rrule.split(";") if "=" in part)
    hour, minute = parts.get("BYHOUR", ""), parts.get("BYMINUTE", "")
    at = ""
    if hour.isdigit() and minute.isdigit() and parts.get("BYSECOND", "0") == "0":
        at = f" at {int(hour):02d}:{int(minute):02d}"
        for key in ("BYHOUR", "BYMINUTE", "BYSECOND"):
            parts.pop(key, None)
    if parts.get("INTERVAL") == "1":
        del parts["INTERVAL"]
    rule = ";".join(f"{key}={value}" for key, value in parts.items())
    start = spec.dtstart
    starting = start.date().isoformat() if start.time() == start.min.time() else start.isoformat()
    return f"{rule}{at} {spec.time_zone}, starting {starting}"


def _watches(spec: PredicateSpec) -> str:
    """``memory.tag_exists with tag soc2-report-filed``."""
    args = ", ".join(f"{name} {_one_line(value)}" for name, value in sorted(spec.args.items()))
    return f"{spec.predicate} with {args}" if args else _one_line(spec.predicate)


@commitments_app.command("list")
def list_(
    memory_ref: MemoryRefOption, state: StateOption = None, as_json: JsonOption = False
) -> None:
    """The memoryRef's commitments, oldest first."""
    ref = checked_ref(memory_ref)
    rows = list_or_why(
        lambda store: store.commitments.list(ref, state=state), ref.tenant, ref.agent
    )
    if as_json:
        print_json([row.to_wire() for row in rows])
    elif rows:
        console.print(_table(rows))
    else:
        console.print("no commitments")


@commitments_app.command("show")
def show(
    memory_ref: MemoryRefOption, commitment_id: IdArgument, as_json: JsonOption = False
) -> None:
    """One commitment: its record, the parsed condition, the intention as stored
    (redacted), what inference read and its occurrence ledger; "-" for none."""
    ref = checked_ref(memory_ref)
    commitment_id = _checked_id(commitment_id)
    detail = with_store(lambda store: store.commitments.show(ref, commitment_id))
    if detail is None:
        errors.print(f"error: no commitment {commitment_id} in {ref}", markup=False, style="red")
        raise typer.Exit(EXIT_FAILED)
    if as_json:
        print_json(detail.to_wire())
        return
    for name, value in _fields(detail):
        console.print(f"{name}: {value}", markup=False, soft_wrap=True)
    console.print("occurrences:" + ("" if detail.occurrences else " -"), markup=False)
    for occurrence in detail.occurrences:
        console.print(
            f"  {occurrence.occurrence}: {occurrence.outcome} at {occurrence.fired_at.isoformat()}"
            + (f", event #{occurrence.event_seq}" if occurrence.event_seq else "")
            + (f", run {occurrence.enqueued_run_id}" if occurrence.enqueued_run_id else ""),
            markup=False,
        )


def _read(detail: CommitmentDetail) -> str:
    if detail.read_text is not None:
        return _one_line(detail.read_text)  # the stored (SR-1 redacted) phrase
    if detail.read_changed:
        return "(the entry changed since inference)"
    return "(not recorded)" if detail.commitment.reading is None else "(source entry forgotten)"


@commitments_app.command("confirm")
def confirm(
    memory_ref: MemoryRefOption, commitment_id: IdArgument, as_json: JsonOption = False
) -> None:
    """Confirm a proposed commitment: armed in the store, then its workflow started (an
    inference run that only arms, id infer-commitments/<ref>/confirm/<id>)."""
    ref = checked_ref(memory_ref)
    commitment_id = _checked_id(commitment_id)

    async def action() -> CommitmentRecord:
        from runtime.settings import Settings
        from runtime.workflow_ids import workflow_ids_for
        from schemas.commitments import CommitmentInferenceInput
        from workflows.commitment_inference import CommitmentInferenceWorkflow

        async with open_store() as store:
            record = await store.commitments.confirm(ref, commitment_id)
        if record is None:
            raise _Failed(f"no commitment {commitment_id} in {ref}")
        if record.state != "armed":
            raise _Failed(f"{commitment_id} is {record.state}: only a proposed one is confirmed")
        await start_and_wait(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref, memory_ids=()),
            workflow_id=workflow_ids_for(Settings()).confirmation(ref, commitment_id),
            summary=f"arm confirmed commitment {commitment_id} of {ref} (memoryctl)",
            busy=f"{commitment_id} is being armed already",
            what=f"arming {commitment_id}",
        )
        async with open_store() as store:
            armed = await store.commitments.show(ref, commitment_id)
        return armed.commitment if armed is not None else record

    record = run_action(action)
    if as_json:
        print_json(record.to_wire())
    else:
        understood = f" ({record.understood})" if record.understood else ""
        console.print(f"{record.commitment_id}: {record.state}{understood}", markup=False)


@commitments_app.command("cancel")
def cancel(
    memory_ref: MemoryRefOption, commitment_id: IdArgument, as_json: JsonOption = False
) -> None:
    """Cancel an armed commitment: the store first (nothing fires after this), then its
    workflow (so no timer is left sleeping)."""
    ref = checked_ref(memory_ref)
    commitment_id = _checked_id(commitment_id)

    async def action() -> CommitmentRecord:
        from temporalio.service import RPCError, RPCStatusCode

        from schemas.commitments import commitment_workflow_id

        async with open_store() as store:
            record = await store.commitments.cancel(ref, commitment_id)
        if record is None:
            raise _Failed(f"no commitment {commitment_id} in {ref}")
        client = await temporal_client()
        try:
            await client.get_workflow_handle(commitment_workflow_id(commitment_id)).cancel()
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
        return record

    record = run_action(action)
    if as_json:
        print_json(record.to_wire())
    else:
        console.print(f"{record.commitment_id}: {record.state}")


@commitments_app.command("timezone")
def timezone(
    tenant: Annotated[
        str, typer.Option("--tenant", help="The tenant (memoryRef's first segment).")
    ],
    zone: Annotated[str | None, typer.Argument(help="IANA zone, e.g. Europe/Berlin.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Show or set the zone a tenant's time expressions mean (default UTC)."""

    async def use(store: PostgresMemoryStore) -> str:
        book = store.commitments
        return await (book.set_time_zone(tenant, zone) if zone else book.time_zone(tenant))

    current = with_store(use)
    if as_json:
        print_json({"tenant": tenant, "timeZone": current})
        return
    console.print(current)


DateOrderOption = Annotated[
    Literal["MDY", "DMY", "YMD"] | None,
    typer.Option("--date-order", help="How a numeric date reads: 04/05 is MDY or DMY."),
]


@commitments_app.command("settings")
def settings(
    tenant: Annotated[
        str, typer.Option("--tenant", help="The tenant (memoryRef's first segment).")
    ],
    time_zone: Annotated[
        str | None, typer.Option("--time-zone", help="IANA zone, e.g. Europe/Berlin.")
    ] = None,
    require_confirmation: Annotated[
        bool | None,
        typer.Option(
            "--require-confirmation/--no-require-confirmation",
            help="Inferred commitments wait as proposed until confirmed.",
        ),
    ] = None,
    date_order: DateOrderOption = None,
    next_weekday: Annotated[
        Literal["refuse-when-ambiguous", "coming", "following-week"] | None,
        typer.Option("--next-weekday", help='What "next Friday" said on a Wednesday means.'),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show a tenant's commitment settings, or set the ones given."""

    async def use(store: PostgresMemoryStore) -> TenantCommitmentSettings:
        book = store.commitments
        if (time_zone, require_confirmation, date_order, next_weekday) == (None,) * 4:
            return await book.settings(tenant)
        return await book.update_settings(
            tenant,
            time_zone=time_zone,
            require_confirmation=require_confirmation,
            date_order=date_order,
            next_weekday=next_weekday,
        )

    found = with_store(use)
    if as_json:
        print_json(found.to_wire())
        return
    console.print(
        f"{found.tenant}: time zone {found.time_zone}, date order {found.date_order}, "
        f"next weekday {found.next_weekday}, "
        f"confirmation {'required' if found.require_confirmation else 'not required'}",
        markup=False,
    )
