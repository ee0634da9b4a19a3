"""Small builders shared by tests."""

from __future__ import annotations

import uuid

from schemas.memory_entry import NewMemoryEntry, Tier


def unique_ref(tenant: str | None = None, agent: str = "agent-1") -> str:
    return f"mem://{tenant or 't' + uuid.uuid4().hex[:10]}/{agent}"


def note(content: str, *tags: str, tier: Tier = Tier.EPISODIC, **extra: object) -> NewMemoryEntry:
    return NewMemoryEntry(content=content, tags=tags, tier=tier, **extra)
