"""Smoke test: the search and embedding benchmarks run end to end at a tiny size (each in
its own process with its own embedded PostgreSQL, both at once) and report sane figures:
positive throughput, p50 <= p99, and the same-run product/baseline ratios."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

SEARCH_ARGS = ["--quick", "--entries", "300", "--clients", "4", "--queries", "24"]
EMBEDDING_ARGS = [
    "--quick",
    "--puts",
    "30",
    "--batches",
    "1",
    "--rounds",
    "2",
    "--preload",
    "0",
    "--batch-size",
    "100",
]


def start(module: str, args: list[str], tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(tmp_path / f"state-{module}")
    results = tmp_path / f"{module}.json"
    process = subprocess.Popen(
        [sys.executable, "-m", f"benchmarks.{module}", *args, "--json", str(results)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    return process, results


def finish(process: subprocess.Popen[str], results: Path) -> tuple[str, dict[str, Any]]:
    try:
        output, errors = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 0, output[-3000:] + errors[-3000:]
    return output, json.loads(results.read_text())


def sane(stat: dict[str, Any], rate: str) -> None:
    assert stat[rate] > 0, stat
    assert 0 < stat["p50_ms"] <= stat["p99_ms"], stat


@pytest.mark.slow
def test_search_and_embedding_benches_run(tmp_path: Path) -> None:
    search = start("search_bench", SEARCH_ARGS, tmp_path)
    embedding = start("embedding_bench", EMBEDDING_ARGS, tmp_path)
    search_out, search_doc = finish(*search)
    embedding_out, embedding_doc = finish(*embedding)

    assert search_doc["load"]["entries"] == 300 and search_doc["load"]["entries_per_s"] > 0
    assert search_doc["clients"] == 4
    for mode in ("hybrid", "text", "semantic"):
        sides = search_doc["modes"][mode]
        sane(sides["product"], "qps")
        sane(sides["bare"], "qps")
        assert sides["ratio_product_over_bare"]["p50"] > 0
        assert re.search(rf"^ratio {mode}: product/bare p50 = \d+\.\d+x", search_out, re.M)
    assert "HNSW index ix_embeddings_hnsw_" in search_out, search_out
    assert search_doc["explain"]["gin_used"] in (True, False)

    throughput = embedding_doc["throughput"]
    for key in ("product_batch", "bare_batch", "product_single", "bare_single"):
        sane(throughput[key], "entries_per_s")
    assert throughput["ratio_bare_over_product_entries_per_s"] > 0
    writes = embedding_doc["writes"]
    for key in ("put_embedded", "put_plain", "put_many_embedded", "put_many_plain"):
        sane(writes[key], "entries_per_s")
    assert writes["put"]["ratio_p50"] > 0 and writes["put_many"]["ratio_p50"] > 0
    assert re.search(r"^ratio put: embedded/plain p50 = \d+\.\d+x", embedding_out, re.M)
