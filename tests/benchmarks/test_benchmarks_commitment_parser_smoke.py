"""Smoke test: the commitment-parser benchmark runs in its --quick mode (a few phrases per
set, no database) and prints the accuracy table with the dateparser baseline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_commitment_parser_bench_quick_prints_the_table(tmp_path: Path) -> None:
    results = tmp_path / "commitment-parser-quick.json"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.commitment_parser_bench",
            "--quick",
            "--json",
            str(results),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert re.search(r"^phrase set\s+n\s+ours\s+wrong\s+none\s+dateparser", output, re.M), output
    percent = r"\d+\.\d%"
    row = rf"\s+15\s+{percent}\s+\d+\s+\d+"
    assert re.search(rf"^ctparse corpus \(English Time\){row}\s+{percent}", output, re.M), output
    assert re.search(rf"^recurrent: representable rules{row}\s+n/a", output, re.M), output
    assert re.search(rf"^own set: one-off times{row}\s+{percent}", output, re.M), output
    assert re.search(
        r"^  skipped from ctparse corpus \(English Time\): \d+ German phrase", output, re.M
    )
    document = json.loads(results.read_text())
    sets = {s["name"]: s for s in document["sets"]}
    assert sets["ctparse corpus (English Time)"]["scored"] == 15
    assert sets["ctparse corpus (English Time)"]["dateparser"]["accuracy"] is not None
    assert sets["recurrent: representable rules"]["dateparser"] is None
    assert sets["own set: one-off times"]["ours"]["accuracy"] >= 0.9
