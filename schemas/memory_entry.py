"""MemoryEntry and friends: the openwop wire shape plus the richer OpenIntent host entry."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from schemas.base import Instant, WireModel
from schemas.input_rules import CHECK_TEXT, EntryText, Metadata

MAX_CONTENT_BYTES = 64 * 1024
MAX_TAGS = 64
MAX_LIST_LIMIT = 1000
# RFC 0113 budgeted reads: the largest budget a list accepts (a session's whole context
# window and then some), and the longest relevance query.
MAX_INJECTION_BUDGET = 1_000_000
MAX_RELEVANCE_QUERY_CHARS = 2000
# Deep offsets cost a scan of everything skipped; past this, page by updatedBefore.
MAX_QUERY_OFFSET = 100_000

Tag = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$"),
    CHECK_TEXT,
]
EntryId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"),
    CHECK_TEXT,
]
# Who said an entry's content (metadata.saidBy): a person's name as written.
SaidBy = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"),
    CHECK_TEXT,
]
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$"),
    CHECK_TEXT,
]


class Tier(StrEnum):
    """OpenIntent RFC-0015 memory tiers."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"


class Priority(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Stored as a small integer so eviction can ORDER BY it (low evicts first)."""
        return {"low": 0, "normal": 1, "high": 2}[self.value]

    @classmethod
    def from_rank(cls, rank: int) -> Priority:
        return (cls.LOW, cls.NORMAL, cls.HIGH)[rank]


class MemoryEntry(WireModel):
    """openwop MemoryEntry, exactly: {id, content, tags, createdAt, expiresAt?}."""

    id: str = Field(min_length=1)
    content: str
    tags: tuple[str, ...] = ()
    created_at: Instant
    expires_at: Instant | None = None


class MemoryListOptions(WireModel):
    """openwop MemoryListOptions (RFC 0113): {limit?, tag?, tokenBudget?, rank?, query?}.
    The host bounds limit at MAX_LIST_LIMIT.

    ``tokenBudget``: the most recent entries whose contents together count at most this
    many cl100k_base tokens (the advertised memory.injectionBudget.tokenCounter), a
    prefix of the ranked list; an entry larger than the whole budget is left out whole,
    never cut. With ``limit`` too, whichever gives fewer entries. ``rank`` is "recency"
    (the default, most recent first) or "relevance": the hybrid search ranking for
    ``query`` (memory/search/ranking.py), refused by a store without an embedding
    model rather than faked (RFC 0113 §3).
    """

    limit: int | None = Field(default=None, ge=1)
    tag: Tag | None = None
    token_budget: int | None = Field(default=None, ge=1, le=MAX_INJECTION_BUDGET)
    rank: Literal["recency", "relevance"] | None = None
    query: Annotated[str, StringConstraints(max_length=MAX_RELEVANCE_QUERY_CHARS)] | None = None


class Attribution(WireModel):
    """Who caused a write (RFC 0057 memory.written provenance): ids only."""

    agent_id: Annotated[str, StringConstraints(max_length=128), CHECK_TEXT] | None = None
    node_id: Annotated[str, StringConstraints(max_length=128), CHECK_TEXT] | None = None
    run_id: Annotated[str, StringConstraints(max_length=256), CHECK_TEXT] | None = None


class HostMemoryEntry(MemoryEntry):
    """The host-side entry: openwop fields plus the OpenIntent RFC-0015 model."""

    tier: Tier
    namespace: str | None = None
    key: str | None = None
    version: int = Field(ge=1)
    pinned: bool = False
    priority: Priority = Priority.NORMAL
    subject: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    attribution: Attribution | None = None
    updated_at: Instant
    last_accessed_at: Instant
    content_sha256: str
    # Facts that changed (memory/search/update_marks.py): the newest live entry stating a
    # later value of this one's fact, and the live entries it conflicts with. Set by the
    # reads that rank (search, the relevance read, the tag query); absent otherwise.
    superseded_by: str | None = None
    conflicts_with: tuple[str, ...] | None = None

    def to_memory_entry(self) -> MemoryEntry:
        return MemoryEntry(
            id=self.id,
            content=self.content,
            tags=self.tags,
            created_at=self.created_at,
            expires_at=self.expires_at,
        )


class NewMemoryEntry(WireModel):
    """What a host write supplies. The store issues id/version/timestamps."""

    content: EntryText
    tags: tuple[Tag, ...] = Field(default=(), max_length=MAX_TAGS)
    tier: Tier = Tier.EPISODIC
    id: EntryId | None = None
    namespace: Name | None = None
    key: Name | None = None
    pinned: bool = False
    priority: Priority = Priority.NORMAL
    subject: Name | None = None
    metadata: Metadata = Field(default_factory=dict)
    expires_at: Instant | None = None
    # Facts that change (memory/entries/stated_updates.py): this entry states a later
    # value of the live entry ``supersedes`` (both stay live; reads mark the older) ...
    supersedes: EntryId | None = None
    # ... and, when a live entry holds this namespace/key, it supersedes that entry
    # (as a pass supersedes by key) instead of being refused as a duplicate key.
    supersede_key: bool = False


class EntryChanges(WireModel):
    """A partial update; unset fields keep their value. Requires the expected version."""

    content: EntryText | None = None
    tags: tuple[Tag, ...] | None = Field(default=None, max_length=MAX_TAGS)
    pinned: bool | None = None
    priority: Priority | None = None
    metadata: Metadata | None = None
    expires_at: Instant | None = None


class MemoryQuery(WireModel):
    """OpenIntent tag query: tagsAll is AND, tagsAny is OR; both may be combined."""

    tags_all: tuple[Tag, ...] = ()
    tags_any: tuple[Tag, ...] = ()
    tier: Tier | None = None
    namespace: Name | None = None
    pinned: bool | None = None
    subject: Name | None = None
    key: Name | None = None
    # OpenIntent's ``namespace=billing.*``: entries whose namespace starts with this.
    namespace_prefix: Name | None = None
    updated_after: Instant | None = None
    updated_before: Instant | None = None
    # When and by whom the content was said (metadata.saidAt / saidBy; an entry without
    # saidAt was said when it was written): memory/entries/said.py.
    said_by: SaidBy | None = None
    said_after: Instant | None = None
    said_before: Instant | None = None
    # Leave out entries a later live entry supersedes (they are served, marked, otherwise).
    exclude_superseded: bool = False
    limit: int = Field(default=100, ge=1, le=MAX_LIST_LIMIT)
    offset: int = Field(default=0, ge=0, le=MAX_QUERY_OFFSET)


class ForgetRequest(WireModel):
    """Forget (erase from live memory) by ids, by tag, or by subject.

    ``tenant_wide`` widens a subject forget to every memoryRef of the ref's tenant (the
    RFC 0080 retention "tenant-scoped delete-by-subject"); it never crosses tenants.
    """

    ids: tuple[EntryId, ...] = ()
    tag: Tag | None = None
    subject: Name | None = None
    tenant_wide: bool = False
