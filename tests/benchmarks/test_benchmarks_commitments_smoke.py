"""Smoke test: the commitments benchmark runs end to end in its --smoke mode (a dev
server, the real worker process, 60 armed commitments, 20 due within five seconds) and
reports what docs/performance.md quotes: all due ones fired exactly once, lateness,
fires per second against the dev server's ceiling, the worker's peak memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark


@pytest.mark.slow
def test_commitments_bench_smoke_runs(tmp_path: Path) -> None:
    output, report = run_benchmark("commitments_bench", "smoke", tmp_path, timeout=300)
    assert "PASS" in output and "dev server ceiling (baseline)" in output, output
    assert (report["fired"], report["fired_twice"], report["events"]) == (20, 0, 20)
    assert report["fired_early_or_far"] == 0 and report["not_fired"] == 0
    assert report["lateness_p99_s"] is not None and report["ceiling_workflows_per_s"] > 0
    assert report["worker_peak_rss_mb"] > 0
