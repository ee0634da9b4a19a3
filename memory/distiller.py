"""Distillers: turn a frozen set of source entries into one summary under a token budget.

Token accounting (RFC 0062 §B.2, counted with cl100k_base): ``tokensUsed`` is the input
the distiller consumed (each unique source text once: exact repeats are recognised by
hash and never fed twice) plus the output it wrote. Sources that do not fit stay
undistilled and wait for the next dream, so a small budget over a large backlog still
makes progress; the run fails with token_budget_exceeded only when not even the
best-ranked source fits. Pinned sources rank first but are not all required at once:
with more pinned memory than one budget holds, the rest are taken by the next dreams
(requiring them all made a large pinned backlog fail every night, forever).

The default ExtractiveDistiller needs no language model: it ranks by pinned, priority,
repetition and recency, drops exact repeats, and packs whole entries under the budget.
Everything here is a pure function of its inputs, so the same sources and budget always
give the same output.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

TokenCounter = Callable[[str], int]

LINE_PREFIX = "- "
# Stop scanning after this many candidates in a row did not fit: the rest of a large
# backlog is left for the next dream instead of being tokenised for nothing.
MAX_CONSECUTIVE_MISSES = 256


class TokenBudgetExceeded(Exception):
    """Even the best-ranked source alone needs more tokens than the budget allows."""

    code = "token_budget_exceeded"

    def __init__(self, budget: int, minimum_required: int) -> None:
        super().__init__(
            f"tokenBudget: {budget} is below the {minimum_required} tokens this corpus "
            "needs at minimum"
        )
        self.budget = budget
        self.minimum_required = minimum_required


@dataclass(frozen=True, slots=True)
class SourceText:
    entry_id: str
    version: int
    content: str
    content_sha256: str
    tags: tuple[str, ...]
    pinned: bool
    priority: int
    created_at: datetime
    position: int


@dataclass(frozen=True, slots=True)
class DistilledItem:
    text: str
    source_ids: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DistillationOutcome:
    items: tuple[DistilledItem, ...]
    consumed: tuple[SourceText, ...]
    output_text: str
    input_tokens: int
    output_tokens: int
    deferred_count: int

    @property
    def tokens_used(self) -> int:
        return self.input_tokens + self.output_tokens


class Distiller(Protocol):
    name: str

    def distill(
        self, sources: Sequence[SourceText], budget: int, count_tokens: TokenCounter
    ) -> DistillationOutcome: ...


def normalise(text: str) -> str:
    """Key for exact-repeat detection: NFKC, casefolded, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    # split/join collapses every whitespace run; ~2.5x faster than a \s+ regex at 100k.
    return " ".join(folded.split()).rstrip(".!")


@dataclass(slots=True)
class _Group:
    members: list[SourceText]

    @property
    def lead(self) -> SourceText:
        return self.members[0]

    def rank_key(self) -> tuple[bool, int, int, float, int]:
        newest = max(m.created_at for m in self.members)
        return (
            not any(m.pinned for m in self.members),
            -max(m.priority for m in self.members),
            -len(self.members),
            -newest.timestamp(),
            self.lead.position,
        )


def _group_repeats(sources: Sequence[SourceText]) -> list[_Group]:
    groups: dict[str, _Group] = {}
    for source in sorted(sources, key=lambda s: s.position):
        key = normalise(source.content)
        if not key:
            continue
        if key in groups:
            groups[key].members.append(source)
        else:
            groups[key] = _Group([source])
    return sorted(groups.values(), key=_Group.rank_key)


class ExtractiveDistiller:
    name = "extractive/1"

    def distill(
        self, sources: Sequence[SourceText], budget: int, count_tokens: TokenCounter
    ) -> DistillationOutcome:
        ranked = _group_repeats(sources)
        if not ranked:
            return DistillationOutcome((), (), "", 0, 0, 0)
        must = ranked[:1]
        cost: dict[int, int] = {}

        def group_cost(group: _Group) -> int:
            # input (the text once) + output (its line, newline included)
            key = id(group)
            if key not in cost:
                text = group.lead.content
                cost[key] = count_tokens(text) + count_tokens(f"{LINE_PREFIX}{text}\n")
            return cost[key]

        chosen = list(must)
        spent = sum(group_cost(g) for g in chosen)
        if spent > budget:
            raise TokenBudgetExceeded(budget, self._exact(chosen, count_tokens)[2])
        misses = 0
        must_ids = {id(g) for g in must}
        for group in ranked:
            if id(group) in must_ids:
                continue
            if misses >= MAX_CONSECUTIVE_MISSES:
                break
            price = group_cost(group)
            if spent + price <= budget:
                chosen.append(group)
                spent += price
                misses = 0
            else:
                misses += 1
        # Per-line estimates can drift from the exact count of the joined output by a
        # token or two; drop the lowest-ranked optional groups until the exact count fits.
        while True:
            input_tokens, output_tokens, total = self._exact(chosen, count_tokens)
            if total <= budget:
                break
            if len(chosen) <= len(must):
                raise TokenBudgetExceeded(budget, total)
            chosen.pop()
        ordered = sorted(chosen, key=lambda g: g.lead.position)
        items = tuple(
            DistilledItem(
                text=g.lead.content,
                source_ids=tuple(m.entry_id for m in g.members),
                tags=tuple(sorted({t for m in g.members for t in m.tags})),
            )
            for g in ordered
        )
        consumed = tuple(sorted((m for g in chosen for m in g.members), key=lambda s: s.position))
        return DistillationOutcome(
            items=items,
            consumed=consumed,
            output_text=self._render(ordered),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            deferred_count=len(sources) - len(consumed),
        )

    @staticmethod
    def _render(groups: Sequence[_Group]) -> str:
        return "".join(f"{LINE_PREFIX}{g.lead.content}\n" for g in groups)

    def _exact(self, groups: Sequence[_Group], count_tokens: TokenCounter) -> tuple[int, int, int]:
        input_tokens = sum(count_tokens(g.lead.content) for g in groups)
        ordered = sorted(groups, key=lambda g: g.lead.position)
        output_tokens = count_tokens(self._render(ordered))
        return input_tokens, output_tokens, input_tokens + output_tokens
