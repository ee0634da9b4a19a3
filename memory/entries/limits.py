"""What the store accepts and keeps per memoryRef: content size and tier capacities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from schemas.memory_entry import MAX_CONTENT_BYTES, Tier


@dataclass(frozen=True)
class StoreLimits:
    max_content_bytes: int = MAX_CONTENT_BYTES
    # RFC-0015: working and episodic tiers are capped per agent (default 1,000 entries);
    # semantic memory has no automatic capacity limit.
    capacity: Mapping[Tier, int] = field(
        default_factory=lambda: {Tier.WORKING: 1000, Tier.EPISODIC: 1000}
    )
    # RFC-0015 §9.4: a full episodic tier evicts (LRU); a full working tier rejects the
    # write (429 Memory Capacity Exceeded) and makes room only from expired entries.
    evicting: frozenset[Tier] = frozenset({Tier.EPISODIC})
