"""memoryctl memory: write, read and list the entries of a memoryRef by hand.

    memoryctl memory put --memory-ref REF --content TEXT|- [--tag T ...] [--id ID]
                         [--tier working|episodic|semantic] [--namespace N --key K] [--json]
    memoryctl memory get --memory-ref REF ID [--json]      the entry, content included
    memoryctl memory list --memory-ref REF [--tag T] [--limit N] [--json]
    memoryctl memory forget ...                            the same command as memoryctl forget
    memoryctl memory search --memory-ref REF QUERY ...     ranked by relevance (memoryctl/search.py)

The memory group: its typer app, put, get and list, and (listed last) the ``forget``
command of memoryctl/forget.py. Writes are SR-1 redacted with the tenant's registered
secrets, as every other write is. Only ``get`` prints content; ``put`` and ``list``
print ids, tags and instants.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich import box
from rich.table import Table
from rich.text import Text

from memoryctl.cli import (
    EXIT_FAILED,
    JsonOption,
    MemoryRefOption,
    bad_input,
    checked_entry_id,
    checked_ref,
    console,
    print_error,
    print_json,
    secrets_vault,
    short_instant,
    with_store,
)
from memoryctl.empty_lists import list_or_why
from memoryctl.forget import forget
from memoryctl.search import search
from schemas.base import format_instant
from schemas.memory_entry import MAX_LIST_LIMIT, Tier

if TYPE_CHECKING:
    from memory.redaction.chokepoint import MemorySecretRegistry
    from memory.store import PostgresMemoryStore
    from schemas.memory_entry import HostMemoryEntry, MemoryEntry, NewMemoryEntry
    from schemas.memory_ref import MemoryRef

memory_app = typer.Typer(
    no_args_is_help=True, help="Entries of a memoryRef: put, get, list, forget, search."
)
# A NewMemoryEntry field, as the option that sets it.
_PUT_OPTIONS = {
    "content": "--content",
    "id": "--id",
    "tags": "--tag",
    "tier": "--tier",
    "namespace": "--namespace",
    "key": "--key",
    "supersedes": "--supersedes",
    "supersede_key": "--supersede-key",
}
STDIN = "-"


class VaultUnreadable(Exception):
    """The secrets file cannot be read; no write without the tenant's secrets."""

    exit_status = EXIT_FAILED


def _content(content: str) -> str:
    """--content's text; '-' reads stdin (UTF-8), dropping one trailing newline."""
    if content != STDIN:
        return content
    try:
        text = sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError:
        raise bad_input("--content: stdin is not UTF-8 text") from None
    return text.removesuffix("\n").removesuffix("\r")


def _new_entry(
    content: str,
    tags: list[str],
    tier: Tier,
    namespace: str | None,
    key: str | None,
    supersedes: str | None = None,
    supersede_key: bool = False,
    entry_id: str | None = None,
) -> NewMemoryEntry:
    """The entry the options describe, or one line naming the option and exit 2."""
    from schemas.memory_entry import NewMemoryEntry

    if (namespace is None) != (key is None):
        given, missing = ("--namespace", "--key") if key is None else ("--key", "--namespace")
        raise bad_input(f"{given}: must be given together with {missing}")
    try:
        return NewMemoryEntry(
            content=content,
            id=entry_id,
            tags=tuple(tags),
            tier=tier,
            namespace=namespace,
            key=key,
            supersedes=supersedes,
            supersede_key=supersede_key,
        )
    except ValidationError as error:
        problem = error.errors()[0]  # one line, naming the option and the rule
        field = str(problem["loc"][0]) if problem["loc"] else "input"
        raise bad_input(f"{_PUT_OPTIONS.get(field, field)}: {problem['msg']}") from None


def _tenant_secrets(ref: MemoryRef, run_id: str) -> MemorySecretRegistry:
    """SR-1: the tenant's registered secrets, read when the write runs."""
    from memory.redaction.vault import registry_for_tenant
    from schemas.errors import InvalidInput

    vault = secrets_vault()
    try:
        return registry_for_tenant(vault, ref.tenant, run_id)
    except InvalidInput:
        raise
    except ValueError as error:  # a malformed file; the message never quotes its contents
        raise VaultUnreadable(f"secrets vault: {error}") from None


def _without_content(entry: HostMemoryEntry | MemoryEntry) -> dict[str, object]:
    """The wire form without the text, and without its hash (which would confirm a
    guessed text)."""
    wire = entry.to_wire()
    wire.pop("content", None)
    wire.pop("contentSha256", None)
    return wire


@memory_app.command("put")
def put(
    memory_ref: MemoryRefOption,
    content: Annotated[
        str, typer.Option("--content", help="The entry's text; '-' reads it from stdin.")
    ],
    tags: Annotated[
        list[str] | None, typer.Option("--tag", help="A tag; repeat for several.")
    ] = None,
    tier: Annotated[Tier, typer.Option("--tier", help="The memory tier.")] = Tier.EPISODIC,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="With --key: a keyed entry.")
    ] = None,
    key: Annotated[
        str | None, typer.Option("--key", help="With --namespace: unique per memoryRef.")
    ] = None,
    entry_id: Annotated[
        str | None,
        typer.Option(
            "--id",
            metavar="ID",
            help="The entry's id (the host's own, e.g. mem-88); issued by the store when "
            "left out. An id already in the memoryRef is refused.",
        ),
    ] = None,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            metavar="ID",
            help="This entry states a later value of live entry ID (both kept; reads "
            "rank this one first and mark ID as superseded).",
        ),
    ] = None,
    supersede_key: Annotated[
        bool,
        typer.Option(
            "--supersede-key",
            help="With --key: supersede the live entry holding the key instead of refusing.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Write one entry (SR-1 redacted with the tenant's secrets). Prints its id, never
    its content."""
    ref = checked_ref(memory_ref)
    entry = _new_entry(
        _content(content), tags or [], tier, namespace, key, supersedes, supersede_key, entry_id
    )

    async def write(store: PostgresMemoryStore) -> HostMemoryEntry:
        from schemas.errors import InvalidInput

        try:
            return await store.put(ref, entry, secrets=_tenant_secrets(ref, "memoryctl-put"))
        except InvalidInput as error:  # the store's rules (size, a secret in a key), by option
            option = _PUT_OPTIONS.get(error.field)
            if option is None:
                raise
            raise InvalidInput(option, error.rule) from None

    stored = with_store(write)
    if as_json:
        print_json({"memoryRef": str(ref), **_without_content(stored)})
        return
    keyed = f", {stored.namespace}/{stored.key}" if stored.key else ""
    console.print(
        f"wrote {stored.id} to {ref} ({stored.tier}{keyed}, version {stored.version})",
        markup=False,
        soft_wrap=True,
    )


@memory_app.command("get")
def get(
    memory_ref: MemoryRefOption,
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The entry id.")],
    as_json: JsonOption = False,
) -> None:
    """Print one entry, content included (this is the read path). Exit 1 when the
    memoryRef has no live entry with this id. Not counted as a use for LRU eviction."""
    ref = checked_ref(memory_ref)
    entry_id = checked_entry_id(entry_id, "ID")

    found = with_store(lambda store: store.get_entry(ref, entry_id, touch=False))
    if found is None:
        print_error(f"not_found: no entry {entry_id} in {ref}")
        raise typer.Exit(EXIT_FAILED)
    if as_json:
        print_json(found.to_wire())
        return
    rows = [
        ("id", found.id),
        ("tier", str(found.tier)),
        ("tags", ", ".join(found.tags) or "-"),
        ("namespace/key", f"{found.namespace}/{found.key}" if found.key else "-"),
        ("version", str(found.version)),
        ("created", format_instant(found.created_at)),
        ("updated", format_instant(found.updated_at)),
        ("expires", format_instant(found.expires_at) if found.expires_at else "-"),
    ]
    for label, value in rows:
        console.print(f"{label + ':':<15}{value}", markup=False, soft_wrap=True)
    typer.echo("")
    typer.echo(found.content)  # plain stdout: no markup, no wrapping


@memory_app.command("list")
def list_(
    memory_ref: MemoryRefOption,
    tag: Annotated[str | None, typer.Option("--tag", help="Only entries with this tag.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIST_LIMIT)] = 100,
    as_json: JsonOption = False,
) -> None:
    """Live entries, newest first: ids, tags and instants (never content)."""
    from schemas.memory_entry import MemoryListOptions

    ref = checked_ref(memory_ref)
    try:
        options = MemoryListOptions(tag=tag, limit=limit)
    except ValidationError as error:
        raise bad_input(f"--tag: {error.errors()[0]['msg']}") from None

    entries = list_or_why(lambda store: store.list(ref, options), ref.tenant, ref.agent)
    if as_json:
        print_json([_without_content(entry) for entry in entries])
        return
    if not entries:
        console.print("no entries")
        return
    # One line an entry at 80 columns: the id whole (to copy), an expiry column only
    # when some entry expires, and the first tags with a count of the rest (a distilled
    # entry carries every tag of its sources: all of them wrapped over 30 lines).
    expiring = any(entry.expires_at for entry in entries)
    instant = len(short_instant(entries[0].created_at))
    table = Table(caption=str(ref), box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True, min_width=max(len(entry.id) for entry in entries))
    table.add_column("created", no_wrap=True, min_width=instant)
    if expiring:
        table.add_column("expires", no_wrap=True, min_width=instant)
    # What is left of the width; a tag too long for it ends in an ellipsis.
    table.add_column("tags", overflow="ellipsis")
    for entry in entries:
        expires = [short_instant(entry.expires_at) if entry.expires_at else "-"]
        table.add_row(
            entry.id,
            short_instant(entry.created_at),
            *(expires if expiring else []),
            # Text: a tag such as "[red]" is not markup.
            Text(_first_tags(entry.tags), overflow="ellipsis", no_wrap=True),
        )
    console.print(table)


def _first_tags(tags: Sequence[str], shown: int = 3) -> str:
    """ "ops, billing, renewal +9": --json and `memory get` have them all."""
    rest = f" +{len(tags) - shown}" if len(tags) > shown else ""
    return (", ".join(tags[:shown]) or "-") + rest


# The same command as `memoryctl forget`, beside put, get and list.
memory_app.command("forget")(forget)
memory_app.command("search")(search)
