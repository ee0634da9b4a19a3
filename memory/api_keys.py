"""API keys for the HTTP surface: each key maps to exactly one tenant (CTI-1 at the edge).

A key reads ``amk_<keyId>_<secret>``. The key id is public (it is what ``keys list``
shows and ``keys revoke`` takes); the secret is 32 random bytes shown once at creation.
Only SHA-256(secret) is stored. A slow password hash buys nothing for a 256-bit random
secret and would cost every request; the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.scope import all_tenants, tenant_scoped
from memory.tables import api_keys as K
from schemas.base import WireResult
from schemas.errors import InvalidInput
from schemas.memory_ref import parse_segment

PREFIX = "amk_"
_KEY_ID_BYTES = 6
_SECRET_BYTES = 32
MAX_NAME_CHARS = 128


class ApiKeyRecord(WireResult):
    """What ``keys list`` shows: never the secret nor its hash."""

    key_id: str
    tenant: str
    name: str
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


@dataclass(frozen=True)
class CreatedKey:
    record: ApiKeyRecord
    key: str  # the whole key, shown once


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

    async def create(self, tenant: str, name: str = "") -> CreatedKey:
        tenant = parse_segment(tenant, "tenant")
        if len(name) > MAX_NAME_CHARS or not name.isprintable():
            raise InvalidInput("name", f"must be at most {MAX_NAME_CHARS} printable characters")
        key_id = secrets.token_hex(_KEY_ID_BYTES)
        secret = secrets.token_urlsafe(_SECRET_BYTES)
        now = datetime.now(UTC)
        async with self.engine.begin() as connection:
            await connection.execute(
                K.insert().values(
                    key_id=key_id,
                    tenant=tenant,
                    name=name,
                    secret_sha256=_digest(secret),
                    created_at=now,
                )
            )
        record = ApiKeyRecord(key_id=key_id, tenant=tenant, name=name, created_at=now)
        return CreatedKey(record=record, key=f"{PREFIX}{key_id}_{secret}")

    async def list(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        query = select(
            K.c.key_id, K.c.tenant, K.c.name, K.c.created_at, K.c.revoked_at, K.c.last_used_at
        ).order_by(K.c.created_at, K.c.key_id)
        if tenant is not None:
            query = query.where(tenant_scoped(K, parse_segment(tenant, "tenant")))
        else:  # the operator's listing of every tenant's keys (memoryctl keys list)
            query = query.execution_options(**all_tenants("operator lists every key"))
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query)).mappings().all()
        return [ApiKeyRecord.model_validate(dict(row)) for row in rows]

    async def revoke(self, key_id: str) -> bool:
        """True when a live key was revoked now; False for unknown or already revoked."""
        async with self.engine.begin() as connection:
            result = await connection.execute(
                update(K)
                .where(K.c.key_id == key_id, K.c.revoked_at.is_(None))
                .values(revoked_at=datetime.now(UTC))
                # Operators revoke by key id, whatever the tenant (memoryctl keys revoke).
                .execution_options(**all_tenants("operator revokes a key by id"))
            )
        return result.rowcount == 1

    async def authenticate(self, key: str) -> str | None:
        """The tenant of a live key, else None (unknown, malformed, revoked, wrong secret)."""
        parts = _split(key)
        if parts is None:
            return None
        key_id, secret = parts
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(K.c.tenant, K.c.secret_sha256)
                    .where(K.c.key_id == key_id, K.c.revoked_at.is_(None))
                    # The key is what tells the tenant: it cannot be scoped before.
                    .execution_options(**all_tenants("authentication finds the key's tenant"))
                )
            ).first()
        if row is None or not hmac.compare_digest(row.secret_sha256, _digest(secret)):
            return None
        return str(row.tenant)
