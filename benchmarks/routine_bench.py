"""Routine detection on public data (RFC 0096, reviewable learning): how well
memory/proposals/routines.py finds "the same request recurring weekly", beside the
grouping rules a user would pick instead, all through the product's own cadence rule,
in the same run.

    python -m benchmarks.similarity_corpora.fetch            # once: the pinned wheels
    python -m benchmarks.routine_bench [--half dev|test] [--limit N] [--seed S]

Data: the STS-B sentences of one half of the committed split, exactly as
benchmarks/semantic_accuracy_bench.py reads them (``half_pairs``; ``--limit`` keeps the
first N pairs of each half). A timeline is one memoryRef's six weeks from Monday
2025-01-06 (UTC); every sighting is tagged ``request``:

- positive routines (20 a timeline): one sentence asked on 4 Mondays in a row at
  09:00-09:20, worded differently each week: as is; a courtesy wrap ("Could you ...?",
  "Please ...", "..., thanks!"); one generated restatement (``restatements``: re-cased,
  re-spaced, a real typo, a moved phrase, an opening filler); and its STS-B paraphrase
  (a partner scored >= 4.5) when it has one, else a second restatement. Half of them are
  drawn from sentences that have such a partner (reported apart); weeks in random order.
- negative routines (20): 4 Mondays in a row in the same slot, each week a different
  request that looks alike: the sentence and 3 of its look-alikes (``hard_negatives``:
  a number changed, a name swapped, a negation; an STS-B partner scored <= 1). No
  routine may be formed from them.
- noise (200): other sentences, once each, at uniformly random instants of the six weeks.

Every routine and noise sentence of a timeline comes from its own STS-B sentence group
(pairs sharing a sentence, ``sentence_groups``) and no group is used twice in a run, so
two sightings are "the same request" exactly when they belong to one positive routine.

Methods, each given the same sightings in the same (instant, entry id) order, every
group judged by the product's own cadence rule (``routines._cadence``): the product
(``find_routines``: courtesy stripped, consolidation's restatement rule); rapidfuzz
``token_set_ratio`` and WordLlama cosine (the product's static model), each grouping
greedily (a sighting joins the first group whose first member scores >= the threshold)
with thresholds tuned on the dev half only, once for pairwise precision >= 0.99 (as the
semantic bench tunes) and once for the best routine F1; exact equality of
``normal_form`` as the floor. The alternatives read the request without its courtesy
(``request_core``), so they differ from the product in the grouping rule alone.

Metrics: routine recall (a positive routine with >= 3 of its 4 sightings in one found
weekly routine on Monday), whole-routine recall (all 4), false routines a timeline (a
found routine whose sightings are not all from one positive routine; "negatives formed"
counts those holding >= 3 weeks of one negative routine), pairwise "same request"
precision and recall over all pairs of sightings within a timeline, and per wording the
share of weeks grouped with the plain sentence's week.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from benchmarks.semantic_accuracy_bench import (
    NEGATIVE_MAX_SCORE,
    PARAPHRASE,
    PARAPHRASE_MIN_SCORE,
    POSITIVE_KINDS,
    RESULTS,
    TARGET_PRECISION,
    Embed,
    Labelled,
    _decap,
    _split_terminal,
    cosine_scores,
    half_pairs,
    hard_negatives,
    restatements,
    token_set_scores,
    tune,
    unique_sentences,
)
from benchmarks.similarity_corpora.corpora import Names, StsPair, sentence_groups
from memory.proposals.routines import (
    Routine,
    Sighting,
    _cadence,
    find_routines,
    group_same_requests,
    request_core,
)
from memory.sameness.fact_text import normal_form
from memory.sameness.restatements import CANDIDATE_COSINE, Restatements

START = datetime(2025, 1, 6, tzinfo=UTC)  # a Monday
WEEKS = 6
ROUTINE_WEEKS = 4
MONDAY = 0
SLOT = timedelta(hours=9)
JITTER_S = 20 * 60
ZONE = "UTC"
TAGS = ("request",)
FOUND_WEEKS = 3
PLAIN, COURTESY = "plain", "courtesy"
WEEK_KINDS = (COURTESY, *POSITIVE_KINDS, PARAPHRASE)
NEGATIVE_BASE, UNRELATED = "base", "sts_low"
TOKEN_SET_GRID = tuple(float(x) for x in range(101))
COSINE_GRID = tuple(round(x / 100, 2) for x in range(101))


# ---------------------------------------------------------------- the half's material


@dataclass(frozen=True)
class Material:
    """A half's sentences (one per normal form) by STS-B sentence group, and partners."""

    groups: tuple[tuple[str, ...], ...]
    paraphrase_of: Mapping[str, str]  # a partner scored >= PARAPHRASE_MIN_SCORE
    unrelated_to: Mapping[str, str]  # a partner scored <= NEGATIVE_MAX_SCORE


def material(pairs: Sequence[StsPair]) -> Material:
    sentence_of = {normal_form(s): s for s in unique_sentences(pairs)}
    members: dict[str, list[str]] = defaultdict(list)
    for form, group in sorted(sentence_groups(pairs).items()):
        if form in sentence_of:
            members[group].append(sentence_of[form])
    paraphrase_of: dict[str, str] = {}
    unrelated_to: dict[str, str] = {}
    for pair in sorted(pairs, key=lambda p: p.key):
        a = sentence_of.get(normal_form(pair.first))
        b = sentence_of.get(normal_form(pair.second))
        if a is None or b is None or a == b:
            continue
        if pair.score >= PARAPHRASE_MIN_SCORE:
            paraphrase_of.setdefault(a, b)
            paraphrase_of.setdefault(b, a)
        elif pair.score <= NEGATIVE_MAX_SCORE:
            unrelated_to.setdefault(a, b)
            unrelated_to.setdefault(b, a)
    groups = tuple(tuple(members[g]) for g in sorted(members))
    return Material(groups, paraphrase_of, unrelated_to)


# ---------------------------------------------------------------- wordings


def courtesy(sentence: str, rng: random.Random) -> str:
    """The sentence asked politely: "Could you ...?", "Please ...", "..., thanks!"."""
    body, _ = _split_terminal(sentence)
    form = rng.randrange(3)
    if form == 0:
        return f"Could you {_decap(body)}?"
    if form == 1:
        return f"Please {_decap(sentence)}"
    return f"{body}, thanks!"


def positive_weeks(
    sentence: str,
    partner: str | None,
    misspellings: Mapping[str, Sequence[str]],
    rng: random.Random,
) -> list[tuple[str, str]]:
    """(kind, text) of the 4 weeks of one request, in the order they are asked."""
    first, second = rng.sample(restatements(sentence, misspellings), 2)
    weeks = [(PLAIN, sentence), (COURTESY, courtesy(sentence, rng)), (first.kind, first.b)]
    weeks.append((PARAPHRASE, partner) if partner else (second.kind, second.b))
    rng.shuffle(weeks)
    return weeks


def look_alikes(sentence: str, names: Names, unrelated: str | None) -> list[tuple[str, str]]:
    """(kind, text) of requests that look like ``sentence`` but ask something else, one
    per normal form, the sentence first: its hard negatives (both sides when a negative
    is built on a changed base, "... at 3 pm" / "... at 4 pm", "Ann said ..." / "Bo said
    ...") and its STS-B partner scored <= 1."""
    candidates = [(NEGATIVE_BASE, sentence)]
    for negative in hard_negatives(sentence, names):
        candidates.extend((negative.kind, text) for text in (negative.a, negative.b))
    if unrelated is not None:
        candidates.append((UNRELATED, unrelated))
    seen: set[str] = set()
    out = []
    for kind, text in candidates:
        form = normal_form(text)
        if form and form not in seen:
            seen.add(form)
            out.append((kind, text))
    return out


def negative_weeks(
    sentence: str, names: Names, unrelated: str | None, rng: random.Random
) -> list[tuple[str, str]] | None:
    """The sentence and 3 of its look-alikes, in random order; None with fewer than 3."""
    pool = look_alikes(sentence, names, unrelated)
    if len(pool) < ROUTINE_WEEKS:
        return None
    weeks = [pool[0], *rng.sample(pool[1:], ROUTINE_WEEKS - 1)]
    rng.shuffle(weeks)
    return weeks


# ---------------------------------------------------------------- timelines


@dataclass(frozen=True)
class Planted:
    sighting: Sighting
    routine: str | None  # "p<k>": a positive routine, "n<k>": a negative one, None: noise
    kind: str  # the wording (plain, courtesy, a restatement, paraphrase, a look-alike, noise)

    @property
    def positive(self) -> bool:
        return self.routine is not None and self.routine.startswith("p")


@dataclass(frozen=True)
class Timeline:
    planted: tuple[Planted, ...]  # in (instant, entry id) order, as find_routines reads
    paraphrased: frozenset[str]  # positive routines with a paraphrase week

    @property
    def sightings(self) -> list[Sighting]:
        return [p.sighting for p in self.planted]

    def routines(self, prefix: str) -> dict[str, list[int]]:
        """Positions of each planted routine's sightings ("p": positives, "n": negatives)."""
        out: dict[str, list[int]] = defaultdict(list)
        for position, planted in enumerate(self.planted):
            if planted.routine is not None and planted.routine.startswith(prefix):
                out[planted.routine].append(position)
        return dict(out)


@dataclass(frozen=True)
class Composition:
    positives: int = 20
    negatives: int = 20
    noise: int = 200

    @property
    def per_timeline(self) -> int:
        return self.positives + self.negatives + self.noise


def weekly_instant(week: int, rng: random.Random) -> datetime:
    return START + timedelta(weeks=week) + SLOT + timedelta(seconds=rng.randint(0, JITTER_S))


def random_instant(rng: random.Random) -> datetime:
    return START + timedelta(seconds=rng.randrange(WEEKS * 7 * 24 * 3600))


def build_timelines(
    source: Material,
    misspellings: Mapping[str, Sequence[str]],
    names: Names,
    *,
    seed: int,
    composition: Composition = Composition(),
    count: int | None = None,
) -> list[Timeline]:
    """As many timelines as the half's sentence groups fill (at most ``count``), each
    group used once. Deterministic for a seed."""
    rng = random.Random(seed)
    order = list(range(len(source.groups)))
    rng.shuffle(order)
    fits = len(order) // composition.per_timeline
    count = fits if count is None else min(count, fits)
    if count == 0:
        return []
    has_paraphrase = [i for i in order if any(s in source.paraphrase_of for s in source.groups[i])]
    per_paraphrased = min(composition.positives // 2, len(has_paraphrase) // count)
    paraphrased = deque(has_paraphrase[: per_paraphrased * count])
    reserved = set(paraphrased)
    rest = deque(i for i in order if i not in reserved)
    timelines = []
    for t in range(count):
        drafts: list[tuple[datetime, str | None, str, str]] = []
        for k in range(composition.positives):
            if k < per_paraphrased:
                group = source.groups[paraphrased.popleft()]
                sentence = next(s for s in group if s in source.paraphrase_of)
            else:
                sentence = rng.choice(source.groups[rest.popleft()])
            weeks = positive_weeks(sentence, source.paraphrase_of.get(sentence), misspellings, rng)
            first = rng.randint(0, WEEKS - ROUTINE_WEEKS)
            for w, (kind, text) in enumerate(weeks):
                drafts.append((weekly_instant(first + w, rng), f"p{k}", kind, text))
        spare: list[int] = []
        for k in range(composition.negatives):
            look_alike_weeks = None
            while look_alike_weeks is None:
                index = rest.popleft()
                candidates = list(source.groups[index])
                rng.shuffle(candidates)
                for sentence in candidates:
                    unrelated = source.unrelated_to.get(sentence)
                    look_alike_weeks = negative_weeks(sentence, names, unrelated, rng)
                    if look_alike_weeks is not None:
                        break
                else:
                    spare.append(index)  # too few look-alikes: noise instead
            first = rng.randint(0, WEEKS - ROUTINE_WEEKS)
            for w, (kind, text) in enumerate(look_alike_weeks):
                drafts.append((weekly_instant(first + w, rng), f"n{k}", kind, text))
        for _ in range(composition.noise):
            index = spare.pop() if spare else rest.popleft()
            drafts.append((random_instant(rng), None, "noise", rng.choice(source.groups[index])))
        rest.extendleft(spare)
        drafts.sort(key=lambda d: d[0])
        planted = tuple(
            Planted(Sighting(f"t{t:02d}-{n:03d}", text, TAGS, at), routine, kind)
            for n, (at, routine, kind, text) in enumerate(drafts)
        )
        with_paraphrase = frozenset(
            p.routine for p in planted if p.routine is not None and p.kind == PARAPHRASE
        )
        timelines.append(Timeline(planted, with_paraphrase))
    return timelines


# ---------------------------------------------------------------- scoring


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


@dataclass
class Score:
    method: str
    threshold: float | None = None
    tuned_for: str | None = None
    timelines: int = 0
    positives: int = 0
    found: int = 0
    whole: int = 0
    paraphrased: int = 0
    paraphrased_found: int = 0
    paraphrased_whole: int = 0
    routines: int = 0
    false_routines: int = 0
    negatives: int = 0
    negatives_formed: int = 0
    pairs_true: int = 0
    pairs_predicted: int = 0
    pairs_actual: int = 0
    weeks: Counter[str] = field(default_factory=Counter)
    joined: Counter[str] = field(default_factory=Counter)
    # The product only: weeks not grouped with the plain week whose static-model cosine
    # to it is under CANDIDATE_COSINE, so the rules never saw the pair.
    under_candidate_cosine: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(
        self, timeline: Timeline, groups: Sequence[Sequence[int]], routines: Sequence[Routine]
    ) -> None:
        """One timeline: ``groups`` hold positions in ``timeline.planted``, every position
        in exactly one group; ``routines`` are those found from them."""
        planted = timeline.planted
        position = {p.sighting.entry_id: i for i, p in enumerate(planted)}
        found = [frozenset(position[e] for e in r.entry_ids) for r in routines]
        on_monday = [
            ids
            for ids, r in zip(found, routines, strict=True)
            if r.cadence == "weekly" and r.weekday == MONDAY
        ]
        group_of = {i: g for g, members in enumerate(groups) for i in members}
        assert len(group_of) == len(planted), "every sighting belongs to one group"
        self.timelines += 1
        positives = timeline.routines("p")
        for name, members in positives.items():
            best = max((len(ids.intersection(members)) for ids in on_monday), default=0)
            self.positives += 1
            self.found += best >= FOUND_WEEKS
            self.whole += best == len(members)
            if name in timeline.paraphrased:
                self.paraphrased += 1
                self.paraphrased_found += best >= FOUND_WEEKS
                self.paraphrased_whole += best == len(members)
            plain = next(i for i in members if planted[i].kind == PLAIN)
            for i in members:
                if i != plain:
                    self.weeks[planted[i].kind] += 1
                    self.joined[planted[i].kind] += group_of[i] == group_of[plain]
        for ids in found:
            labels = {planted[i].routine for i in ids}
            pure = len(labels) == 1 and planted[next(iter(ids))].positive
            self.routines += 1
            self.false_routines += not pure
        for members in timeline.routines("n").values():
            self.negatives += 1
            self.negatives_formed += any(len(ids.intersection(members)) >= 3 for ids in found)
        cells = Counter((group_of[i], p.routine) for i, p in enumerate(planted) if p.positive)
        self.pairs_true += sum(_pairs(c) for c in cells.values())
        self.pairs_predicted += sum(_pairs(len(g)) for g in groups)
        self.pairs_actual += sum(_pairs(len(m)) for m in positives.values())

    @property
    def recall(self) -> float:
        return self.found / self.positives if self.positives else 0.0

    @property
    def whole_recall(self) -> float:
        return self.whole / self.positives if self.positives else 0.0

    @property
    def paraphrased_recall(self) -> float:
        return self.paraphrased_found / self.paraphrased if self.paraphrased else 0.0

    @property
    def unparaphrased_recall(self) -> float:
        n = self.positives - self.paraphrased
        return (self.found - self.paraphrased_found) / n if n else 0.0

    @property
    def unparaphrased_whole_recall(self) -> float:
        n = self.positives - self.paraphrased
        return (self.whole - self.paraphrased_whole) / n if n else 0.0

    @property
    def false_per_timeline(self) -> float:
        return self.false_routines / self.timelines if self.timelines else 0.0

    @property
    def routine_precision(self) -> float:
        return 1 - self.false_routines / self.routines if self.routines else 1.0

    @property
    def routine_f1(self) -> float:
        p, r = self.routine_precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def pair_precision(self) -> float:
        return self.pairs_true / self.pairs_predicted if self.pairs_predicted else 1.0

    @property
    def pair_recall(self) -> float:
        return self.pairs_true / self.pairs_actual if self.pairs_actual else 0.0

    def join_rate(self, kind: str) -> float | None:
        return self.joined[kind] / self.weeks[kind] if self.weeks[kind] else None

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "threshold": self.threshold,
            "tuned_on_dev_for": self.tuned_for,
            "routine_recall": round(self.recall, 4),
            "whole_routine_recall": round(self.whole_recall, 4),
            "recall_with_a_paraphrase_week": round(self.paraphrased_recall, 4),
            "recall_without": round(self.unparaphrased_recall, 4),
            "whole_routine_recall_without": round(self.unparaphrased_whole_recall, 4),
            "false_routines_per_timeline": round(self.false_per_timeline, 3),
            "routine_precision": round(self.routine_precision, 4),
            "negative_routines_formed": self.negatives_formed,
            "pairwise_precision": round(self.pair_precision, 4),
            "pairwise_recall": round(self.pair_recall, 4),
            "seconds": round(self.seconds, 2),
            "counts": {
                "timelines": self.timelines,
                "positive_routines": self.positives,
                "with_a_paraphrase_week": self.paraphrased,
                "found": self.found,
                "whole": self.whole,
                "routines_found": self.routines,
                "false_routines": self.false_routines,
                "negative_routines": self.negatives,
                "same_request_pairs": self.pairs_actual,
                "pairs_grouped": self.pairs_predicted,
                "pairs_grouped_right": self.pairs_true,
            },
            "weeks_grouped_with_the_plain_week": {
                kind: {"weeks": self.weeks[kind], "grouped": self.joined[kind]}
                | (
                    {"missed_under_candidate_cosine": self.under_candidate_cosine[kind]}
                    if self.method == PRODUCT
                    else {}
                )
                for kind in WEEK_KINDS
                if self.weeks[kind]
            },
        }


# ---------------------------------------------------------------- methods


def cadence_routines(timeline: Timeline, groups: Sequence[Sequence[int]]) -> list[Routine]:
    """The product's cadence rule applied to each group (routines._cadence)."""
    zone = ZoneInfo(ZONE)
    out = []
    for members in groups:
        routine = _cadence([timeline.planted[i].sighting for i in members], zone, ZONE)
        if routine is not None:
            out.append(routine)
    return out


def cores(timeline: Timeline) -> list[str]:
    return [request_core(p.sighting.text) for p in timeline.planted]


PRODUCT = "product: find_routines"


def candidate_misses(timeline: Timeline, groups: Sequence[Sequence[int]]) -> Counter[str]:
    """By wording, the weeks of positive routines not grouped with their plain week whose
    request's vector (Restatements.vectors) is under CANDIDATE_COSINE from the plain one."""
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    planted = timeline.planted
    missed: list[tuple[int, int]] = []
    for members in timeline.routines("p").values():
        plain = next(i for i in members if planted[i].kind == PLAIN)
        missed.extend((plain, i) for i in members if group_of[i] != group_of[plain])
    out: Counter[str] = Counter()
    if missed:
        texts = cores(timeline)
        vectors = Restatements.vectors([texts[i] for pair in missed for i in pair])
        for n, (_, week) in enumerate(missed):
            cosine = float(vectors[2 * n] @ vectors[2 * n + 1])
            out[planted[week].kind] += cosine < CANDIDATE_COSINE
    return out


def product_score(timelines: Sequence[Timeline]) -> Score:
    score = Score(PRODUCT)
    for timeline in timelines:
        sightings = timeline.sightings
        started = time.perf_counter()
        routines = find_routines(sightings, ZONE)
        score.seconds += time.perf_counter() - started
        # The grouping inside find_routines, again, for the pairwise figures.
        position = {s.entry_id: i for i, s in enumerate(sightings)}
        groups = [[position[s.entry_id] for s in g] for g in group_same_requests(sightings)]
        again = {r.entry_ids for r in cadence_routines(timeline, groups)}
        assert again == {r.entry_ids for r in routines}, "find_routines is group + _cadence"
        score.add(timeline, groups, routines)
        score.under_candidate_cosine += candidate_misses(timeline, groups)
    return score


def exact_groups(texts: Sequence[str]) -> list[list[int]]:
    """Groups of equal normal_form, in the order of their first member."""
    groups: dict[str, list[int]] = {}
    for position, text in enumerate(texts):
        groups.setdefault(normal_form(text), []).append(position)
    return list(groups.values())


def exact_score(timelines: Sequence[Timeline]) -> Score:
    score = Score("exact normal_form (floor)")
    for timeline in timelines:
        started = time.perf_counter()
        groups = exact_groups(cores(timeline))
        routines = cadence_routines(timeline, groups)
        score.seconds += time.perf_counter() - started
        score.add(timeline, groups, routines)
    return score


def greedy_groups(scores: np.ndarray, threshold: float) -> list[list[int]]:
    """Each position joins the first group whose first member scores >= ``threshold``
    with it, else opens a group."""
    firsts: list[int] = []
    groups: list[list[int]] = []
    for position in range(len(scores)):
        if firsts:
            hits = np.flatnonzero(scores[position, firsts] >= threshold)
            if hits.size:
                groups[int(hits[0])].append(position)
                continue
        firsts.append(position)
        groups.append([position])
    return groups


PairScorer = Callable[[Sequence[Labelled]], list[float]]


def pair_matrix(texts: Sequence[str], scorer: PairScorer) -> np.ndarray:
    """Scores of every pair of texts (the semantic bench's scorers), symmetric."""
    rows, cols = np.triu_indices(len(texts), 1)
    labelled = [
        Labelled("pair", texts[i], texts[j])
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True)
    ]
    matrix = np.zeros((len(texts), len(texts)))
    if labelled:
        values = np.asarray(scorer(labelled), dtype=float)
        matrix[rows, cols] = values
        matrix[cols, rows] = values
    return matrix


def same_request(timeline: Timeline) -> np.ndarray:
    """Truth of every pair (upper triangle order): both from one positive routine."""
    rows, cols = np.triu_indices(len(timeline.planted), 1)
    label = np.array([p.routine if p.positive else "" for p in timeline.planted], dtype=object)
    return (label[rows] == label[cols]) & (label[rows] != "")


def tune_pairwise(timelines: Sequence[Timeline], matrices: Sequence[np.ndarray]) -> float:
    """semantic_accuracy_bench.tune over every pair of every timeline: the lowest
    threshold with pairwise precision >= TARGET_PRECISION."""
    scores: list[float] = []
    positive: list[bool] = []
    for timeline, matrix in zip(timelines, matrices, strict=True):
        rows, cols = np.triu_indices(len(matrix), 1)
        scores.extend(matrix[rows, cols].tolist())
        positive.extend(same_request(timeline).tolist())
    return tune(scores, positive, TARGET_PRECISION)


def grouped_score(
    method: str,
    timelines: Sequence[Timeline],
    matrices: Sequence[np.ndarray],
    threshold: float,
    tuned_for: str | None = None,
) -> Score:
    score = Score(method, round(threshold, 4), tuned_for)
    for timeline, matrix in zip(timelines, matrices, strict=True):
        started = time.perf_counter()
        groups = greedy_groups(matrix, threshold)
        routines = cadence_routines(timeline, groups)
        score.seconds += time.perf_counter() - started
        score.add(timeline, groups, routines)
    return score


def tune_routines(
    timelines: Sequence[Timeline], matrices: Sequence[np.ndarray], grid: Sequence[float]
) -> float:
    """The threshold of ``grid`` with the best routine F1 (routine recall against the
    share of found routines that are true); the highest on a tie."""
    best, best_f1 = grid[-1], -1.0
    for threshold in grid:
        f1 = grouped_score("tuning", timelines, matrices, threshold).routine_f1
        if f1 >= best_f1:
            best, best_f1 = threshold, f1
    return best


@dataclass(frozen=True)
class Alternative:
    name: str
    scorer: PairScorer
    grid: Sequence[float]


def alternative_scores(
    alternative: Alternative, dev: Sequence[Timeline], run: Sequence[Timeline]
) -> tuple[list[Score], dict[str, Any]]:
    def matrices(timelines: Sequence[Timeline]) -> tuple[list[np.ndarray], float]:
        started = time.perf_counter()
        out = [pair_matrix(cores(t), alternative.scorer) for t in timelines]
        return out, time.perf_counter() - started

    dev_matrices, dev_s = matrices(dev)
    run_matrices, run_s = (dev_matrices, dev_s) if run is dev else matrices(run)
    pairwise = tune_pairwise(dev, dev_matrices)
    top = max((float(m.max()) for m in dev_matrices if m.size), default=0.0)
    best_f1 = tune_routines(dev, dev_matrices, alternative.grid)
    scores = []
    for threshold, tuned_for in (
        (pairwise, f"pairwise precision >= {TARGET_PRECISION}"),
        (best_f1, "routine F1"),
    ):
        score = grouped_score(alternative.name, run, run_matrices, threshold, tuned_for)
        score.seconds += run_s  # every pair scored
        scores.append(score)
    tuned = {
        "pairwise_precision": round(pairwise, 4),
        "pairwise_precision_reached": pairwise <= top,
        "routine_f1": best_f1,
    }
    return scores, tuned


def wordllama_embed() -> tuple[Embed | None, str | None]:
    """The product's static model (WordLlama), as the semantic bench gets it, or why not."""
    if importlib.util.find_spec("wordllama") is None:
        return None, "wordllama is not importable"
    from memory.embeddings.choice import static_embedder

    embed = static_embedder().embed_now
    embed(["warm up"])  # the weights load once, outside the timings
    return embed, None


# ---------------------------------------------------------------- the run


def _print_scores(scores: Sequence[Score]) -> None:
    head = (
        f"{'method':<32} {'threshold':>9} {'recall':>7} {'whole':>6} {'w/ para':>7} "
        f"{'w/o':>6} {'whole w/o':>9} {'false/tl':>8} {'neg formed':>10} {'pair P':>7} "
        f"{'pair R':>7} {'seconds':>8}"
    )
    print(head)
    print("-" * len(head))
    for s in scores:
        threshold = "" if s.threshold is None else f"{s.threshold:g}"
        tuned = "" if s.tuned_for is None else ("P" if s.tuned_for.startswith("pair") else "F1")
        print(
            f"{s.method:<32} {threshold + (' ' + tuned if tuned else ''):>9} "
            f"{s.recall:>7.4f} {s.whole_recall:>6.4f} {s.paraphrased_recall:>7.4f} "
            f"{s.unparaphrased_recall:>6.4f} {s.unparaphrased_whole_recall:>9.4f} "
            f"{s.false_per_timeline:>8.2f} "
            f"{s.negatives_formed:>10} {s.pair_precision:>7.4f} {s.pair_recall:>7.4f} "
            f"{s.seconds:>8.2f}"
        )
    kinds = [k for k in WEEK_KINDS if any(s.weeks[k] for s in scores)]
    print("\nweeks grouped with the plain sentence's week, by wording")
    print(f"{'method':<32} " + " ".join(f"{k[:12]:>12}" for k in kinds))
    for s in scores:
        rates = (s.join_rate(k) for k in kinds)
        cells = " ".join(f"{'-' if r is None else f'{r:.3f}':>12}" for r in rates)
        print(f"{s.method[:32]:<32} {cells}")
    weeks = scores[0].weeks if scores else Counter()
    print(f"{'(weeks)':<32} " + " ".join(f"{weeks[k]:>12,}" for k in kinds))
    for s in scores:
        if s.method == PRODUCT:
            print(
                f"product weeks missed, of which under the candidate cosine "
                f"{CANDIDATE_COSINE} (never reached the rules): "
                + ", ".join(
                    f"{k} {s.weeks[k] - s.joined[k]} ({s.under_candidate_cosine[k]})"
                    for k in kinds
                    if s.weeks[k] > s.joined[k]
                )
            )


def main(argv: list[str] | None = None) -> int:
    from benchmarks.similarity_corpora.corpora import load_misspellings, load_names, load_sts
    from benchmarks.similarity_corpora.fetch import CorpusMissing
    from benchmarks.similarity_corpora.split import load_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    parser.add_argument("--limit", type=int, default=None, help="first N STS-B pairs of a half")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timelines", type=int, default=None, help="at most N (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        pairs = load_sts()
        misspellings = load_misspellings()
        names = load_names()
    except CorpusMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    split = load_split()
    dev_pairs = half_pairs(pairs, split, "dev", args.limit)
    run_pairs = half_pairs(pairs, split, args.half, args.limit)
    if args.half == "test":
        dev_forms = {normal_form(s) for s in unique_sentences(dev_pairs)}
        shared = dev_forms & {normal_form(s) for s in unique_sentences(run_pairs)}
        assert not shared, f"{len(shared)} sentences in both halves"
    started = time.perf_counter()
    composition = Composition()

    def timelines_of(half_pairs: Sequence[StsPair]) -> list[Timeline]:
        return build_timelines(
            material(half_pairs),
            misspellings,
            names,
            seed=args.seed,
            composition=composition,
            count=args.timelines,
        )

    dev = timelines_of(dev_pairs)
    run = dev if args.half == "dev" else timelines_of(run_pairs)
    if not dev or not run:
        print(
            f"error: a timeline needs {composition.per_timeline} STS-B sentence groups; "
            "use a larger --limit",
            file=sys.stderr,
        )
        return 2
    positives = sum(len(t.routines("p")) for t in run)
    paraphrased = sum(len(t.paraphrased) for t in run)
    print(
        f"STS-B {args.half} half: {len(run_pairs):,} pairs -> {len(run)} timelines of "
        f"{composition.positives} positive + {composition.negatives} negative routines + "
        f"{composition.noise} noise ({sum(len(t.planted) for t in run):,} sightings; "
        f"{positives} positive routines, {paraphrased} with a paraphrase week), seed "
        f"{args.seed}; thresholds tuned on dev: {len(dev_pairs):,} pairs, {len(dev)} timelines"
    )
    find_routines([Sighting("warm", "warm up", TAGS, START)], ZONE)  # the model loads once
    scores = [product_score(run)]
    tuned: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    alternatives = [Alternative("rapidfuzz token_set_ratio", token_set_scores, TOKEN_SET_GRID)]
    embed, why_not = wordllama_embed()
    if embed is not None:
        alternatives.append(
            Alternative(
                "wordllama cosine",
                lambda labelled: cosine_scores(labelled, embed),
                COSINE_GRID,
            )
        )
    else:
        skipped["wordllama cosine"] = why_not or "unavailable"
        print(f"skipping wordllama cosine: {why_not}")
    for alternative in alternatives:
        alternative_rows, tuned[alternative.name] = alternative_scores(alternative, dev, run)
        scores.extend(alternative_rows)
    scores.append(exact_score(run))
    elapsed = time.perf_counter() - started
    print()
    _print_scores(scores)
    print("\nthresholds tuned on dev (P: pairwise precision >= 0.99; F1: best routine F1)")
    for name, values in tuned.items():
        reached = "" if values["pairwise_precision_reached"] else " (not reached: never merges)"
        print(f"  {name}: P {values['pairwise_precision']:g}{reached}, F1 {values['routine_f1']:g}")
    print(f"\n{elapsed:.1f} s in all")
    report: dict[str, Any] = {
        "half": args.half,
        "limit": args.limit,
        "seed": args.seed,
        "sts_pairs": len(run_pairs),
        "timelines": len(run),
        "composition": {
            "positive_routines": composition.positives,
            "negative_routines": composition.negatives,
            "noise": composition.noise,
            "weeks": WEEKS,
        },
        "positive_routines": positives,
        "with_a_paraphrase_week": paraphrased,
        "dev_pairs_for_tuning": len(dev_pairs),
        "dev_timelines_for_tuning": len(dev),
        "target_precision_on_dev": TARGET_PRECISION,
        "thresholds_tuned_on_dev": tuned,
        "skipped": skipped,
        "seconds": round(elapsed, 1),
        "methods": [s.to_json() for s in scores],
    }
    default = "routine.json" if args.half == "test" else "routine-dev.json"
    path = args.json or RESULTS / default
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
