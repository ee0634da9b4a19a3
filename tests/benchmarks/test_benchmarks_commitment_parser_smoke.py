"""Smoke test: the commitment-parser benchmark runs in its --quick mode (the corpora that
ship in wheels, 15 rows per half, no fetched data, no database), prints the per-half
table with both baselines and the test-half targets, and every row it meets has a half
in the committed split."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import commitment_parser_bench
from benchmarks.time_corpora import fetch

REPO = Path(__file__).resolve().parents[2]


def test_commitment_parser_bench_quick_prints_the_halves_and_targets(tmp_path: Path) -> None:
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
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert re.search(r"^\s+\|\s+ours\s+\|\s+dateparser\s+\|\s+parsedatetime", output, re.M), output
    assert re.search(r"^corpus\s+half\s+scored(\s+\|\s+correct\s+wrong\s+none){3}", output, re.M)
    row = r"\s+15(\s+\|\s+\d+\s+\d+\s+\d+){3}"
    for corpus in ("ctparse corpus", "recurrent"):
        assert re.search(rf"^{corpus}\s+dev{row}\s+\|$", output, re.M), output
        assert re.search(rf"^{corpus}\s+test{row}\s+\|\s+(PASS|FAIL) \(wrong", output, re.M)
    assert re.search(r"^  skipped: \d+ German phrase", output, re.M), output
    assert "fetched corpora not run: dateparser tests, timefhuman tests" in output
    assert "regression: own phrase set" in output

    document = json.loads(results.read_text())
    assert document["quick"] is True
    assert re.fullmatch(r"[0-9a-f]{64}", document["grammar_sha256"])
    corpora = {c["name"]: c for c in document["corpora"]}
    assert set(corpora) == {"ctparse corpus", "recurrent"}
    for corpus in corpora.values():
        # The split covers every row the loaders yield: none is left unscored for lack of a half.
        assert corpus["unassigned"] == 0
        dev, test = corpus["halves"]["dev"], corpus["halves"]["test"]
        for half in (dev, test):
            assert half["scored"] == 15
            for parser in ("ours", "dateparser", "parsedatetime"):
                counts = half[parser]
                assert counts["correct"] + counts["wrong"] + counts["none"] == 15
        assert "targets" not in dev
        targets = test["targets"]
        assert targets["pass"] == (targets["wrong_ok"] and targets["correct_ok"])
        assert targets["wrong_ok"] == (targets["wrong"] <= 0.01 * 15)
        assert targets["correct_ok"] == (test["ours"]["correct"] >= test["dateparser"]["correct"])
    assert {r["name"] for r in document["regression"]} >= {"one-off times", "recurrences"}


def test_misses_never_show_the_test_half(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status = commitment_parser_bench.main(
        ["--quick", "--half", "test", "--misses", "--json", str(tmp_path / "r.json")]
    )
    output = capsys.readouterr().out
    assert status == 0
    assert "--misses lists the dev half only" in output
    assert "miss [ctparse corpus" not in output and "miss [recurrent" not in output
    assert not re.search(r"^\S.*\s+dev\s+\d+", output, re.M)  # no dev row was run either


def test_a_missing_fetched_corpus_stops_the_full_run_naming_the_fetch_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(fetch, "CACHE", tmp_path / "empty-cache")
    status = commitment_parser_bench.main(["--json", str(tmp_path / "r.json")])
    error = capsys.readouterr().err
    assert status != 0
    assert "python -m benchmarks.time_corpora.fetch" in error
    assert not (tmp_path / "r.json").exists()
