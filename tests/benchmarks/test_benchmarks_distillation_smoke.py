"""The distillation benchmark runs end to end (--quick: N=1,000, and the first and a nightly
dream over a 10k memoryRef beside a 1k one) as users run it."""

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
    # Every step of the dream is read from the histories, children included.
    assert "consolidate_memory " in completed.stdout, output
    assert "infer_commitments " in completed.stdout, output
    assert "arm_commitments " in completed.stdout, output
    # The first and the nightly dream over a 10k and a 1k memoryRef, side by side.
    assert "10000/1000 NIGHTLY dream: " in completed.stdout, output
    assert "10000/1000 FIRST dream: " in completed.stdout, output
    assert "history 10000 nightly: dream " in completed.stdout, output
