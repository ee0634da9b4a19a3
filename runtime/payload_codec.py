"""AES-256-GCM for every Temporal payload (inputs, results, signals, markers, memos,
summaries, failure details and, with the encoded-attributes failure converter, failure
messages and stack traces), with per-tenant keys (runtime/payload_keys.py).

Which key: the tenant of the memoryRef the payload names (a ``mem://<tenant>/...``
anywhere in it, parsed with the one memoryRef parser), else the system key. So a
tenant's payloads become unreadable when its keys are deleted (crypto-shredding), and a
codec server can decode for a tenant exactly the payloads of that tenant.

Wire form of an encrypted payload: metadata ``encoding: binary/encrypted`` and
``encryption-key-id: <key id>``; data ``nonce (12 random bytes) || ciphertext+tag`` of
the serialised original payload (its own metadata included), with the key id as
associated data, so a payload relabelled with another key id fails to authenticate.
Search attributes never pass through a codec: they stay in clear.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from runtime.payload_keys import KEY_ID_PATTERN, Keyring
from schemas.memory_ref import try_parse_memory_ref

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12
_AAD_PREFIX = b"agent-memory/payload/v1:"
# A candidate memoryRef inside a payload's bytes (JSON or plain text); each candidate is
# then parsed by schemas.memory_ref, the one grammar.
_REF = re.compile(rb"mem://[A-Za-z0-9._-]+/[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)?")
_KEY_ID = re.compile(KEY_ID_PATTERN)


class PayloadDecryptionError(Exception):
    """A payload cannot be decrypted. Names the key id (or that it is malformed), never
    payload content or key material."""

    def __init__(self, message: str, key_id: str | None) -> None:
        super().__init__(message)
        self.key_id = key_id


def tenants_in(data: bytes) -> set[str]:
    """The tenants of every memoryRef written in ``data``."""
    if b"mem://" not in data:
        return set()  # the common case for id/count payloads: no regex pass
    found = set()
    for match in _REF.finditer(data):
        # A ref at the end of a sentence may carry a trailing '.', which no segment ends in.
        ref = try_parse_memory_ref(match.group().decode("ascii").rstrip("."))
        if ref is not None:
            found.add(ref.tenant)
    return found


def is_encrypted(payload: Payload) -> bool:
    return payload.metadata.get("encoding") == ENCODING


def key_id_of(payload: Payload) -> str | None:
    """The key id an encrypted payload names, or None when it is absent or malformed."""
    raw = payload.metadata.get(KEY_ID, b"").decode("utf-8", "replace")
    return raw if _KEY_ID.fullmatch(raw) else None


class EncryptionCodec(PayloadCodec):
    def __init__(self, keyring: Keyring) -> None:
        self.keyring = keyring

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(payload) if is_encrypted(payload) else payload for payload in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        if is_encrypted(payload):
            return payload  # encoding twice (a codec server's /encode, say) changes nothing
        tenants = tenants_in(payload.data)
        # A payload naming two tenants (none of ours do) is not given to either: the system
        # key, which the codec server decodes for nobody when the payload names tenants.
        key = self.keyring.active_for(next(iter(tenants)) if len(tenants) == 1 else None)
        nonce = os.urandom(NONCE_BYTES)
        sealed = key.aead.encrypt(
            nonce, payload.SerializeToString(), _AAD_PREFIX + key.key_id.encode()
        )
        return Payload(
            metadata={"encoding": ENCODING, KEY_ID: key.key_id.encode()},
            data=nonce + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        key_id = key_id_of(payload)
        if key_id is None:
            raise PayloadDecryptionError(
                "encrypted payload without a well-formed encryption-key-id", None
            )
        key = self.keyring.get(key_id)
        if key is None:
            raise PayloadDecryptionError(
                f"payload key {key_id} is not configured: payloads encrypted with it are "
                "unreadable (deleted keys are how forget reaches Temporal history)",
                key_id,
            )
        data = payload.data
        try:
            plain = key.aead.decrypt(
                data[:NONCE_BYTES], data[NONCE_BYTES:], _AAD_PREFIX + key_id.encode()
            )
        except (InvalidTag, ValueError):  # ValueError: data shorter than a nonce
            raise PayloadDecryptionError(
                f"payload under key {key_id} failed authentication (corrupt, or a different "
                "key with this id)",
                key_id,
            ) from None
        decoded = Payload()
        decoded.ParseFromString(plain)
        return decoded
