"""A read within a token budget (RFC 0113 ``tokenBudget`` on list and query): the budget
of what an agent reads back at once, not the dream's distillation budget (which
memory/distillation/packing.py enforces). Counted with the advertised tokenizer
(memory/tokens.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.tokens import count_tokens


def within_budget(rows: Sequence[Any], budget: int) -> list[Any]:
    """RFC 0113: the longest prefix of ``rows`` (already ranked) whose contents count at
    most ``budget`` tokens together, leaving out whole any entry larger than the whole
    budget on its own. Tokens are counted only until the prefix ends."""
    kept: list[Any] = []
    used = 0
    for row in rows:
        tokens = count_tokens(row.content)
        if tokens > budget:
            continue  # could never fit: omitted, never truncated
        if used + tokens > budget:
            break
        kept.append(row)
        used += tokens
    return kept
