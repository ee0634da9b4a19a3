"""The CI chaos run (chaos/): real worker processes SIGKILLed at random moments while
distillation, consolidation, commitments and forget run, PostgreSQL and the Temporal
server restarted mid-run; nothing may be applied twice, lost or left partial."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("distillation", "consolidation", "commitments", "forget", "proposals")


@pytest.mark.slow
def test_the_ci_chaos_run_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    figures_file = tmp_path / "chaos.json"
    run = subprocess.run(
        [sys.executable, "-m", "chaos", "--json", str(figures_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # The seed is the first line: a failure replays with `python -m chaos --seed N`.
    print(run.stdout[-6000:], run.stderr[-3000:])
    assert run.stdout.startswith("chaos seed ")
    assert run.returncode == 0, run.stdout[-3000:]
    figures = json.loads(figures_file.read_text())
    assert figures["kills"] + figures["cliKills"] >= 20
    assert figures["postgresRestarts"] >= 1 and figures["temporalRestarts"] >= 1
    for kind in KINDS:
        assert figures["killsDuring"].get(kind, 0) >= 1, kind
        assert figures["operations"][kind] >= 1, kind
    assert figures["completed"] == figures["operations"]
    # At least one workflow per operation (a commitments operation awaits five).
    assert figures["workflowsCompleted"] > sum(figures["operations"].values())
    assert figures["duplicates"] == figures["losses"] == figures["partialArchives"] == 0
    assert figures["partialForgets"] == figures["storeProblems"] == figures["problems"] == 0
    assert figures["workerSelfExits"] == 0
    for line in ("workflows completed: ", "duplicates: 0", "losses: 0", "partial archives: 0"):
        assert line in run.stdout
    assert "RESULT: ok" in run.stdout
