"""The plan of one pass: which entries merge into which survivor, which are superseded,
which pairs conflict. Pure and deterministic: the same entries give the same plan.

Clusters are the transitive closure (union-find) of verified duplicate edges, with the
conflict guard applied to every pair a union would join, not only to the edge itself:
a cluster never holds two entries whose numbers, dates, negation, names or identifiers
differ, however it was chained. Entries holding the same namespace/key slot (compared
case- and separator-insensitively) resolve by supersession: the newest wins.

The pass is a fixpoint: after merging, the survivors are planned again (their candidate
pairs recomputed, each still carrying the facts of what merged into it) until nothing
changes, so a second pass over the unchanged corpus computes exactly what the last round
computed, and is a no-op. For that the store hands the planner, with every live entry,
the entries merged into it by earlier passes (``PlanEntry.merged_texts``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory.indexes.update_links import UpdateLink
from memory.sameness.candidates import candidate_pairs, conflict_pairs, signatures
from memory.sameness.conflict_guard import compare, conflict_kinds
from memory.sameness.fact_text import FactText, read_fact_text
from memory.sameness.paraphrase import (
    PARAPHRASES_BY_DEFAULT,
    paraphrase_pairs,
    sentence_vectors,
)
from memory.sameness.paraphrase import paraphrases as is_paraphrase
from memory.sameness.update_candidates import update_candidates
from memory.sameness.updates import (
    Relation,
    UpdateFacts,
    decide,
    read_update_facts,
    readable,
)

# A union joining clusters with more distinct fact signatures than this, pairwise, is
# refused (a missed merge) rather than checked pair by pair.
MAX_GUARD_CHECKS = 4096
MAX_ROUNDS = 8
Progress = Callable[[dict[str, object]], None]
_SEPARATORS = re.compile(r"[\s\-_.:/]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def slot_of(namespace: str | None, key: str | None) -> tuple[str, str] | None:
    """The fact slot a namespace/key names: "userCity", "user_city" and "User City"
    are one slot."""
    if namespace is None or key is None:
        return None

    def fold(name: str) -> str:
        return _SEPARATORS.sub("_", _CAMEL.sub("_", name)).strip("_").casefold()

    return fold(namespace), fold(key)


@dataclass(frozen=True)
class PlanEntry:
    """One live long-term entry as the planner sees it."""

    id: str
    version: int
    content: str
    updated_at: datetime
    pinned: bool = False
    priority: int = 1
    slot: tuple[str, str] | None = None
    corroboration: int = 1
    expires_at: datetime | None = None
    # Texts merged into this entry by earlier passes: a merge must agree with them too.
    merged_texts: tuple[str, ...] = ()
    # When it was said (saidAt, else when written) and its place in the write order:
    # which of two entries is the later value of a fact.
    said_at: datetime | None = None
    written_order: int = 0


@dataclass(frozen=True)
class Cluster:
    survivor: str
    merged: tuple[str, ...]  # duplicates of the survivor
    superseded: tuple[str, ...]  # holders of the survivor's slot with an older value
    corroboration: int  # the survivor's count after the merge


@dataclass(frozen=True)
class ConflictPair:
    first: str
    second: str
    # ConflictKind values, or the ValueKind values of an update the rules left open.
    kinds: tuple[str, ...]


@dataclass
class Plan:
    input_count: int
    clusters: list[Cluster] = field(default_factory=list)
    conflicts: list[ConflictPair] = field(default_factory=list)
    updates: list[UpdateLink] = field(default_factory=list)
    rounds: int = 0
    pairs_checked: int = 0

    @property
    def removed_ids(self) -> list[str]:
        return [i for c in self.clusters for i in (*c.merged, *c.superseded)]

    @property
    def output_count(self) -> int:
        return self.input_count - len(self.removed_ids)


GuardKey = tuple[object, ...]


def _guard_key(fact: FactText) -> GuardKey:
    return (fact.numbers, fact.identifiers, fact.dates, fact.currencies, fact.negations, fact.names)


def _newest(entry: PlanEntry) -> tuple[object, ...]:
    """Newest first: the later update, the higher version, then the larger id, so the
    order is total."""
    return (-entry.updated_at.timestamp(), -entry.version, tuple(-ord(ch) for ch in entry.id))


def _rank(entry: PlanEntry) -> tuple[object, ...]:
    """Survivor order (smallest first): pinned, keyed, the latest expiry (none is
    latest: a merge must not make a fact expire sooner than any of its copies would),
    higher priority, then newest."""
    expiry = entry.expires_at.timestamp() if entry.expires_at else float("inf")
    return (not entry.pinned, entry.slot is None, -expiry, -entry.priority, *_newest(entry))


class _Clusters:
    """Union-find over duplicates whose unions keep every cluster conflict-free (each
    cluster keeps one fact text per distinct guarded-fact signature of its members) and
    within one namespace/key slot."""

    def __init__(self, entries: Sequence[PlanEntry], facts: Sequence[FactText]) -> None:
        self.parent = list(range(len(entries)))
        self.slots: list[set[tuple[str, str]]] = [{e.slot} if e.slot else set() for e in entries]
        self.guards: list[dict[GuardKey, FactText]] = []
        for entry, fact in zip(entries, facts, strict=True):
            guards = {_guard_key(fact): fact}
            for text in entry.merged_texts:
                merged = read_fact_text(text)
                guards.setdefault(_guard_key(merged), merged)
            self.guards.append(guards)

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def _compatible(self, a: int, b: int) -> bool:
        if len(self.slots[a] | self.slots[b]) > 1:
            return False  # two different slots are two different facts
        left, right = self.guards[a], self.guards[b]
        if len(left) * len(right) > MAX_GUARD_CHECKS:
            return False
        return all(not conflict_kinds(x, y) for x in left.values() for y in right.values())

    def union(self, i: int, j: int) -> bool:
        a, b = self.find(i), self.find(j)
        if a == b or not self._compatible(a, b):
            return False
        a, b = min(a, b), max(a, b)
        self.parent[b] = a
        self.slots[a] |= self.slots[b]
        for key, fact in self.guards[b].items():
            self.guards[a].setdefault(key, fact)
        return True


def plan_pass(
    entries: Sequence[PlanEntry],
    progress: Progress = lambda details: None,
    *,
    paraphrases: bool = PARAPHRASES_BY_DEFAULT,
    updates: bool = True,
) -> Plan:
    """``paraphrases``: also merge texts that say the same in other words
    (memory/sameness/paraphrase.py); off by default (docs/consolidation.md has its
    figures on public data). ``updates``: link later values of a fact to earlier ones
    (memory/sameness/updates.py)."""
    if len(entries) < 2:
        # Nothing to pair: a first dream's consolidation sees only the entry it just
        # distilled, whose reading would cost more than the rest of the pass.
        return Plan(input_count=len(entries), rounds=1)
    entries = sorted(entries, key=lambda e: e.id)
    facts = [read_fact_text(e.content) for e in entries]
    minhashes = signatures(facts)
    vectors = sentence_vectors([e.content for e in entries]) if paraphrases else None
    progress({"phase": "signatures", "entries": len(entries)})
    clusters = _Clusters(entries, facts)
    superseded_by: dict[int, int] = {}  # cluster root -> the root whose slot value won
    plan = Plan(input_count=len(entries))
    alive = list(range(len(entries)))
    # A pair's verdict depends on its two texts only: later rounds reuse it.
    verdicts: dict[tuple[int, int], bool] = {}
    for round_number in range(1, MAX_ROUNDS + 1):
        plan.rounds = round_number
        pairs = candidate_pairs(facts, minhashes, alive, _reporter(progress, round_number))
        if vectors is not None:
            pairs = sorted({*pairs, *paraphrase_pairs(facts, vectors, alive)})
        plan.pairs_checked += len(pairs)
        changed = False
        for pair in pairs:
            duplicate = verdicts.get(pair)
            if duplicate is None:
                a, b = facts[pair[0]], facts[pair[1]]
                duplicate = compare(a, b).duplicate or (vectors is not None and is_paraphrase(a, b))
                verdicts[pair] = duplicate
            if duplicate:
                changed |= clusters.union(*pair)
        survivors = _survivors(entries, clusters)
        changed |= _supersede(entries, clusters, survivors, superseded_by)
        alive = sorted(i for root, i in survivors.items() if root not in superseded_by)
        progress({"phase": "clustered", "round": round_number, "alive": len(alive)})
        if not changed:
            break
    plan.clusters = _clusters(entries, clusters, superseded_by)
    # Look-alikes among what is left; a slot's holders were resolved by supersession.
    recency = [(e.updated_at, e.version) for e in entries]
    for i, j in conflict_pairs(facts, alive, recency):
        same_slot = entries[i].slot is not None and entries[i].slot == entries[j].slot
        verdict = compare(facts[i], facts[j])
        if verdict.conflict and not same_slot:
            plan.conflicts.append(ConflictPair(entries[i].id, entries[j].id, verdict.conflicts))
    if updates:
        _plan_updates(entries, facts, alive, plan)
        progress({"phase": "updates", "updated": len(plan.updates)})
    return plan


def said_order(entry: PlanEntry) -> tuple[float, int]:
    """Said-later order (larger is later): when said, then the write order."""
    return ((entry.said_at or entry.updated_at).timestamp(), entry.written_order)


def _plan_updates(
    entries: Sequence[PlanEntry], facts: Sequence[FactText], alive: Sequence[int], plan: Plan
) -> None:
    """Update links among the live entries (after merging): a supersession where the
    rules are sure, a conflict where they are not (recorded once, by id order, unless the
    look-alike rule recorded it already); never between holders of one key slot, which
    supersession by key resolves."""
    update_facts: list[UpdateFacts | None] = [None] * len(entries)
    for i in alive:
        says = readable(entries[i].content)
        update_facts[i] = read_update_facts(says, facts[i] if says == entries[i].content else None)
    said = [said_order(e) for e in entries]
    conflicted = {(c.first, c.second): n for n, c in enumerate(plan.conflicts)}
    dropped: set[int] = set()
    # An open question is asked once per entry: with the latest value that disputes it.
    disputed: dict[int, tuple[int, tuple[str, ...]]] = {}
    for older, newer in update_candidates(update_facts, alive, said):
        slot = entries[older].slot
        if slot is not None and slot == entries[newer].slot:
            continue
        old_facts, new_facts = update_facts[older], update_facts[newer]
        assert old_facts is not None and new_facts is not None
        verdict = decide(old_facts, new_facts)
        if verdict.relation is None:
            continue
        kinds = tuple(str(kind) for kind in verdict.kinds)
        if verdict.relation is Relation.SUPERSEDES:
            plan.updates.append(UpdateLink(entries[older].id, entries[newer].id, kinds))
            pair = tuple(sorted((entries[older].id, entries[newer].id)))
            if pair in conflicted:
                dropped.add(conflicted[pair])  # settled: an update, not a dispute
        elif older not in disputed or (said[newer], newer) > (
            said[disputed[older][0]],
            disputed[older][0],
        ):
            disputed[older] = (newer, kinds)
    superseded = {link.older for link in plan.updates}
    for older, (newer, kinds) in sorted(disputed.items()):
        first, second = sorted((entries[older].id, entries[newer].id))
        if entries[older].id not in superseded and (first, second) not in conflicted:
            conflicted[(first, second)] = len(plan.conflicts)
            plan.conflicts.append(ConflictPair(first, second, kinds))
    if dropped:
        plan.conflicts = [c for n, c in enumerate(plan.conflicts) if n not in dropped]


def _reporter(
    progress: Callable[[dict[str, object]], None], round_number: int
) -> Callable[[int], None]:
    return lambda done: progress({"phase": "candidates", "round": round_number, "done": done})


def _survivors(entries: Sequence[PlanEntry], clusters: _Clusters) -> dict[int, int]:
    """Cluster root -> its survivor (the best-ranked member)."""
    best: dict[int, int] = {}
    for i in range(len(entries)):
        root = clusters.find(i)
        if root not in best or _rank(entries[i]) < _rank(entries[best[root]]):
            best[root] = i
    return best


def _supersede(
    entries: Sequence[PlanEntry],
    clusters: _Clusters,
    survivors: dict[int, int],
    superseded_by: dict[int, int],
) -> bool:
    """Clusters holding one slot: the one whose survivor is newest wins; the others are
    superseded by it (whatever their text says: that is how a keyed conflict resolves)."""
    by_slot: dict[tuple[str, str], list[int]] = {}
    for root, survivor in survivors.items():
        slot = entries[survivor].slot
        if slot is not None and root not in superseded_by:
            by_slot.setdefault(slot, []).append(root)
    changed = False
    for roots in by_slot.values():
        if len(roots) < 2:
            continue
        winner = min(roots, key=lambda root: _newest(entries[survivors[root]]))
        for root in roots:
            if root != winner:
                superseded_by[root] = winner
                changed = True
    return changed


def _final_root(root: int, superseded_by: dict[int, int]) -> int:
    while root in superseded_by:
        root = superseded_by[root]
    return root


def _clusters(
    entries: Sequence[PlanEntry], clusters: _Clusters, superseded_by: dict[int, int]
) -> list[Cluster]:
    survivors = _survivors(entries, clusters)
    merged: dict[int, list[int]] = {}
    superseded: dict[int, list[int]] = {}
    for i in range(len(entries)):
        root = clusters.find(i)
        final = _final_root(root, superseded_by)
        if final != root:
            superseded.setdefault(final, []).append(i)
        elif i != survivors[root]:
            merged.setdefault(root, []).append(i)
    out = []
    for root in sorted(set(merged) | set(superseded)):
        survivor = entries[survivors[root]]
        merged_members = [entries[i] for i in merged.get(root, [])]
        out.append(
            Cluster(
                survivor=survivor.id,
                merged=tuple(e.id for e in merged_members),
                superseded=tuple(entries[i].id for i in superseded.get(root, [])),
                corroboration=survivor.corroboration + sum(e.corroboration for e in merged_members),
            )
        )
    return out
