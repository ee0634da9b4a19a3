"""Smoke test: the consolidation benchmark runs end to end in its --quick mode (2,000
planted entries through the real store, the all-pairs baseline on 500) and reports what
docs/performance.md quotes: precision, recall, false merges on conflicts, a no-op second pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark


@pytest.mark.slow
def test_consolidation_bench_quick_runs(tmp_path: Path) -> None:
    output, report = run_benchmark("consolidation_bench", "quick", tmp_path, timeout=300)
    assert "all pairs: 124,750 compared" in output, output
    assert "(no-op)" in output, output
    (row,) = report["sizes"]
    summary = row["summary"]
    assert summary["merge_precision"] >= 0.99, summary
    assert summary["merge_recall"] >= 0.90, summary
    assert summary["conflict_pairs"] > 0 and summary["conflict_false_merges"] == 0, summary
    assert row["second"]["inputCount"] == row["second"]["outputCount"]
