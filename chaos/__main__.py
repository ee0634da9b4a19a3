"""python -m chaos [--soak] [--kills N] [--seed N] [--json PATH]

Prints the seed first and the figures last; exits 1 when anything was applied twice,
lost, left partial, or a workflow did not complete."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import sys
from pathlib import Path

from chaos.run import CI, SOAK, chaos_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chaos", description=__doc__)
    parser.add_argument("--soak", action="store_true", help=f"{SOAK.kills} kills (local soak)")
    parser.add_argument("--kills", type=int, help="override the number of worker kills")
    parser.add_argument("--workers", type=int, help="worker processes (default 2)")
    parser.add_argument("--seed", type=int, help="replay a run (default: random, printed)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="keep state and logs in this directory")
    args = parser.parse_args(argv)
    plan = SOAK if args.soak else CI
    if args.kills is not None:
        if args.kills < 1:
            parser.error("--kills must be at least 1")
        plan = dataclasses.replace(plan, kills=args.kills)
    if args.workers is not None:
        if args.workers < 1:
            parser.error("--workers must be at least 1")
        plan = dataclasses.replace(plan, workers=args.workers)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    report = asyncio.run(
        chaos_run(plan, seed, say=lambda line: print(line, flush=True), keep=args.keep)
    )
    for line in report.lines():
        print(line, flush=True)
    for problem in report.verdict.problems[:50]:
        print(f"  problem: {problem}")
    for check, problems in report.store.items():
        for problem in problems[:20]:
            print(f"  {check}: {problem}")
    if args.json:
        figures = {
            "seed": seed,
            "kills": report.kills,
            "cliKills": report.cli_kills,
            "postgresRestarts": report.postgres_restarts,
            "temporalRestarts": report.temporal_restarts,
            "workerSelfExits": report.worker_self_exits,
            "killsDuring": dict(report.kills_during),
            "operations": dict(report.operations),
            "completed": dict(report.completed),
            "workflowsCompleted": report.workflows_completed,
            "duplicates": report.verdict.duplicates,
            "losses": report.verdict.losses,
            "partialArchives": len(report.store.get("archives", [])),
            "partialForgets": report.verdict.partial,
            "storeProblems": sum(len(problems) for problems in report.store.values()),
            "problems": len(report.verdict.problems),
            "elapsedSeconds": round(report.elapsed_s, 1),
            "ok": report.ok,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
