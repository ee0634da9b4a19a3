"""The error vocabulary: every error the service raises on purpose, and its wire code.

Messages name the field and the limit that was broken and never echo entry content or
secret values (CTI-1 "errors don't leak"). ``code`` is what crosses every boundary: the
Temporal ApplicationError type, the CLI's message, the HTTP envelope's ``error``. Retry
policies list codes from NON_RETRYABLE_CODES, which a test checks against the classes
here, so a policy never names a type that no raised error carries.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    INVALID_INPUT = "invalid_input"
    INVALID_MEMORY_REF = "invalid_memory_ref"
    CONTENT_TOO_LARGE = "content_too_large"
    INVALID_SECRET = "invalid_secret"
    UNREDACTABLE_CONTENT = "unredactable_content"
    TOKEN_BUDGET_EXCEEDED = "token_budget_exceeded"
    VERSION_CONFLICT = "version_conflict"
    NOT_FOUND = "not_found"
    DUPLICATE_KEY = "duplicate_key"
    CAPACITY_EXCEEDED = "memory_capacity_exceeded"
    CONSOLIDATION_REFUSED = "consolidation_refused"
    # A proposal asked to move where its lifecycle does not go (applied -> revised, ...).
    INVALID_TRANSITION = "invalid_transition"
    # The caller's API key lacks the scope an action requires (applying a proposal).
    FORBIDDEN_SCOPE = "forbidden_scope"
    # Not raised as a class: the activity boundary reports unexpected failures with these.
    STORE_UNAVAILABLE = "store_unavailable"
    INTERNAL = "internal_error"


# Retrying cannot fix these: the input (or the budget, or a secret) must change first.
NON_RETRYABLE_CODES: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.INVALID_INPUT,
        ErrorCode.INVALID_MEMORY_REF,
        ErrorCode.CONTENT_TOO_LARGE,
        ErrorCode.INVALID_SECRET,
        ErrorCode.UNREDACTABLE_CONTENT,
        ErrorCode.TOKEN_BUDGET_EXCEEDED,
        ErrorCode.DUPLICATE_KEY,
        ErrorCode.CAPACITY_EXCEEDED,
        ErrorCode.CONSOLIDATION_REFUSED,
        ErrorCode.INVALID_TRANSITION,
        ErrorCode.FORBIDDEN_SCOPE,
    }
)


class MemoryError_(Exception):
    """Base class for every error the service raises on purpose."""

    code: ErrorCode = ErrorCode.INTERNAL

    def details(self) -> dict[str, Any]:
        """Content-free structured details (field names, limits, counts)."""
        return {}

    @property
    def retryable(self) -> bool:
        return self.code not in NON_RETRYABLE_CODES


class InvalidInput(MemoryError_, ValueError):
    """Input was rejected before touching the store; nothing stored changed."""

    code = ErrorCode.INVALID_INPUT

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule

    def details(self) -> dict[str, Any]:
        return {"field": self.field}


class InvalidMemoryRef(InvalidInput):
    """The memoryRef does not match the documented grammar (see schemas/memory_ref.py)."""

    code = ErrorCode.INVALID_MEMORY_REF

    def __init__(self, rule: str) -> None:
        super().__init__("memoryRef", rule)


class ContentTooLarge(InvalidInput):
    code = ErrorCode.CONTENT_TOO_LARGE

    def __init__(self, limit_bytes: int, actual_bytes: int) -> None:
        super().__init__(
            "content", f"is {actual_bytes} bytes UTF-8, over the limit of {limit_bytes} bytes"
        )
        self.limit_bytes = limit_bytes
        self.actual_bytes = actual_bytes


class VersionConflict(MemoryError_):
    """Optimistic concurrency failure: the caller's expected version is stale."""

    code = ErrorCode.VERSION_CONFLICT

    def __init__(self, memory_id: str, expected_version: int, current_version: int) -> None:
        super().__init__(
            f"version conflict on entry {memory_id!r}: expected version {expected_version}, "
            f"current version is {current_version}"
        )
        self.memory_id = memory_id
        self.expected_version = expected_version
        self.current_version = current_version


class EntryNotFound(MemoryError_):
    code = ErrorCode.NOT_FOUND

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no live entry with id {memory_id!r} in this memoryRef")
        self.memory_id = memory_id


class DuplicateKey(MemoryError_):
    """(namespace, key) or id already taken inside one memoryRef."""

    code = ErrorCode.DUPLICATE_KEY

    def __init__(self, field: str, what: str) -> None:
        # Never the value: a key can be as telling as content.
        super().__init__(f"{field}: an entry with this {what} already exists in this memoryRef")
        self.field = field


class CapacityExceeded(MemoryError_):
    """A full tier has nothing it may evict: a working tier never evicts live entries
    (RFC-0015 §9.4), and every entry of a full episodic tier is pinned."""

    code = ErrorCode.CAPACITY_EXCEEDED

    def __init__(self, tier: str, capacity: int) -> None:
        reason = "every entry is pinned" if tier != "working" else "working memory is not evicted"
        super().__init__(f"tier {tier!r} is at its capacity of {capacity} entries ({reason})")
        self.tier = tier
        self.capacity = capacity


class TokenBudgetExceeded(MemoryError_):
    """RFC 0062: nothing at all can be distilled within the budget (not even the
    cheapest source alone), so the run fails atomically."""

    code = ErrorCode.TOKEN_BUDGET_EXCEEDED

    def __init__(self, budget: int, minimum_required: int) -> None:
        super().__init__(
            f"tokenBudget: {budget} is below the {minimum_required} tokens the cheapest "
            "source needs"
        )
        self.budget = budget
        self.minimum_required = minimum_required

    def details(self) -> dict[str, Any]:
        return {"budget": self.budget, "minimumRequired": self.minimum_required}


class ConsolidationRefused(MemoryError_):
    """A pass that may not run (or be undone) as asked: a run consolidating the
    memoryRef it is reading mid-run (RFC 0068, replay ruling), or an undo that would
    bring back a namespace/key another live entry now holds."""

    code = ErrorCode.CONSOLIDATION_REFUSED

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PassNotFound(MemoryError_):
    code = ErrorCode.NOT_FOUND

    def __init__(self, pass_id: str) -> None:
        super().__init__(f"no consolidation pass {pass_id!r} to undo in this memoryRef")
        self.pass_id = pass_id


class ProposalNotFound(MemoryError_):
    code = ErrorCode.NOT_FOUND

    def __init__(self, proposal_id: str) -> None:
        super().__init__(f"no proposal with id {proposal_id!r} for this tenant")
        self.proposal_id = proposal_id


class InvalidTransition(MemoryError_):
    """A proposal's lifecycle refuses the move: draft -> revised -> applied | rejected |
    archived, and nothing leaves applied, rejected or archived."""

    code = ErrorCode.INVALID_TRANSITION

    def __init__(self, proposal_id: str, state: str, action: str) -> None:
        super().__init__(f"proposal {proposal_id!r} is {state}: it cannot be {action}")
        self.proposal_id = proposal_id
        self.state = state
        self.action = action

    def details(self) -> dict[str, Any]:
        return {"state": self.state, "action": self.action}


class MissingScope(MemoryError_):
    code = ErrorCode.FORBIDDEN_SCOPE

    def __init__(self, scope: str, action: str) -> None:
        super().__init__(f"{action} requires an API key with scope {scope!r}")
        self.scope = scope

    def details(self) -> dict[str, Any]:
        return {"requiredScope": self.scope}
