"""OpenIntent RFC-0015 wire shapes (snake_case, as the RFC and its SDK write them) and
their mapping onto the store's entries.

Mapping (documented in docs/http-api.md):
- an API key's tenant T and an OpenIntent ``agent_id`` A address ``mem://T/A``;
- ``namespace`` and ``key`` are the entry's own namespace and key ((namespace, key) is
  unique per memoryRef, as RFC-0015 §1.2 asks per agent);
- ``value`` is stored as its RFC 8785 canonical JSON text in the entry's content, so SR-1
  redaction, distillation and consolidation see it like any other entry; an entry
  written as plain text elsewhere reads back as ``{"text": ...}``;
- ``memory_type`` is the tier; ``scope``, ``ttl``, ``sensitivity`` and ``curated_by``
  ride in the entry's metadata under ``openintent``; ``ttl: duration:<ISO 8601>``
  becomes ``expires_at`` (an explicit ``expires_at`` wins, as §1.1 says).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import rfc8785
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from api.errors import ApiError
from memory.entries.rows import unchecked
from memory.entries.said import SAID_AT_KEY, SAID_BY_KEY
from schemas.base import Instant
from schemas.errors import ErrorCode
from schemas.input_rules import CHECK_TEXT
from schemas.memory_entry import (
    MAX_CONTENT_BYTES,
    MAX_TAGS,
    EntryId,
    HostMemoryEntry,
    Name,
    Priority,
    SaidBy,
    Tag,
    Tier,
)

OPENINTENT_METADATA = "openintent"
ScopeId = Annotated[str, StringConstraints(min_length=1, max_length=128), CHECK_TEXT]
TtlPolicy = Annotated[
    str, StringConstraints(max_length=64, pattern=r"^(task_lifetime|duration:P[0-9A-Z.]+)$")
]
# RFC-0015 timestamps; emitted as +00:00, which datetime.fromisoformat reads on every
# Python the SDK supports (it rejects "Z" before 3.11).
Timestamp = Annotated[
    datetime, PlainSerializer(lambda value: value.astimezone(UTC).isoformat(), return_type=str)
]
_DURATION: TypeAdapter[timedelta] = TypeAdapter(timedelta)


class _OpenIntentModel(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True, frozen=True)


class MemoryScope(_OpenIntentModel):
    task_id: ScopeId | None = None
    intent_id: ScopeId | None = None


Sensitivity = Literal["public", "internal", "confidential", "restricted"]


class CreateMemoryRequest(_OpenIntentModel):
    # Defaults to the caller's X-Agent-ID.
    agent_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    # Optional (extension): an entry without a key is a new fact; byte-identical
    # restatements of it merge in consolidation. Given, both go together.
    namespace: Name | None = None
    key: Name | None = None
    value: dict[str, Any]
    memory_type: Tier = Tier.WORKING
    scope: MemoryScope | None = None
    tags: tuple[Tag, ...] = Field(default=(), max_length=MAX_TAGS)
    ttl: TtlPolicy | None = None
    pinned: StrictBool = False
    priority: Priority = Priority.NORMAL
    sensitivity: Sensitivity | None = None
    curated_by: ScopeId | None = None
    expires_at: Instant | None = None
    # Extensions (additive, RFC-0015 §4.3): when and by whom the value was said, for an
    # agent storing a conversation after the fact (memory/entries/said.py).
    said_at: AwareDatetime | None = None
    said_by: SaidBy | None = None
    # Facts that change (extensions, issue 39): this value updates the live entry
    # ``supersedes`` (both kept; reads rank this one first and mark the older), and a
    # live entry holding this namespace/key is superseded instead of answering 409.
    supersedes: EntryId | None = None
    supersede_existing: StrictBool = False

    def said(self) -> dict[str, Any]:
        """The entry's metadata keys for said_at and said_by."""
        said: dict[str, Any] = {}
        if self.said_at is not None:
            said[SAID_AT_KEY] = self.said_at.isoformat()
        if self.said_by is not None:
            said[SAID_BY_KEY] = self.said_by
        return said


class UpdateMemoryRequest(_OpenIntentModel):
    value: dict[str, Any] | None = None
    tags: tuple[Tag, ...] | None = Field(default=None, max_length=MAX_TAGS)
    pinned: StrictBool | None = None
    priority: Priority | None = None
    ttl: TtlPolicy | None = None
    expires_at: Instant | None = None
    scope: MemoryScope | None = None
    sensitivity: Sensitivity | None = None


class MemoryEntryOut(BaseModel):
    id: str
    agent_id: str
    namespace: str
    key: str
    value: dict[str, Any]
    memory_type: Tier
    scope: MemoryScope | None = None
    tags: list[str]
    ttl: str | None = None
    pinned: bool
    priority: Priority
    sensitivity: Sensitivity | None = None
    curated_by: str | None = None
    version: int
    created_at: Timestamp
    updated_at: Timestamp
    expires_at: Timestamp | None = None
    # Extensions (additive): a later entry that supersedes this one's value, and the
    # entries it conflicts with (memory/search/update_marks.py); null when none.
    superseded_by: str | None = None
    conflicts_with: list[str] | None = None


class MemoryPage(BaseModel):
    entries: list[MemoryEntryOut]
    total: int
    limit: int
    offset: int


class DeletedEntry(BaseModel):
    id: str
    deleted: bool


class LifecycleEvent(BaseModel):
    seq: int
    type: str
    agent_id: str
    data: dict[str, Any]
    timestamp: Timestamp


class EventPage(BaseModel):
    events: list[LifecycleEvent]
    next_cursor: int | None


class IntentEventOut(BaseModel):
    """One item of ``GET /api/v1/intents/{intent_id}/events``, as the SDK's
    ``IntentEvent.from_dict`` reads it. ``id`` is ``<agent>:<sequence>``, stable;
    ``sequence`` is the event's place in its agent's log (sequences are per agent)."""

    id: str
    intent_id: str
    event_type: str
    actor: str
    payload: dict[str, Any]
    created_at: Timestamp
    sequence: int


def lifecycle_data(payload: dict[str, Any]) -> dict[str, Any]:
    """What both event routes tell of a lifecycle event: ids, versions, tags and why,
    never the value (RFC-0015 §5.2)."""
    return {
        "entry_id": payload.get("memoryId"),
        "namespace": payload.get("namespace"),
        "key": payload.get("key"),
        "memory_type": payload.get("tier"),
        "version": payload.get("version"),
        "previous_version": payload.get("previousVersion"),
        "tags": payload.get("tags", []),
        "reason": payload.get("reason"),
    }


def canonical_value(value: dict[str, Any]) -> str:
    """The stored content: RFC 8785 canonical JSON (byte-stable, so the same value always
    has the same checksum), within the entry size limit (RFC-0015 §1.3: 64 KB)."""
    try:
        text = rfc8785.dumps(value).decode("utf-8")
    except (rfc8785.CanonicalizationError, UnicodeError, ValueError, TypeError):
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "value: must be JSON with integers within +-2^53 and no unpaired surrogates",
            field="value",
        ) from None
    size = len(text.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise ApiError(
            413,
            ErrorCode.CONTENT_TOO_LARGE.value,
            f"value: is {size} bytes as canonical JSON, over the limit of {MAX_CONTENT_BYTES}",
            field="value",
            limit=MAX_CONTENT_BYTES,
        )
    return text


def value_of(content: str) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError:
        return {"text": content}
    return value if isinstance(value, dict) else {"text": content}


def expiry_of(ttl: str | None, expires_at: datetime | None, now: datetime) -> datetime | None:
    if expires_at is not None or ttl is None or not ttl.startswith("duration:"):
        return expires_at
    try:
        duration = _DURATION.validate_python(ttl.removeprefix("duration:"))
    except ValidationError:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "ttl: duration must be ISO 8601 (PT24H)",
            field="ttl",
        ) from None
    if duration <= timedelta(0):
        raise ApiError(
            422, ErrorCode.INVALID_INPUT.value, "ttl: duration must be positive", field="ttl"
        )
    return now + duration


def openintent_metadata(
    scope: MemoryScope | None,
    ttl: str | None,
    sensitivity: str | None,
    curated_by: str | None,
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "scope": scope.model_dump(exclude_none=True) if scope else None,
        "ttl": ttl,
        "sensitivity": sensitivity,
        "curated_by": curated_by,
    }
    kept = {k: v for k, v in extra.items() if v is not None}
    return {OPENINTENT_METADATA: kept} if kept else {}


def _marks(entry: HostMemoryEntry) -> dict[str, Any]:
    conflicts = list(entry.conflicts_with) if entry.conflicts_with else None
    return {"superseded_by": entry.superseded_by, "conflicts_with": conflicts}


def entry_out(entry: HostMemoryEntry, agent_id: str) -> MemoryEntryOut:
    extra = entry.metadata.get(OPENINTENT_METADATA) or {}
    if not extra:
        # Nothing from metadata: every field is the entry's own, of the type the model
        # declares, so validating it again would only cost (a list of 100 spent more on
        # that than on its query). With OpenIntent fields in the metadata, which any
        # host write may have put there, the model checks them.
        return unchecked(
            MemoryEntryOut,
            {
                "id": entry.id,
                "agent_id": agent_id,
                "namespace": entry.namespace or "",
                "key": entry.key or "",
                "value": value_of(entry.content),
                "memory_type": entry.tier,
                "scope": None,
                "tags": list(entry.tags),
                "ttl": None,
                "pinned": entry.pinned,
                "priority": entry.priority,
                "sensitivity": None,
                "curated_by": None,
                "version": entry.version,
                "created_at": entry.created_at,
                "updated_at": entry.updated_at,
                "expires_at": entry.expires_at,
            },
            _marks(entry),
        )
    scope = extra.get("scope")
    return MemoryEntryOut(
        id=entry.id,
        agent_id=agent_id,
        namespace=entry.namespace or "",
        key=entry.key or "",
        value=value_of(entry.content),
        memory_type=entry.tier,
        scope=MemoryScope.model_validate(scope) if scope else None,
        tags=list(entry.tags),
        ttl=extra.get("ttl"),
        pinned=entry.pinned,
        priority=entry.priority,
        sensitivity=extra.get("sensitivity"),
        curated_by=extra.get("curated_by"),
        version=entry.version,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        expires_at=entry.expires_at,
        **_marks(entry),
    )
