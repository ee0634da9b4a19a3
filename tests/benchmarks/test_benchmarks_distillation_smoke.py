"""The distillation benchmark runs end to end (--quick: N=1,000, and a 10k backlog beside a
1k one) as users run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_distillation_bench_quick_runs_and_reports_histories(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path)
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.distillation_bench", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "history N=1000 budget=8000: dream " in completed.stdout, output
    assert "-> PASS" in completed.stdout, output
    # The backlog row: the same dream over a 10k and a 1k queue, nothing copied.
    assert "10000/1000: dream time " in completed.stdout, output
    assert "temporary space +0 B" in completed.stdout, output
    assert "history backlog 10000: dream " in completed.stdout, output
