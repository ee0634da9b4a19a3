"""memoryctl payload-keys: the payload encryption keys file (runtime/payload_keys.py).

    memoryctl payload-keys generate [--tenant T ...]     a new file: a system key (+ tenants)
    memoryctl payload-keys rotate (--tenant T | --system) a new active key; old ones decrypt
    memoryctl payload-keys shred --tenant T [--key ID]  delete keys: their payloads are gone
    memoryctl payload-keys list [--json]                key ids and which are active

The payload-keys group: its typer app and every command in it (no database, no
Temporal). The file is --file, else AGENT_MEMORY_PAYLOAD_KEYS_FILE. It is written atomically with
mode 0600; keys are never printed. Workers, the API and memoryctl read it at start:
restart them after a change.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from memoryctl.cli import EXIT_FAILED, JsonOption, bad_input, console, print_json
from runtime.payload_keys import KEY_BYTES, PayloadKeysError, parse_keys

payload_keys_app = typer.Typer(
    no_args_is_help=True,
    help="Keys that encrypt Temporal payloads (AGENT_MEMORY_PAYLOAD_KEYS_FILE).",
)
FileOption = Annotated[
    Path,
    typer.Option(
        "--file",
        envvar="AGENT_MEMORY_PAYLOAD_KEYS_FILE",
        help="The keys file (default: AGENT_MEMORY_PAYLOAD_KEYS_FILE).",
    ),
]
TenantOption = Annotated[
    str, typer.Option("--tenant", help="The tenant (a memoryRef's first segment).")
]


def _new_key() -> str:
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def _all_ids(document: dict[str, Any]) -> set[str]:
    sets = [document["system"], *document.get("tenants", {}).values()]
    if document.get("default"):
        sets.append(document["default"])
    return {key_id for key_set in sets for key_id in key_set["keys"]}


def _next_id(document: dict[str, Any], prefix: str) -> str:
    taken = _all_ids(document)
    number = 1
    while f"{prefix}-{number}" in taken:
        number += 1
    return f"{prefix}-{number}"


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise bad_input(f"--file {path}: cannot be read ({error.strerror})") from None
    try:
        parse_keys(raw, f"--file {path}")  # the same checks as the worker's
    except PayloadKeysError as error:
        raise bad_input(str(error)) from None
    document: dict[str, Any] = json.loads(raw)
    return document


def _write(path: Path, document: dict[str, Any]) -> None:
    try:
        parse_keys(json.dumps(document), "keys file")  # never write one the worker refuses
    except PayloadKeysError as error:
        raise bad_input(str(error)) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".payload-keys-")
    try:
        with os.fdopen(descriptor, "w") as out:
            json.dump(document, out, indent=2, sort_keys=True)
            out.write("\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _add_key(key_set: dict[str, Any], key_id: str) -> None:
    key_set["keys"][key_id] = _new_key()
    key_set["active"] = key_id


@payload_keys_app.command("generate")
def generate(
    file: FileOption,
    tenants: Annotated[
        list[str] | None, typer.Option("--tenant", help="Give this tenant its own key.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write a new keys file: a system key, and one key per --tenant. Refuses to
    overwrite a file (that would shred every payload written under it)."""
    if file.exists():
        raise bad_input(f"--file {file}: exists; rotate keys instead of replacing the file")
    document: dict[str, Any] = {"system": {"active": "sys-1", "keys": {}}, "tenants": {}}
    _add_key(document["system"], "sys-1")
    for tenant in tenants or []:
        document["tenants"][tenant] = {"active": "", "keys": {}}
        _add_key(document["tenants"][tenant], _next_id(document, tenant))
    _write(file, document)
    if as_json:  # key ids only: key material never reaches the terminal
        print_json({"file": str(file), "keyIds": sorted(_all_ids(document))})
        return
    console.print(f"wrote {file} ({len(_all_ids(document))} keys)", markup=False)


@payload_keys_app.command("rotate")
def rotate(
    file: FileOption,
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Rotate this tenant's key.")
    ] = None,
    system: Annotated[bool, typer.Option("--system", help="Rotate the system key.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Add a new key and make it active: new payloads use it, every listed key still
    decrypts. A tenant without its own key gets one. Rotating the system key keeps the
    workflow ids derived from the key they were derived from."""
    if (tenant is None) == (not system):
        raise bad_input("give exactly one of --tenant or --system")
    document = _read(file)
    if system:
        key_set = document["system"]
        key_set.setdefault("ids", key_set["active"])  # ids stay stable across rotations
        key_id = _next_id(document, "sys")
    else:
        assert tenant is not None
        key_set = document.setdefault("tenants", {}).setdefault(tenant, {"active": "", "keys": {}})
        key_id = _next_id(document, tenant)
    _add_key(key_set, key_id)
    _write(file, document)
    if as_json:
        print_json({"file": str(file), "activeKeyId": key_id})
        return
    console.print(f"{key_id} is now active; restart workers and the API", markup=False)


@payload_keys_app.command("shred")
def shred(
    file: FileOption,
    tenant: TenantOption,
    key: Annotated[
        str | None, typer.Option("--key", help="Only this (inactive) key id of the tenant.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Crypto-shredding: delete a tenant's keys (or one old key), so every Temporal
    payload encrypted with them is unreadable from now on, in every history and backup.
    Irreversible."""
    document = _read(file)
    key_set = document.get("tenants", {}).get(tenant)
    if key_set is None:
        console.print(f"tenant {tenant} has no keys of its own", markup=False)
        raise typer.Exit(EXIT_FAILED)
    if key is None:
        removed = sorted(key_set["keys"])
        del document["tenants"][tenant]
    else:
        if key not in key_set["keys"]:
            raise bad_input(f"--key {key}: not a key of tenant {tenant}")
        if key == key_set["active"]:
            raise bad_input(f"--key {key}: is active; rotate first, or shred the tenant")
        removed = [key]
        del key_set["keys"][key]
    _write(file, document)
    if as_json:
        print_json({"file": str(file), "tenant": tenant, "deletedKeyIds": removed})
        return
    console.print(f"deleted {', '.join(removed)}; restart workers and the API", markup=False)


@payload_keys_app.command("list")
def list_(file: FileOption, as_json: JsonOption = False) -> None:
    """Key ids per owner and which one is active (never the keys)."""
    document = _read(file)
    rows = [("system", document["system"])]
    rows += [(f"tenant {name}", ks) for name, ks in sorted(document.get("tenants", {}).items())]
    if document.get("default"):
        rows.append(("default", document["default"]))
    listed = [
        {"owner": owner, "active": ks["active"], "keys": sorted(ks["keys"])} for owner, ks in rows
    ]
    if as_json:
        print_json(listed)
        return
    for row in listed:
        keys = ", ".join(row["keys"])
        line = f"{row['owner']}: active {row['active']}; keys {keys}"
        console.print(line, markup=False, soft_wrap=True)
