"""API keys for the HTTP surface: each key maps to exactly one tenant (CTI-1 at the edge).

A key reads ``amk_<keyId>_<secret>``. The key id is public (it is what ``keys list``
shows and ``keys revoke`` takes); the secret is 32 random bytes shown once at creation.
Only SHA-256(secret) is stored. A slow password hash buys nothing for a 256-bit random
secret and would cost every request; the comparison is constant-time.

A key may carry scopes (RFC 0049 style strings such as ``proposals:apply``): they gate
only the routes that say they require one; every other route needs just a live key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage.tables import api_keys as API_KEYS
from memory.storage.tenant_scope import all_tenants, tenant_scoped
from schemas.base import WireResult
from schemas.errors import InvalidInput
from schemas.memory_ref import parse_segment

PREFIX = "amk_"
_KEY_ID_BYTES = 6
_SECRET_BYTES = 32
MAX_NAME_CHARS = 128
MAX_SCOPE_CHARS = 64
MAX_SCOPES = 16
# How fresh "last used" is: one write a minute per key at most, however busy the key
# (the API also caches a resolved key for 2 s, api/auth.py).
LAST_USED_RESOLUTION = timedelta(minutes=1)
_SCOPE = re.compile(rf"[a-z][a-z0-9:._*-]{{0,{MAX_SCOPE_CHARS - 1}}}")


class ApiKeyRecord(WireResult):
    """What ``keys list`` shows: never the secret nor its hash."""

    key_id: str
    tenant: str
    name: str
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreatedKey:
    record: ApiKeyRecord
    key: str  # the whole key, shown once


@dataclass(frozen=True, slots=True)
class KeyIdentity:
    """Who a live key is: its tenant, its public id and its scopes."""

    tenant: str
    key_id: str
    scopes: frozenset[str]


def parse_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """A key's scopes, checked, without duplicates and sorted (as they are stored)."""
    if isinstance(scopes, str):  # one scope is not its characters
        raise TypeError("scopes must be a collection of strings, not one string")
    distinct = set(scopes)
    for scope in distinct:
        if not isinstance(scope, str) or not _SCOPE.fullmatch(scope):
            raise InvalidInput(
                "scopes",
                f"each scope must be 1-{MAX_SCOPE_CHARS} characters: lowercase ASCII letters, "
                "digits and ':' '.' '_' '-' '*', starting with a letter",
            )
    if len(distinct) > MAX_SCOPES:
        raise InvalidInput("scopes", f"at most {MAX_SCOPES} scopes per key")
    return tuple(sorted(distinct))


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def key_id_of(key: str) -> str | None:
    """The public id of a presented key (the part ``keys list`` shows), if well formed."""
    parts = _split(key)
    return parts[0] if parts else None


def _split(key: str) -> tuple[str, str] | None:
    if not key.startswith(PREFIX):
        return None
    parts = key[len(PREFIX) :].split("_", 1)
    if len(parts) != 2 or not all(parts) or not key.isascii():
        return None
    return parts[0], parts[1]


class ApiKeyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create(self, tenant: str, name: str = "", scopes: Iterable[str] = ()) -> CreatedKey:
        tenant = parse_segment(tenant, "tenant")
        if len(name) > MAX_NAME_CHARS or not name.isprintable():
            raise InvalidInput("name", f"must be at most {MAX_NAME_CHARS} printable characters")
        checked = parse_scopes(scopes)
        key_id = secrets.token_hex(_KEY_ID_BYTES)
        secret = secrets.token_urlsafe(_SECRET_BYTES)
        now = datetime.now(UTC)
        async with self.engine.begin() as connection:
            await connection.execute(
                API_KEYS.insert().values(
                    key_id=key_id,
                    tenant=tenant,
                    name=name,
                    secret_sha256=_digest(secret),
                    created_at=now,
                    scopes=list(checked),
                )
            )
        record = ApiKeyRecord(
            key_id=key_id, tenant=tenant, name=name, created_at=now, scopes=checked
        )
        return CreatedKey(record=record, key=f"{PREFIX}{key_id}_{secret}")

    async def list(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        query = select(
            API_KEYS.c.key_id,
            API_KEYS.c.tenant,
            API_KEYS.c.name,
            API_KEYS.c.created_at,
            API_KEYS.c.revoked_at,
            API_KEYS.c.last_used_at,
            API_KEYS.c.scopes,
        ).order_by(API_KEYS.c.created_at, API_KEYS.c.key_id)
        if tenant is not None:
            query = query.where(tenant_scoped(API_KEYS, parse_segment(tenant, "tenant")))
        else:  # the operator's listing of every tenant's keys (memoryctl keys list)
            query = query.execution_options(**all_tenants("operator lists every key"))
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query)).mappings().all()
        return [ApiKeyRecord.model_validate(dict(row)) for row in rows]

    async def revoke(self, key_id: str) -> bool:
        """True when a live key was revoked now; False for unknown or already revoked."""
        async with self.engine.begin() as connection:
            result = await connection.execute(
                update(API_KEYS)
                .where(API_KEYS.c.key_id == key_id, API_KEYS.c.revoked_at.is_(None))
                .values(revoked_at=datetime.now(UTC))
                # Operators revoke by key id, whatever the tenant (memoryctl keys revoke).
                .execution_options(**all_tenants("operator revokes a key by id"))
            )
        return result.rowcount == 1

    async def authenticate(self, key: str) -> KeyIdentity | None:
        """Who a live key is (tenant, key id, scopes), else None (unknown, malformed,
        revoked, wrong secret). A key that authenticates is marked used (``keys list``'s
        "last used"), at most once every LAST_USED_RESOLUTION."""
        parts = _split(key)
        if parts is None:
            return None
        key_id, secret = parts
        # The key is what tells the tenant: it cannot be scoped before.
        any_tenant = all_tenants("authentication finds the key's tenant")
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(
                        API_KEYS.c.tenant,
                        API_KEYS.c.secret_sha256,
                        API_KEYS.c.scopes,
                        API_KEYS.c.last_used_at,
                    )
                    .where(API_KEYS.c.key_id == key_id, API_KEYS.c.revoked_at.is_(None))
                    .execution_options(**any_tenant)
                )
            ).first()
            if row is None or not hmac.compare_digest(row.secret_sha256, _digest(secret)):
                return None
            now = datetime.now(UTC)
            if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
                await connection.execute(
                    update(API_KEYS)
                    .where(API_KEYS.c.key_id == key_id)
                    .values(last_used_at=now)
                    .execution_options(**any_tenant)
                )
                await connection.commit()
        return KeyIdentity(str(row.tenant), key_id, frozenset(row.scopes))
