"""Smoke test: the HTTP benchmark runs end to end in its --smoke mode (embedded
PostgreSQL, the API in its own uvicorn process, 5 clients for a second per operation and
side) with no errors, and prints the HTTP-over-direct ratio of every operation."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LABELS = ("GET one entry", "GET list of 100", "PATCH If-Match", "GET discovery")


@pytest.mark.slow
def test_http_bench_smoke_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / "state")
    results = tmp_path / "http-smoke.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.http_bench", "--smoke", "--json", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert "PASS" in output and "client and API server share the same" in output, output
    ratio = r"\d+\.\d+x"
    for label in LABELS:
        line = rf"^ratio {re.escape(label)}: HTTP p50 / direct p50 = {ratio}; "
        assert re.search(rf"{line}direct rps / HTTP rps = {ratio}$", output, re.M), output
    report = json.loads(results.read_text())
    assert report["errors"] == 0 and report["pass"] is True
    assert [op["label"] for op in report["ops"].values()] == list(LABELS)
    for op in report["ops"].values():
        for side in ("http", "direct"):
            assert op[side]["errors"] == 0 and op[side]["requests"] > 0, op
            assert op[side]["p50_ms"] > 0 and op[side]["rps"] > 0, op
        assert op["ratio_p50_http_over_direct"] > 0
