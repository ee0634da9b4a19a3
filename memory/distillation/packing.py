"""Distillers: turn ranked source entries into one summary under a token budget.

Sources arrive best-ranked first, page by page, straight from the ranked queue in SQL
(memory/distillation/queue.py); the distiller says after each page whether it wants
more, so a dream reads about as many rows as its budget can hold, not the backlog.

Token accounting (RFC 0062 §B.2, counted with cl100k_base): ``tokensUsed`` is the input
the distiller consumed (each unique source text once: exact repeats are recognised after
normalisation and never fed twice) plus the output it wrote. No poison pill:

- a source that alone costs more than the whole budget is skipped, counted
  (``oversized``) and parked by the store until a run with a budget that large, or an
  edit, takes it back: never a reason for every later run to fail;
- a source that does not fit what is left of the budget is deferred to a later dream;
- when nothing at all fits (RFC 0062's tokenBudget 1 case) the run fails with
  token_budget_exceeded, reporting the cheapest source's cost as ``minimumRequired``;
  the sources it found oversized are parked, so the next run does not fail on them.

The default ExtractiveDistiller needs no language model: it keeps whole entries in rank
order (pinned, priority, newest) and writes them out oldest first. A restatement of a
source already placed (an exact repeat after normalisation, or what consolidation would
merge: re-cased, re-worded with a filler, typo'd, reordered, and with paraphrases on, the
same fact in synonyms; memory/sameness/restatements.py) rides along with it: it is
consumed with it, written once and costs nothing, as an exact repeat always did, so a
budget holds more distinct facts. Everything here is a pure function of the ranked
sources, the budget and the static model, so the same sources and budget always give
the same output.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memory.sameness.fact_text import read_fact_text
from memory.sameness.paraphrase import PARAPHRASES_BY_DEFAULT
from memory.sameness.restatements import Restatements
from schemas.errors import TokenBudgetExceeded

TokenCounter = Callable[[str], int]

LINE_PREFIX = "- "
# Once something fits, stop after this many candidates in a row did not: the rest of the
# backlog waits for the next dream instead of being read and tokenised for nothing.
MAX_CONSECUTIVE_MISSES = 256
# Before anything fits, read at most this many candidates (a head of oversized entries
# must not turn one dream into a scan of the whole backlog).
MAX_CANDIDATES = 20_000


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
    # A distilled entry expires no later than the earliest-expiring source it carries.
    expires_at: datetime | None = None


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
    oversized_count: int
    # Sources that alone cost more than the budget, with that cost: the store parks them
    # until a run with a budget that large (or an edit) takes them back.
    oversized: tuple[tuple[SourceText, int], ...] = ()
    # Nothing fit at all; the cheapest source's cost is what the budget would need.
    minimum_required: int | None = None

    @property
    def tokens_used(self) -> int:
        return self.input_tokens + self.output_tokens


class Packing(Protocol):
    def offer(self, page: Sequence[SourceText]) -> bool:
        """Take the next page of ranked sources; True while more would be useful."""
        ...

    def finish(self) -> DistillationOutcome:
        """The outcome; ``minimum_required`` is set when sources came but none fit."""
        ...


class Distiller(Protocol):
    name: str

    def start(self, budget: int, count_tokens: TokenCounter) -> Packing: ...


def normalise(text: str) -> str:
    """Key for exact-repeat detection: NFKC, casefolded, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    # split/join collapses every whitespace run; ~2.5x faster than a \s+ regex at 100k.
    return " ".join(folded.split()).rstrip(".!")


@dataclass(slots=True)
class _Group:
    """One distinct text and every source that repeats it, best-ranked first."""

    members: list[SourceText]
    # The lead's own tokens (input), and with its output line (what placing it costs).
    input_tokens: int = 0
    cost: int = 0
    chosen: bool = False

    @property
    def lead(self) -> SourceText:
        return self.members[0]


@dataclass
class ExtractivePacking:
    budget: int
    count_tokens: TokenCounter
    # None: only exact repeats ride along (the previous distiller, extractive/2).
    restatements: Restatements | None = field(
        default_factory=lambda: Restatements(with_paraphrases=PARAPHRASES_BY_DEFAULT)
    )
    groups: dict[str, _Group] = field(default_factory=dict)
    # The groups in the order restatements.add() saw them.
    placed: list[_Group] = field(default_factory=list)
    chosen: list[_Group] = field(default_factory=list)
    # Sources with no words at all (only whitespace or punctuation): consumed for free
    # and written nowhere, so they never clog the head of the queue.
    blank: list[SourceText] = field(default_factory=list)
    spent: int = 0
    misses: int = 0
    read: int = 0
    oversized: int = 0
    cheapest: int | None = None

    def offer(self, page: Sequence[SourceText]) -> bool:
        texts = [source.content for source in page]
        vectors = self.restatements.vectors(texts) if self.restatements else [None] * len(page)
        for source, vector in zip(page, vectors, strict=True):
            self.read += 1
            self._place(source, vector)
        if self.chosen and self.misses >= MAX_CONSECUTIVE_MISSES:
            return False
        return self.read < MAX_CANDIDATES

    def _place(self, source: SourceText, vector: Any) -> None:
        key = normalise(source.content)
        if not key:
            self.blank.append(source)
            return
        group = self.groups.get(key)
        if group is None and self.restatements is not None:
            fact = read_fact_text(source.content)
            found = self.restatements.find(fact, vector)
            if found is None:
                self.restatements.add(fact, vector)  # at the position placed gets below
            else:
                group = self.placed[found]
        if group is not None:  # a restatement rides along with its text, at no extra cost
            group.members.append(source)
            self.groups[key] = group  # its exact repeats find it at once
            return
        group = self.groups[key] = _Group([source])
        self.placed.append(group)
        text = source.content
        group.input_tokens = self.count_tokens(text)
        group.cost = group.input_tokens + self.count_tokens(f"{LINE_PREFIX}{text}\n")
        self.cheapest = group.cost if self.cheapest is None else min(self.cheapest, group.cost)
        if group.cost > self.budget:
            self.oversized += 1
        elif self.spent + group.cost <= self.budget:
            group.chosen = True
            self.chosen.append(group)
            self.spent += group.cost
            self.misses = 0
        else:
            self.misses += 1

    def finish(self) -> DistillationOutcome:
        if not self.chosen:
            return self._outcome([], 0, 0)
        chosen = list(self.chosen)
        # Per-line estimates can drift from the exact count of the joined output by a
        # token or two; drop the lowest-ranked groups until the exact count fits.
        while True:
            input_tokens, output_tokens = self._exact(chosen)
            if input_tokens + output_tokens <= self.budget:
                return self._outcome(chosen, input_tokens, output_tokens)
            if len(chosen) == 1:
                raise TokenBudgetExceeded(self.budget, input_tokens + output_tokens)
            chosen.pop().chosen = False

    def _outcome(
        self, chosen: list[_Group], input_tokens: int, output_tokens: int
    ) -> DistillationOutcome:
        ordered = _chronological(chosen)
        consumed = [m for g in chosen for m in g.members] + self.blank
        oversized = [(m, g.cost) for g in self.placed if g.cost > self.budget for m in g.members]
        nothing_fits = not chosen and bool(self.placed)
        return DistillationOutcome(
            items=tuple(
                DistilledItem(
                    text=g.lead.content,
                    source_ids=tuple(m.entry_id for m in g.members),
                    tags=tuple(sorted({t for m in g.members for t in m.tags})),
                )
                for g in ordered
            ),
            consumed=tuple(sorted(consumed, key=lambda s: s.entry_id)),
            output_text=_render(ordered),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            deferred_count=self.read - len(consumed) - len(oversized),
            oversized_count=len(oversized),
            oversized=tuple(oversized),
            minimum_required=self.cheapest if nothing_fits else None,
        )

    def _exact(self, groups: Sequence[_Group]) -> tuple[int, int]:
        input_tokens = sum(g.input_tokens for g in groups)
        return input_tokens, self.count_tokens(_render(_chronological(groups)))


def _chronological(groups: Sequence[_Group]) -> list[_Group]:
    return sorted(groups, key=lambda g: (g.lead.created_at, g.lead.entry_id))


def _render(groups: Sequence[_Group]) -> str:
    return "".join(f"{LINE_PREFIX}{g.lead.content}\n" for g in groups)


class ExtractiveDistiller:
    """``restatements=False`` is the previous distiller (extractive/2), which dropped
    exact repeats only: kept for comparison (benchmarks/distillation_bench.py)."""

    def __init__(self, *, restatements: bool = True) -> None:
        self.restatements = restatements
        # /3: restatements ride along with their fact (/2 dropped exact repeats only).
        self.name = "extractive/3" if restatements else "extractive/2"

    def start(self, budget: int, count_tokens: TokenCounter) -> ExtractivePacking:
        if self.restatements:
            return ExtractivePacking(budget, count_tokens)
        return ExtractivePacking(budget, count_tokens, restatements=None)
