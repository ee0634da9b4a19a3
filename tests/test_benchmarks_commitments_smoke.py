"""Smoke test: the commitments benchmark runs end to end in its --smoke mode (a dev
server, the real worker process, 60 armed commitments, 20 due within five seconds) and
reports what the README quotes: all due ones fired exactly once, lateness, fires per
second against the dev server's ceiling, the worker's peak memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_commitments_bench_smoke_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / "state")
    results = tmp_path / "commitments-smoke.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.commitments_bench", "--smoke", "--json", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert "PASS" in output and "dev server ceiling (baseline)" in output, output
    report = json.loads(results.read_text())
    assert (report["fired"], report["fired_twice"], report["events"]) == (20, 0, 20)
    assert report["fired_early_or_far"] == 0 and report["not_fired"] == 0
    assert report["lateness_p99_s"] is not None and report["ceiling_workflows_per_s"] > 0
    assert report["worker_peak_rss_mb"] > 0
