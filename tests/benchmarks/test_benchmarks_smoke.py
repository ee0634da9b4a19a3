"""Smoke test: the adapter benchmark runs end to end in its --quick mode."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark


@pytest.mark.slow
def test_adapter_bench_quick_runs(tmp_path: Path) -> None:
    output, document = run_benchmark("adapter_bench", "quick", tmp_path, timeout=120)
    assert re.search(r"^operation\s+samples\s+p50 ms\s+p99 ms", output, re.M), output
    number = r"\s+\d+\s+\d+\.\d{3}\s+\d+\.\d{3}"  # samples, p50 ms, p99 ms
    assert re.search(rf"^get{number}", output, re.M), output
    assert re.search(rf"^list\(limit=100\){number}", output, re.M), output
    (size,) = document["sizes"]
    assert size["size"] == 1000
    assert size["ops"]["get"]["p50_ms"] > 0
    assert size["ops"]["list(limit=100)"]["p50_ms"] > 0
