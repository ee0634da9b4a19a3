"""Running a benchmark the way its smoke test needs: ``python -m benchmarks.<name>`` in
a state dir of the test's own (so it starts its own embedded PostgreSQL, never the
suite's DATABASE_URL), with its results written to a JSON file the test reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def run_benchmark(
    module: str, mode: str, tmp_path: Path, *, timeout: float
) -> tuple[str, dict[str, Any]]:
    """(stdout, the JSON report) of ``benchmarks.<module> --<mode>``; it must exit 0."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / "state")
    results = tmp_path / f"{module}-{mode}.json"
    completed = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", f"--{mode}", "--json", str(results)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    return output, json.loads(results.read_text())
