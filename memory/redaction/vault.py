"""The secrets vault: where each tenant's registered secrets come from (the BYOK
resolver stand-in), and the per-run SR-1 registry built from it."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from memory.redaction.chokepoint import MemorySecretRegistry


def vault_from_settings(secrets_file: str | None) -> FileSecretVault:
    """AGENT_MEMORY_SECRETS_FILE, else secrets.json beside the embedded database."""
    from memory.storage.embedded import default_data_dir

    return FileSecretVault(Path(secrets_file or default_data_dir().parent / "secrets.json"))


class SecretVault(Protocol):
    """The BYOK resolver stand-in: secretId -> value for one tenant."""

    def secrets_for(self, tenant: str) -> Mapping[str, str]: ...


class StaticSecretVault:
    """A vault held in memory (tests, demos); ``secrets`` may be edited in place, as a
    vault gains secrets while runs are under way."""

    def __init__(self, secrets: Mapping[str, Mapping[str, str]]) -> None:
        self.secrets: dict[str, dict[str, str]] = {
            tenant: dict(values) for tenant, values in secrets.items()
        }

    def secrets_for(self, tenant: str) -> Mapping[str, str]:
        return dict(self.secrets.get(tenant, {}))


class FileSecretVault:
    """Reads ``{"<tenant>": {"<secretId>": "<value>"}}`` from a JSON file.

    The file is re-read when its modification time (or size, or inode: an atomic
    rename-over) changes. A missing file means no secrets. A malformed file raises
    ValueError, whose message never quotes the file's contents.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int, int] | None = None
        self._secrets: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def secrets_for(self, tenant: str) -> Mapping[str, str]:
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self._stamp, self._secrets = None, {}
                return {}
            # Stat before reading: a change during the read gives a stale stamp, so the
            # next call reads again; the opposite order could miss a change for good.
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            if stamp != self._stamp:
                self._secrets = _parse_vault(self.path)
                self._stamp = stamp
            return dict(self._secrets.get(tenant, {}))


def _parse_vault(path: Path) -> dict[str, dict[str, str]]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        # ``from None``: the decode error carries the whole document, secrets included.
        raise ValueError(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: must hold a JSON object of tenants")
    vault: dict[str, dict[str, str]] = {}
    for tenant, secrets in loaded.items():
        if not isinstance(secrets, dict):
            raise ValueError(f"{path}: tenant {tenant!r} must map secretIds to values")
        for secret_id, value in secrets.items():
            if not isinstance(value, str):
                raise ValueError(f"{path}: {tenant!r}/{secret_id!r}: value must be a string")
        vault[tenant] = dict(secrets)
    return vault


def registry_for_tenant(vault: SecretVault, tenant: str, run_id: str) -> MemorySecretRegistry:
    """A fresh registry for one run holding the tenant's secrets (raises on a bad one:
    a run must not start with a secret it cannot redact)."""
    registry = MemorySecretRegistry(run_id)
    for secret_id, value in vault.secrets_for(tenant).items():
        registry.register(secret_id, value)
    return registry
