"""What every fuzzer of the suite shares: how many cases it runs and the seed they draw
from.

Each fuzzer (tests/reliability/test_fuzz_*.py) runs ``FUZZ_CASES`` cases, 2,000 unless
the environment says otherwise (``make soak`` runs 10,000), drawn from one seed per run:
a fresh one each run, printed in the run's header, or ``FUZZ_SEED`` when given. A
failing fuzzer prints the command that replays it (tests/conftest.py):

    FUZZ_SEED=<seed> FUZZ_CASES=<cases> ./run-tests.sh tests/reliability/test_fuzz_x.py

Hypothesis's example database is off for fuzzers: the seed is what replays a failure,
on any machine.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence

from hypothesis import HealthCheck, settings

SEED_VARIABLE = "FUZZ_SEED"
CASES_VARIABLE = "FUZZ_CASES"
FUZZ_CASES = int(os.environ.get(CASES_VARIABLE, "2000"))


def run_seed() -> int:
    """This run's seed: FUZZ_SEED, or a fresh one set there so that pytest-xdist's
    workers, started after, draw from the same."""
    seed = os.environ.get(SEED_VARIABLE)
    if seed is None:
        seed = os.environ[SEED_VARIABLE] = str(secrets.randbelow(2**32))
    return int(seed)


def fuzz_settings(
    *, max_examples: int = FUZZ_CASES, suppress: Sequence[HealthCheck] = ()
) -> settings:
    """A fuzzer's settings: its cases from this run's seed, no deadline (cases run
    against real PostgreSQL and Temporal on 2 cores)."""
    return settings(
        max_examples=max_examples,
        derandomize=False,
        database=None,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            *suppress,
        ],
    )


def replay_command(nodeid: str) -> str:
    return f"{SEED_VARIABLE}={run_seed()} {CASES_VARIABLE}={FUZZ_CASES} ./run-tests.sh {nodeid}"
