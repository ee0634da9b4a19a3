"""Errors raised by the memory layer.

Messages name the field and the limit that was broken and never echo entry content or
secret values (CTI-1 "errors don't leak").
"""

from __future__ import annotations


class MemoryError_(Exception):
    """Base class for every error the memory layer raises on purpose."""

    code = "memory_error"


class InvalidInput(MemoryError_, ValueError):
    """A write was rejected before touching the store; nothing stored changed."""

    code = "invalid_input"

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class InvalidMemoryRef(InvalidInput):
    """The memoryRef does not match the documented grammar (see schemas/memory_ref.py)."""

    code = "invalid_memory_ref"

    def __init__(self, rule: str) -> None:
        super().__init__("memoryRef", rule)


class ContentTooLarge(InvalidInput):
    code = "content_too_large"

    def __init__(self, limit_bytes: int, actual_bytes: int) -> None:
        super().__init__(
            "content", f"is {actual_bytes} bytes UTF-8, over the limit of {limit_bytes} bytes"
        )
        self.limit_bytes = limit_bytes
        self.actual_bytes = actual_bytes


class VersionConflict(MemoryError_):
    """Optimistic concurrency failure: the caller's expected version is stale."""

    code = "version_conflict"

    def __init__(self, memory_id: str, expected_version: int, current_version: int) -> None:
        super().__init__(
            f"version conflict on entry {memory_id!r}: expected version {expected_version}, "
            f"current version is {current_version}"
        )
        self.memory_id = memory_id
        self.expected_version = expected_version
        self.current_version = current_version


class EntryNotFound(MemoryError_):
    code = "not_found"

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no live entry with id {memory_id!r} in this memoryRef")
        self.memory_id = memory_id


class DuplicateKey(MemoryError_):
    """(namespace, key) or id already taken inside one memoryRef."""

    code = "duplicate_key"

    def __init__(self, field: str, value: str) -> None:
        super().__init__(f"{field} {value!r} already exists in this memoryRef")
        self.field = field


class CapacityExceeded(MemoryError_):
    """Every entry of a full tier is pinned, so nothing can be evicted to make room."""

    code = "memory_capacity_exceeded"

    def __init__(self, tier: str, capacity: int) -> None:
        super().__init__(
            f"tier {tier!r} is at its capacity of {capacity} entries and every entry is pinned"
        )
        self.tier = tier
        self.capacity = capacity
