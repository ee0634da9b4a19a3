"""SR-1: the secret-redaction chokepoint.

Every write of content goes through ``write_redacted``: each registered secret value is
replaced by ``[REDACTED:<secretId>]``. The rules follow the openwop reference:

- literal substring matching, never regex (secret values cannot trigger ReDoS);
- longest secret first: where occurrences overlap, the longer secret wins whole;
- values shorter than 8 characters are ignored (the gitleaks/TruffleHog floor);
- per-run registries (RunSecretRegistries) that die with the run.

One Aho-Corasick automaton finds every occurrence of every secret in one pass, so 1,000
registered secrets cost about what one does. Replacing a secret inserts marker text, and
marker text next to the original text could in theory spell another secret again; the
pass therefore repeats until nothing matches, and fails closed (refuses the write) in
the pathological case that it never settles.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import ahocorasick

from memory.errors import InvalidInput

MIN_SECRET_LENGTH = 8
MARKER_PREFIX = "[REDACTED:"
MAX_PASSES = 8
_SECRET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


class UnredactableContent(InvalidInput):
    """Redaction did not settle: refuse the write rather than store a secret."""

    code = "unredactable_content"

    def __init__(self) -> None:
        super().__init__("content", "registered secrets could not be redacted; write refused")


class MemorySecretRegistry:
    """The secrets resolved for one run (BYOK vault values at user/tenant/run scope)."""

    def __init__(self, run_id: str = "") -> None:
        self.run_id = run_id
        self._secrets: dict[str, str] = {}
        self._automaton: ahocorasick.Automaton | None = None
        self._lock = threading.Lock()

    def register(self, secret_id: str, value: str) -> bool:
        """Register a secret; returns False (and ignores it) below the length floor."""
        if not isinstance(secret_id, str) or not _SECRET_ID.fullmatch(secret_id):
            raise ValueError(
                "secretId: must be 1-128 characters of letters, digits, '.', '_', ':' and '-', "
                "starting with a letter or digit"
            )
        if not isinstance(value, str):
            raise ValueError("value: must be a string")
        if len(value) < MIN_SECRET_LENGTH:
            return False
        if MARKER_PREFIX in value:
            raise ValueError(f"value: must not contain the redaction marker {MARKER_PREFIX!r}")
        with self._lock:
            self._secrets[secret_id] = value
            self._automaton = None
        return True

    def __len__(self) -> int:
        return len(self._secrets)

    def __repr__(self) -> str:  # never the values
        return f"MemorySecretRegistry(run_id={self.run_id!r}, secrets={len(self._secrets)})"

    @property
    def secret_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self._secrets))

    def _built(self) -> ahocorasick.Automaton | None:
        with self._lock:
            if self._automaton is None and self._secrets:
                automaton = ahocorasick.Automaton()
                # Two ids may share a value; the lexically first id names it, stably.
                for secret_id, value in sorted(self._secrets.items(), reverse=True):
                    automaton.add_word(value, (secret_id, len(value)))
                automaton.make_automaton()
                self._automaton = automaton
            return self._automaton

    def contains_secret(self, text: str) -> bool:
        automaton = self._built()
        if automaton is None or not text:
            return False
        return next(iter(automaton.iter(text)), None) is not None

    def redact(self, text: str) -> str:
        automaton = self._built()
        if automaton is None or not text:
            return text
        for _ in range(MAX_PASSES):
            redacted = _one_pass(automaton, text)
            if redacted is None:
                return text
            text = redacted
        if self.contains_secret(text):
            raise UnredactableContent()
        return text


def _one_pass(automaton: ahocorasick.Automaton, text: str) -> str | None:
    """Replace occurrences, longest first where they overlap; None when nothing matched."""
    found = [
        (end - length + 1, end + 1, secret_id) for end, (secret_id, length) in automaton.iter(text)
    ]
    if not found:
        return None
    # Longest first, then leftmost: a longer secret containing or overlapping a shorter
    # one is redacted whole, as sorting by descending length and replacing would.
    found.sort(key=lambda match: (match[0] - match[1], match[0]))
    taken: list[tuple[int, int, str]] = []
    occupied = bytearray(len(text))
    for start, stop, secret_id in found:
        if not any(occupied[start:stop]):
            occupied[start:stop] = b"\x01" * (stop - start)
            taken.append((start, stop, secret_id))
    taken.sort()
    pieces: list[str] = []
    cursor = 0
    for start, stop, secret_id in taken:
        pieces.append(text[cursor:start])
        pieces.append(f"{MARKER_PREFIX}{secret_id}]")
        cursor = stop
    pieces.append(text[cursor:])
    return "".join(pieces)


def write_redacted(content: str, registry: MemorySecretRegistry | None) -> str:
    """THE chokepoint: every write path of the store passes content through here."""
    return registry.redact(content) if registry is not None else content


class RunSecretRegistries:
    """Process-wide per-run registries, keyed by run id; discard when the run ends."""

    def __init__(self) -> None:
        self._registries: dict[str, MemorySecretRegistry] = {}
        self._lock = threading.Lock()

    def for_run(self, run_id: str) -> MemorySecretRegistry:
        with self._lock:
            return self._registries.setdefault(run_id, MemorySecretRegistry(run_id))

    def discard(self, run_id: str) -> None:
        with self._lock:
            self._registries.pop(run_id, None)

    def __len__(self) -> int:
        return len(self._registries)


class SecretVault(Protocol):
    """The BYOK resolver stand-in: secretId -> value for one tenant."""

    def secrets_for(self, tenant: str) -> Mapping[str, str]: ...


class StaticSecretVault:
    def __init__(self, secrets: Mapping[str, Mapping[str, str]]) -> None:
        self.secrets: dict[str, dict[str, str]] = {t: dict(s) for t, s in secrets.items()}

    def secrets_for(self, tenant: str) -> Mapping[str, str]:
        return self.secrets.get(tenant, {})


class FileSecretVault:
    """Reads ``{"<tenant>": {"<secretId>": "<value>"}}`` from a JSON file, re-reading it
    when its modification time changes. A missing file means no secrets."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._secrets: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def secrets_for(self, tenant: str) -> Mapping[str, str]:
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self._stamp, self._secrets = None, {}
                return {}
            stamp = (stat.st_mtime_ns, stat.st_size)
            if stamp != self._stamp:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                if not isinstance(loaded, dict):
                    raise ValueError(f"{self.path}: must hold a JSON object of tenants")
                self._secrets = {
                    str(t): {str(k): str(v) for k, v in s.items()} for t, s in loaded.items()
                }
                self._stamp = stamp
            return dict(self._secrets.get(tenant, {}))


def registry_for_tenant(vault: SecretVault, tenant: str, run_id: str) -> MemorySecretRegistry:
    registry = MemorySecretRegistry(run_id)
    for secret_id, value in vault.secrets_for(tenant).items():
        registry.register(secret_id, value)
    return registry
