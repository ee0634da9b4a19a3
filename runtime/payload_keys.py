"""The payload keys file: which AES-256-GCM keys encrypt Temporal payloads, per tenant.

    {
      "system":  {"active": "sys-1", "keys": {"sys-1": "<base64 of 32 bytes>"}},
      "tenants": {"acme": {"active": "acme-2", "keys": {"acme-1": "...", "acme-2": "..."}}},
      "default": {"active": "shared-1", "keys": {"shared-1": "..."}}
    }

- ``system`` encrypts payloads that name no memoryRef (ids and counts only) and is
  where the opaque workflow ids and the events' intent links (memory/keyed_ids/intent_links.py)
  are derived from (``system.ids`` names the key, by default the active one; rotation
  pins it so ids and links stay stable).
- ``tenants.<tenant>`` encrypts every payload that names a memoryRef of that tenant.
- ``default`` (optional) serves tenants without their own entry; without it they use
  the system key.

New payloads use each set's ``active`` key; every listed key still decrypts (rotation).
Key ids are unique across the file: a payload's key id alone selects its key. Deleting
a tenant's keys makes its payloads unreadable for good (crypto-shredding).

Errors name the field and the rule, never a key's value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from schemas.errors import InvalidInput
from schemas.memory_ref import parse_segment

KEY_BYTES = 32  # AES-256
KEY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# Domain separation: the workflow-id and intent-link secrets are derived from a system
# key, never the key itself, and never the same secret twice.
_IDS_INFO = b"agent-memory/workflow-ids/v1"
_INTENT_LINKS_INFO = b"agent-memory/intent-links/v1"


class PayloadKeysError(ValueError):
    """The keys file is missing or malformed; the message names the field, never a key."""

    exit_status = 2  # memoryctl prints the message and exits with it (bad input)


def _key_bytes(value: object) -> bytes:
    if not isinstance(value, str):
        raise ValueError("must be a base64 string")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be base64") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"must decode to {KEY_BYTES} bytes (AES-256)")
    return raw


KeyId = Annotated[str, Field(pattern=KEY_ID_PATTERN)]
KeyMaterial = Annotated[bytes, BeforeValidator(_key_bytes)]


class _Model(BaseModel):
    # Key material must never be echoed into an error message or a log line.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class KeySet(_Model):
    active: KeyId
    keys: dict[KeyId, KeyMaterial] = Field(min_length=1)

    @model_validator(mode="after")
    def _active_is_listed(self) -> KeySet:
        if self.active not in self.keys:
            raise ValueError("active must name one of keys")
        return self


class SystemKeySet(KeySet):
    # The key the opaque workflow ids derive from; unset: the active key.
    ids: KeyId | None = None

    @model_validator(mode="after")
    def _ids_is_listed(self) -> SystemKeySet:
        if self.ids is not None and self.ids not in self.keys:
            raise ValueError("ids must name one of keys")
        return self


class PayloadKeysFile(_Model):
    system: SystemKeySet
    tenants: dict[str, KeySet] = {}
    default: KeySet | None = None

    @field_validator("tenants")
    @classmethod
    def _tenant_names(cls, value: dict[str, KeySet]) -> dict[str, KeySet]:
        for tenant in value:
            try:
                parse_segment(tenant, "tenants")
            except InvalidInput as error:
                raise ValueError(f"tenant names {error.rule}") from None
        return value

    @model_validator(mode="after")
    def _key_ids_are_unique(self) -> PayloadKeysFile:
        seen: set[str] = set()
        for key_set in self._sets():
            for key_id in key_set.keys:
                if key_id in seen:
                    raise ValueError(f"key id {key_id} is listed twice; key ids must be unique")
                seen.add(key_id)
        return self

    def _sets(self) -> list[KeySet]:
        return [self.system, *self.tenants.values(), *([self.default] if self.default else [])]


class Scope(Enum):
    SYSTEM = "system"
    TENANT = "tenant"
    DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class PayloadKey:
    key_id: str
    scope: Scope
    tenant: str | None  # for Scope.TENANT
    aead: AESGCM  # made once per key: building it per payload would dominate the cost


class Keyring:
    """Every configured key by id, and which one encrypts new payloads of a tenant."""

    def __init__(self, config: PayloadKeysFile) -> None:
        self._by_id: dict[str, PayloadKey] = {}

        def add(key_set: KeySet, scope: Scope, tenant: str | None) -> PayloadKey:
            for key_id, material in key_set.keys.items():
                self._by_id[key_id] = PayloadKey(key_id, scope, tenant, AESGCM(material))
            return self._by_id[key_set.active]

        self.system = add(config.system, Scope.SYSTEM, None)
        self._tenants = {
            tenant: add(key_set, Scope.TENANT, tenant) for tenant, key_set in config.tenants.items()
        }
        self._default = add(config.default, Scope.DEFAULT, None) if config.default else None
        ids_key = config.system.keys[config.system.ids or config.system.active]
        self.workflow_id_secret = hmac.new(ids_key, _IDS_INFO, hashlib.sha256).digest()
        self.intent_link_secret = hmac.new(ids_key, _INTENT_LINKS_INFO, hashlib.sha256).digest()

    def active_for(self, tenant: str | None) -> PayloadKey:
        if tenant is None:
            return self.system
        return self._tenants.get(tenant) or self._default or self.system

    def get(self, key_id: str) -> PayloadKey | None:
        return self._by_id.get(key_id)


def _problems(error: ValidationError) -> str:
    rules = [
        f"{'.'.join(str(p) for p in problem['loc']) or 'file'}: {problem['msg']}"
        for problem in error.errors(include_url=False, include_input=False, include_context=False)
    ]
    return "; ".join(rules[:5])


def parse_keys(raw: bytes | str, source: str = "payload keys") -> PayloadKeysFile:
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        # Position only: the message of a JSON error may quote the text around it.
        where = f" (line {error.lineno})" if isinstance(error, json.JSONDecodeError) else ""
        raise PayloadKeysError(f"{source}: not valid JSON{where}") from None
    try:
        return PayloadKeysFile.model_validate(document)
    except ValidationError as error:
        raise PayloadKeysError(f"{source}: {_problems(error)}") from None


def load_keyring(path: str | os.PathLike[str]) -> Keyring:
    """The keyring of the file at ``path``; PayloadKeysError naming the field if not."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise PayloadKeysError(
            f"AGENT_MEMORY_PAYLOAD_KEYS_FILE {path}: cannot be read ({error.strerror})"
        ) from None
    return Keyring(parse_keys(raw, f"AGENT_MEMORY_PAYLOAD_KEYS_FILE {path}"))


_cache: dict[str, tuple[tuple[int, int], Keyring]] = {}


def cached_keyring(path: str) -> Keyring:
    """load_keyring once per version of the file (keyed on its mtime and size), so every
    client, id and API request of a process shares one keyring and its AESGCM objects."""
    try:
        stat = os.stat(path)
        version = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        return load_keyring(path)  # raises the readable error
    hit = _cache.get(path)
    if hit is not None and hit[0] == version:
        return hit[1]
    keyring = load_keyring(path)
    _cache[path] = (version, keyring)
    return keyring
