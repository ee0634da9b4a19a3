"""Smoke test: the forget benchmark runs end to end in its --quick mode (a 2,000-entry ref
with 3 days of archives beside the same ref without derived copies)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark


@pytest.mark.slow
def test_forget_bench_quick_runs(tmp_path: Path) -> None:
    output, document = run_benchmark("forget_bench", "quick", tmp_path, timeout=180)
    assert re.search(r"^operation\s+ref\s+runs\s+median ms", output, re.M), output
    ms = r"\s+\d+\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d"  # runs, median, min, max, dry run
    for operation in (r"forget 1 entry", r"forget tag \(20 entries\)"):
        assert re.search(rf"^{operation}\s+A: derived copies{ms}", output, re.M), output
        assert re.search(rf"^{operation}\s+B: no derived copies{ms}", output, re.M), output
    ratios = re.findall(r"^  ratio A/B\s+(\d+\.\d)x\s+(\d+\.\d)x\s+(\d+\.\d)x$", output, re.M)
    assert len(ratios) == 2, output
    assert "PASS" in output, output

    assert document["quick"] is True and document["pass"] is True
    operations = document["operations"]
    single = operations["forget 1 entry"]
    tag = operations["forget tag (20 entries)"]
    # The single-entry target sits in an archive in A: one archive and one distilled entry
    # rewritten there, nothing derived in B.
    assert single["A"]["archives_rewritten"] == 1 and single["A"]["distilled_rewritten"] == 1
    assert single["B"]["archives_rewritten"] == 0 and single["B"]["rows_written_median"] > 0
    assert tag["A"]["entries"] == tag["B"]["entries"] == 20
    assert tag["ratio_a_over_b"]["median"] > 0
