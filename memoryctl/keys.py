"""memoryctl keys: the HTTP API's keys (one tenant each, stored hashed).

    memoryctl keys create --tenant T [--name N] [--scope S ...] [--key-file PATH] [--json]
                                               prints the key once (or writes it to
                                               PATH, mode 0600), its id and scopes
    memoryctl keys list [--tenant T] [--json]  ids, tenants, names, scopes, dates
    memoryctl keys revoke KEY_ID               exit 1: unknown or already revoked

The keys group: its typer app and every command in it. The whole key is shown by
``create`` and never again: ``list`` shows key ids, never a secret or its hash. Scopes
(such as ``proposals:apply``) gate only the HTTP routes that say they require one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from memoryctl.cli import (
    EXIT_FAILED,
    JsonOption,
    bad_input,
    console,
    print_json,
    short_instant,
    with_store,
)

if TYPE_CHECKING:
    from memory.tenants.api_keys import ApiKeyStore, CreatedKey

T = TypeVar("T")

keys_app = typer.Typer(no_args_is_help=True, help="API keys for the HTTP API (memoryctl serve).")
_KEY_ID = re.compile(r"[0-9a-f]{12}")  # memory.tenants.api_keys: token_hex(6)
TenantHelp = "The tenant (a memoryRef's first segment) the key acts for."
ScopeHelp = "A scope the key grants, such as proposals:apply; repeat for several."


class KeyNotRevoked(Exception):
    """The one line to print when revoke finds no live key."""

    exit_status = EXIT_FAILED


def _with_keys(use: Callable[[ApiKeyStore], Awaitable[T]]) -> T:
    """One key-store call over the store's engine (with_store: connect, call, dispose,
    failures as one line)."""
    from memory.tenants.api_keys import ApiKeyStore

    return with_store(lambda store: use(ApiKeyStore(store.engine)))


@keys_app.command("create")
def create(
    tenant: Annotated[str, typer.Option("--tenant", help=TenantHelp)],
    name: Annotated[str, typer.Option("--name", help="A label for people (printable).")] = "",
    scopes: Annotated[list[str] | None, typer.Option("--scope", help=ScopeHelp)] = None,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file",
            metavar="PATH",
            help="Write the key to PATH (readable by you only) instead of printing it.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a key for a tenant. The key is printed now and never again: store it."""
    if key_file is not None and not key_file.parent.is_dir():
        raise bad_input("--key-file: its directory must exist")
    created: CreatedKey = _with_keys(lambda keys: keys.create(tenant, name, scopes or ()))
    if key_file is not None:
        write_key_file(key_file, created.key)
    if as_json:
        wire = created.record.to_wire()
        print_json({**wire, "keyFile": str(key_file)} if key_file else {**wire, "key": created.key})
        return
    record = created.record
    console.print(f"created key id {record.key_id} for tenant {record.tenant}", markup=False)
    console.print(f"scopes: {_scopes(record.scopes)}", markup=False)
    if key_file is not None:
        # soft_wrap: a path cut in two cannot be copied.
        console.print(
            f"key written to {key_file} (readable by you only)", markup=False, soft_wrap=True
        )
        return
    console.print("key (shown only this once; send it as the X-API-Key header):", markup=False)
    # Plain stdout, never wrapped: a wrapped key cannot be copied whole.
    typer.echo(created.key)


def write_key_file(path: Path, key: str) -> None:
    """The key alone on one line, in a file only its owner reads (``--key-file``, and the
    quick start's own key file), so a script reads it with $(cat PATH) and no terminal
    shows it."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)  # an existing file keeps its mode through O_CREAT
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")


@keys_app.command("list")
def list_(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's keys.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Key ids, tenants, names, scopes and dates, oldest first (never a secret or its
    hash)."""

    records = _with_keys(lambda keys: keys.list(tenant))
    if as_json:
        print_json([record.to_wire() for record in records])
        return
    if not records:
        console.print("no keys")
        return
    # Two lines a key, so it reads at 80 columns with the id and every scope whole.
    table = Table()
    table.add_column("key id\ntenant", no_wrap=True)
    table.add_column("name\nscopes", overflow="fold")
    table.add_column("created\nlast used", no_wrap=True)
    table.add_column("revoked", no_wrap=True)
    for record in records:
        table.add_row(
            f"{record.key_id}\n{record.tenant}",
            # Text: a name such as "[red]" is not markup
            Text(f"{record.name or '-'}\n{_scopes(record.scopes)}"),
            f"{short_instant(record.created_at)}\n{short_instant(record.last_used_at)}",
            short_instant(record.revoked_at),
        )
    console.print(table)


def _scopes(scopes: tuple[str, ...]) -> str:
    # Spaces, so a narrow table wraps between scopes, never inside one.
    return " ".join(scopes) or "-"


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (keys list shows it).")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a key: requests with it are refused from now on. Exit 1 when no live key
    has this id (unknown, or already revoked)."""

    if not _KEY_ID.fullmatch(key_id):  # quoted below only once it has the key id grammar
        raise bad_input("KEY_ID: must be a key id: 12 hex digits, as keys list shows it")

    async def use(keys: ApiKeyStore) -> None:
        if not await keys.revoke(key_id):
            raise KeyNotRevoked(f"key id {key_id!r}: no live key (unknown or already revoked)")

    _with_keys(use)
    if as_json:
        print_json({"keyId": key_id, "revoked": True})
        return
    console.print(f"revoked {key_id}", markup=False)
