"""Smoke test: the predicate-watch benchmark runs end to end in its --smoke mode (every
phase of --quick at smaller counts: embedded PostgreSQL, a dev server and the
time-skipping server, the real worker and change listener) and reports every figure
docs/performance.md quotes, each beside its baseline: trigger cost per put, write ->
fire latency (below the polling design's), workflow tasks of an idle watch over a
simulated day, the fan-out with and without the pre-check, and the safety sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.benchmark_runs import run_benchmark

STATS = ("n", "mean", "median", "p99", "max")


@pytest.mark.slow
def test_predicate_watch_bench_smoke_runs(tmp_path: Path) -> None:
    output, report = run_benchmark("predicate_watch_bench", "smoke", tmp_path, timeout=180)
    assert "PASS" in output and "polling baseline (analytic)" in output, output
    assert report["quick"] is True and report["pass"] is True
    plan = report["plan"]

    trigger = report["trigger_cost"]
    for side in ("with_triggers_ms", "without_triggers_ms"):
        assert set(trigger[side]) == set(STATS) and trigger[side]["n"] == plan["trigger_puts"]
        assert trigger[side]["median"] > 0
    assert trigger["ratio_mean"] > 0 and trigger["ratio_median"] > 0

    latency = report["write_to_fire"]
    notified, floor = latency["notified_ms"], latency["direct_signal_floor_ms"]
    assert notified["n"] == floor["n"] == plan["latency_watches"] > 0
    assert 0 < notified["median"] <= notified["p99"] <= notified["max"]
    # Notified, a write reaches its watch well before the 60 s cadence's next evaluation.
    polling = latency["polling_baseline_s"]
    assert (polling["mean"], polling["max"]) == (30, 60)
    assert notified["max"] < polling["mean"] * 1000
    assert latency["polling_mean_over_notified_p50"] > 1 and floor["median"] > 0

    idle = report["idle_day"]
    assert idle["simulated_s"] >= 86_400 and idle["fired_after_the_day"] == idle["watches"]
    assert idle["workflow_tasks_per_watch"] == 0 and idle["evaluations_per_watch"] == 0
    assert idle["polling_baseline"]["evaluations_per_watch"] == 1440

    fan = report["fanout"]
    assert fan["watches"] == plan["fanout_watches"] and fan["puts"] == 20
    assert fan["expected_without_precheck"] == fan["watches"] * fan["puts"]
    assert fan["signals_without_precheck"] == fan["expected_without_precheck"]
    assert fan["evaluations_without_precheck"] > 0
    assert fan["signals_with_precheck"] == fan["evaluations_with_precheck"] == 0
    assert fan["left_asleep_with_precheck"] == fan["expected_without_precheck"]
    assert fan["precheck_ms"]["median"] > 0 and fan["lookup_ms"]["median"] > 0

    sweep = report["sweep"]
    assert (sweep["watches"], sweep["refs"], sweep["lagging"]) == (
        plan["sweep_watches"],
        plan["sweep_refs"],
        plan["sweep_watches"] // 100,
    )
    assert sweep["sweep_ms"]["n"] == 5 and sweep["sweep_ms"]["median"] > 0
    assert sweep["polling_baseline"]["database_s_per_60s"] > 0
    assert sweep["polling_over_sweep"] > 1
