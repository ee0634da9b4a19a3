"""Small builders shared by tests.

Every content string built here is remembered in WRITTEN_TEXTS so the end-of-session
history audit (tests/support/session_history_audit.py) can prove none of it reached Temporal.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from schemas.memory_entry import NewMemoryEntry, Tier

WRITTEN_TEXTS: set[str] = set()
SECRET_CANARIES: set[str] = set()


def unique_ref(tenant: str | None = None, agent: str = "agent-1") -> str:
    return f"mem://{tenant or 't' + uuid.uuid4().hex[:10]}/{agent}"


def note(content: str, *tags: str, tier: Tier = Tier.EPISODIC, **extra: object) -> NewMemoryEntry:
    WRITTEN_TEXTS.add(content)
    return NewMemoryEntry(content=content, tags=tags, tier=tier, **extra)


def canary() -> str:
    """A fresh secret value that must never appear outside redaction markers."""
    value = f"canary-{uuid.uuid4().hex}"
    SECRET_CANARIES.add(value)
    return value


class Clock:
    """A settable store clock: ``PostgresMemoryStore(engine, clock=Clock(t))``, then move
    ``clock.now`` to let time pass."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now
