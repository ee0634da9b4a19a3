"""benchmarks/restatement_distill_bench.py on inline sentences (no corpus cache): the
default distiller holds more distinct facts than the previous one when a budget cannot
hold every restatement, and the report carries both."""

from __future__ import annotations

from benchmarks.restatement_distill_bench import run

SENTENCES = [
    "A man is playing a guitar on the stage.",
    "The committee approved the new budget yesterday.",
    "Two dogs are running through the green field.",
    "The train to the airport leaves every hour.",
    "Heavy snow closed the mountain road overnight.",
    "The library extended its opening hours in winter.",
]
MISSPELLINGS = {"guitar": ["guitr"], "budget": ["budegt"], "running": ["runing"]}


def test_the_default_distiller_holds_more_distinct_facts() -> None:
    report = run(SENTENCES, MISSPELLINGS, [90])
    (row,) = report["rows"]
    assert report["sources"] == 4 * len(SENTENCES)
    assert row["default"]["tokens_used"] <= 90 and row["previous"]["tokens_used"] <= 90
    assert row["default"]["distinct_facts"] > row["previous"]["distinct_facts"]
    assert row["ratio"] > 1
