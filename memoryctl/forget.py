"""memoryctl forget and lineage: erasure, and where an entry's text went.

    memoryctl forget --memory-ref REF (--id ID ... | --tag TAG | --subject S [--tenant-wide])
                     [--dry-run] [--yes] [--json]          erase entries and their derived copies
    memoryctl lineage --memory-ref REF --id ID [--json]    where an entry's text went

Two top-level commands (no group of their own); ``forget`` is also ``memoryctl memory
forget``, which memoryctl/entries.py lists in its group. Output is ids and counts,
never entry content.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from memoryctl.cli import (
    EXIT_FAILED,
    MemoryRefOption,
    bad_input,
    checked_entry_id,
    checked_ref,
    console,
    errors,
    print_json,
    secrets_vault,
    with_store,
)

if TYPE_CHECKING:
    from memory.store import PostgresMemoryStore
    from schemas.erasure import ErasureReport
    from schemas.memory_entry import ForgetRequest
    from schemas.memory_ref import MemoryRef

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


def _erase(ref: MemoryRef, request: ForgetRequest, *, dry_run: bool) -> ErasureReport:
    from memory.redaction.vault import registry_for_tenant

    async def erase(store: PostgresMemoryStore) -> ErasureReport:
        # The tenant's secrets: a distillate line a dream redacted with a secret
        # registered after the write is still found and erased. Read inside the run, so
        # a vault that refuses a secret is a one-line error too.
        registry = registry_for_tenant(secrets_vault(), ref.tenant, "memoryctl-forget")
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


def _print_report(report: ErasureReport, as_json: bool, note: str | None = None) -> None:
    if as_json:
        print_json(report.to_wire())
    elif note is not None:
        console.print(note)
    else:
        _print_erasure(report, console)


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
    ref = checked_ref(memory_ref)
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


def lineage(
    memory_ref: MemoryRefOption,
    entry_id: Annotated[str, typer.Option("--id", help="The entry id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the links as JSON.")] = False,
) -> None:
    """Where an entry's text went: every distilled entry, archive and snapshot it reached."""

    ref = checked_ref(memory_ref)
    entry_id = checked_entry_id(entry_id, "--id")

    links = with_store(lambda store: store.lineage(ref, entry_id))
    if as_json:
        print_json([link.to_wire() for link in links])
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
