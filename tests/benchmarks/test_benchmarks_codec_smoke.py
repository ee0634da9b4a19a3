"""Smoke test: the payload-codec benchmark runs end to end in its --quick mode and
reports both converters side by side, in round trips and whole workflows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark


@pytest.mark.slow
def test_codec_bench_quick_runs(tmp_path: Path) -> None:
    output, document = run_benchmark("codec_bench", "quick", tmp_path, timeout=180)
    assert "plain µs" in output and "encrypted µs" in output, output
    assert document["quick"] is True
    trips = document["round_trips"]
    assert len(trips) == 3
    for figures in trips.values():
        assert figures["plain_us"] > 0 and figures["encrypted_us"] > 0
        assert figures["ratio"] == pytest.approx(
            figures["encrypted_us"] / figures["plain_us"], 0.05
        )
    assert trips["consolidation result (2,000 ids)"]["bytes"] > 40_000
    end_to_end = document["end_to_end"]
    assert end_to_end["plain_per_s"] > 0 and end_to_end["encrypted_per_s"] > 0
