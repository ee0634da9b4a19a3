"""Smoke test: the consolidation benchmark runs end to end in its --quick mode (2,000
planted entries through the real store, the all-pairs baseline on 500) and reports what
the README quotes: precision, recall, false merges on conflicts, a no-op second pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_consolidation_bench_quick_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / "state")
    results = tmp_path / "consolidation-quick.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.consolidation_bench", "--quick", "--json", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert "all pairs: 124,750 compared" in output, output
    assert "(no-op)" in output, output
    report = json.loads(results.read_text())
    (row,) = report["sizes"]
    summary = row["summary"]
    assert summary["merge_precision"] >= 0.99, summary
    assert summary["merge_recall"] >= 0.90, summary
    assert summary["conflict_pairs"] > 0 and summary["conflict_false_merges"] == 0, summary
    assert row["second"]["inputCount"] == row["second"]["outputCount"]
