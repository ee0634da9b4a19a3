"""Smoke test: the HTTP benchmark runs end to end in its --smoke mode (embedded
PostgreSQL, the API in its own uvicorn process, 5 clients for a second per operation and
side) with no errors, and prints the HTTP-over-direct ratio of every operation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark

LABELS = ("GET one entry", "GET list of 100", "PATCH If-Match", "GET discovery")


@pytest.mark.slow
def test_http_bench_smoke_runs(tmp_path: Path) -> None:
    output, report = run_benchmark("http_bench", "smoke", tmp_path, timeout=120)
    assert "PASS" in output and "client and API server share the same" in output, output
    ratio = r"\d+\.\d+x"
    for label in LABELS:
        line = rf"^ratio {re.escape(label)}: HTTP p50 / direct p50 = {ratio}; "
        assert re.search(rf"{line}direct rps / HTTP rps = {ratio}$", output, re.M), output
    assert report["errors"] == 0 and report["pass"] is True
    assert [op["label"] for op in report["ops"].values()] == list(LABELS)
    for op in report["ops"].values():
        for side in ("http", "direct"):
            assert op[side]["errors"] == 0 and op[side]["requests"] > 0, op
            assert op[side]["p50_ms"] > 0 and op[side]["rps"] > 0, op
        assert op["ratio_p50_http_over_direct"] > 0
