"""Smoke test: the adapter benchmark runs end to end in its --quick mode."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_adapter_bench_quick_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / "state")
    results = tmp_path / "adapter-quick.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.adapter_bench", "--quick", "--json", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert re.search(r"^operation\s+samples\s+p50 ms\s+p99 ms", output, re.M), output
    number = r"\s+\d+\s+\d+\.\d{3}\s+\d+\.\d{3}"  # samples, p50 ms, p99 ms
    assert re.search(rf"^get{number}", output, re.M), output
    assert re.search(rf"^list\(limit=100\){number}", output, re.M), output
    document = json.loads(results.read_text())
    (size,) = document["sizes"]
    assert size["size"] == 1000
    assert size["ops"]["get"]["p50_ms"] > 0
    assert size["ops"]["list(limit=100)"]["p50_ms"] > 0
