"""What encrypted payloads cost: the data converter with the AES-256-GCM codec against
the same converter without it, in the same run.

    python -m benchmarks.codec_bench [--quick] [--json PATH]

1. Round trips (encode, then decode) of three payloads shaped like what workflows carry:
   a workflow input (a memoryRef and a budget, ~70 B), a distillation result (ids,
   checksums and counts, ~900 B) and a consolidation result naming 2,000 merged ids
   (~60 KB). Median microseconds per round trip, plain and encrypted, and the ratio.
2. End to end: one-activity workflows (benchmarks/ceiling_workflow.py) started all at
   once on a local dev server with a worker in this process, once with each converter
   (every payload of every workflow and activity goes through the codec), in
   workflows/s: the median of 3 alternating rounds each, and the ratio.

Results go to benchmarks/results/codec.json (codec-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from benchmarks.ceiling_workflow import OneActivityWorkflow, noop
from runtime import search_attributes
from runtime.binaries import temporal_cli
from runtime.converter import data_converter, data_converter_for
from runtime.settings import Settings

RESULTS = Path(__file__).with_name("results")
REF = "mem://acme/support-agent"
ROUNDS = 3


def _id(n: int) -> str:
    return f"e{n:08d}-{uuid.UUID(int=n).hex[:12]}"


PAYLOADS: dict[str, dict[str, Any]] = {
    "workflow input": {"memoryRef": REF, "tokenBudget": 8000},
    "distillation result": {
        "memoryRef": REF,
        "status": "distilled",
        "snapshotChecksum": "ab" * 32,
        "sourceCount": 14,
        "sourceIds": [_id(n) for n in range(14)],
        "tokenBudget": 8000,
        "tokensUsed": 426,
        "outputId": "dist-" + "cd" * 16,
        "archiveChecksum": "ef" * 32,
        "index": {"path": "MEMORY-INDEX.json", "version": 3, "sha256": "01" * 32},
    },
    "consolidation result (2,000 ids)": {
        "memoryRef": REF,
        "passId": "cp-" + "23" * 8,
        "inputCount": 40_000,
        "outputCount": 38_000,
        "mergedIds": [_id(n) for n in range(2_000)],
    },
}


def _keys_file(directory: Path) -> Path:
    def key() -> str:
        return base64.b64encode(os.urandom(32)).decode()

    document = {
        "system": {"active": "sys-1", "keys": {"sys-1": key()}},
        "tenants": {"acme": {"active": "acme-1", "keys": {"acme-1": key()}}},
    }
    path = directory / "payload-keys.json"
    path.write_text(json.dumps(document))
    path.chmod(0o600)
    return path


async def round_trip_us(converter: DataConverter, value: dict[str, Any], runs: int) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        payloads = await converter.encode([value])
        decoded = await converter.decode(payloads, [dict])
        timings.append((time.perf_counter() - started) * 1e6)
    assert decoded == [value]
    return statistics.median(timings)


async def workflows_per_second(env: WorkflowEnvironment, converter: DataConverter, n: int) -> float:
    config = env.client.config()
    config["data_converter"] = converter
    client = Client(**config)
    queue = f"codec-{uuid.uuid4().hex[:6]}"
    async with Worker(client, task_queue=queue, workflows=[OneActivityWorkflow], activities=[noop]):
        started = time.perf_counter()
        handles = await asyncio.gather(
            *(
                client.start_workflow(
                    OneActivityWorkflow.run, i, id=f"{queue}-{i}", task_queue=queue
                )
                for i in range(n)
            )
        )
        assert await asyncio.gather(*(h.result() for h in handles)) == list(range(n))
        return n / (time.perf_counter() - started)


async def run(quick: bool) -> dict[str, Any]:
    runs = 300 if quick else 3_000
    workflows = 50 if quick else 300
    with tempfile.TemporaryDirectory(prefix="codec-bench-") as tmp:
        encrypted = data_converter_for(
            Settings(AGENT_MEMORY_PAYLOAD_KEYS_FILE=str(_keys_file(Path(tmp))))
        )
        assert encrypted.payload_codec is not None
        report: dict[str, Any] = {"quick": quick, "round_trips": {}, "end_to_end": {}}
        print(f"{'payload':<34}{'bytes':>8}{'plain µs':>11}{'encrypted µs':>14}{'ratio':>8}")
        for name, value in PAYLOADS.items():
            size = len((await data_converter.encode([value]))[0].data)
            plain = await round_trip_us(data_converter, value, runs)
            sealed = await round_trip_us(encrypted, value, runs)
            report["round_trips"][name] = {
                "bytes": size,
                "plain_us": round(plain, 1),
                "encrypted_us": round(sealed, 1),
                "ratio": round(sealed / plain, 2),
            }
            print(f"{name:<34}{size:>8}{plain:>11.1f}{sealed:>14.1f}{sealed / plain:>7.2f}x")
        env = await WorkflowEnvironment.start_local(
            data_converter=data_converter,
            dev_server_existing_path=temporal_cli(),
            search_attributes=list(search_attributes.ALL),
        )
        try:
            # Warm up the server and the worker machinery once, then measure each in turn.
            await workflows_per_second(env, data_converter, 20)
            # Alternating rounds, median of each: the dev server's own pace drifts.
            plain_rates, sealed_rates = [], []
            for _ in range(ROUNDS):
                plain_rates.append(await workflows_per_second(env, data_converter, workflows))
                sealed_rates.append(await workflows_per_second(env, encrypted, workflows))
            plain_rate = statistics.median(plain_rates)
            sealed_rate = statistics.median(sealed_rates)
        finally:
            await env.shutdown()
        report["end_to_end"] = {
            "workflows": workflows,
            "plain_per_s": round(plain_rate, 1),
            "encrypted_per_s": round(sealed_rate, 1),
            "ratio": round(sealed_rate / plain_rate, 2),
        }
        print(
            f"one-activity workflows ({workflows}, all at once): plain {plain_rate:.1f}/s, "
            f"encrypted {sealed_rate:.1f}/s ({sealed_rate / plain_rate:.2f}x)"
        )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer runs and workflows (smoke)")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.quick))
    target = args.json or RESULTS / ("codec-quick.json" if args.quick else "codec.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
