"""entry_out builds the OpenIntent shape of an entry without validating it again when no
field comes from metadata: the result is the validated model, field for field, and
serialises to the same bytes; with OpenIntent fields in the metadata it validates them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from api.openintent_models import MemoryEntryOut, entry_out, value_of
from schemas.memory_entry import HostMemoryEntry, Priority, Tier

T0 = datetime(2026, 11, 27, 9, 30, 0, 250000, tzinfo=UTC)


def _entry(**changes: Any) -> HostMemoryEntry:
    fields: dict[str, Any] = {
        "id": "m1",
        "content": '{"kind":"fact","n":3,"text":"café closes at 6"}',
        "tags": ("billing", "café"),
        "created_at": T0,
        "expires_at": T0 + timedelta(days=1),
        "tier": Tier.EPISODIC,
        "namespace": "notes/fact",
        "key": "item-3",
        "version": 4,
        "pinned": True,
        "priority": Priority.HIGH,
        "metadata": {},
        "updated_at": T0 + timedelta(minutes=1),
        "last_accessed_at": T0,
        "content_sha256": "0" * 64,
    }
    fields.update(changes)
    return HostMemoryEntry(**fields)


def _validated(entry: HostMemoryEntry, agent: str) -> MemoryEntryOut:
    return MemoryEntryOut(
        id=entry.id,
        agent_id=agent,
        namespace=entry.namespace or "",
        key=entry.key or "",
        value=value_of(entry.content),
        memory_type=entry.tier,
        tags=list(entry.tags),
        pinned=entry.pinned,
        priority=entry.priority,
        version=entry.version,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        expires_at=entry.expires_at,
        scope=None,
        ttl=None,
        sensitivity=None,
        curated_by=None,
    )


@pytest.mark.parametrize(
    "entry",
    [
        _entry(),
        _entry(content="plain text, not JSON", namespace=None, key=None, expires_at=None),
        _entry(content="[1, 2]", tags=(), pinned=False, priority=Priority.LOW),
    ],
)
def test_without_openintent_metadata_it_is_the_validated_model(entry: HostMemoryEntry) -> None:
    built, validated = entry_out(entry, "agent-1"), _validated(entry, "agent-1")
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()
    assert repr(built) == repr(validated)


def test_openintent_metadata_is_still_validated() -> None:
    scoped = _entry(metadata={"openintent": {"scope": {"task_id": "t-1"}, "ttl": "task_lifetime"}})
    out = entry_out(scoped, "agent-1")
    assert out.scope is not None and out.scope.task_id == "t-1" and out.ttl == "task_lifetime"
    with pytest.raises(ValidationError):
        entry_out(_entry(metadata={"openintent": {"sensitivity": "top-secret"}}), "agent-1")
