"""Timeouts and retry policies shared by the workflows, in one place.

Infrastructure outages delay, never fail: store activities retry without an attempt
limit and are bounded by time instead (schedule-to-close), so a database or Temporal
outage of ten minutes, or of an hour, ends in a completed run. Errors that retrying
cannot fix carry a code from schemas.errors.NON_RETRYABLE_CODES and fail at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.common import RetryPolicy

from schemas.errors import NON_RETRYABLE_CODES

NON_RETRYABLE = sorted(code.value for code in NON_RETRYABLE_CODES)

STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=0,  # unlimited: schedule_to_close bounds the retries in time
    non_retryable_error_types=NON_RETRYABLE,
)

# How long a store activity keeps retrying through an outage before the run fails.
OUTAGE_TOLERANCE = timedelta(hours=1)

# Every schedule action carries an execution timeout, so no run (stuck or not) can hold a
# schedule whose overlap policy is Skip for longer than this.
DREAM_EXECUTION_TIMEOUT = timedelta(hours=6)


# Every activity heartbeats while it runs (activities/heartbeat.py, every 2 s), so a
# worker that dies mid-activity (SIGKILL, OOM, a lost node) is noticed within this and
# the activity retried on another worker, instead of after its start-to-close timeout
# (minutes). Every step is idempotent on what it consumes, so a retry applies once.
HEARTBEAT_TIMEOUT = timedelta(seconds=10)


@dataclass(frozen=True)
class ActivityOptions:
    start_to_close: timedelta
    schedule_to_close: timedelta = OUTAGE_TOLERANCE
    heartbeat: timedelta | None = HEARTBEAT_TIMEOUT
    retry: RetryPolicy = field(default_factory=lambda: STORE_RETRY)


# A distillation reads only what its budget can consume (at most a few thousand rows),
# so minutes are generous.
DISTILL = ActivityOptions(
    start_to_close=timedelta(minutes=30),
    schedule_to_close=OUTAGE_TOLERANCE + timedelta(minutes=30),
)
# A pass reads and plans the whole long-term corpus of a memoryRef (100k entries in
# well under a minute here) inside one transaction; heartbeats carry its phase.
CONSOLIDATE = ActivityOptions(
    start_to_close=timedelta(minutes=30),
    schedule_to_close=OUTAGE_TOLERANCE + timedelta(minutes=30),
)
SNAPSHOT = ActivityOptions(start_to_close=timedelta(minutes=5))
# A re-embed activity works through at most max_pages pages (10,000 entries by default,
# under a second of model time each page on one core), heartbeating its cursor.
EMBED = ActivityOptions(start_to_close=timedelta(minutes=10))
MAINTENANCE = ActivityOptions(start_to_close=timedelta(minutes=5))
INDEX = ActivityOptions(start_to_close=timedelta(seconds=30))
# Inference parses what was written since the watermark; arming starts workflows through
# the Temporal client (heartbeats carry the count so far).
INFER = ActivityOptions(start_to_close=timedelta(minutes=10))
ARM = ActivityOptions(start_to_close=timedelta(minutes=30))
# The fleet horizon's pass arms a day's commitments across every memoryRef.
ARM_FLEET = ActivityOptions(start_to_close=timedelta(hours=2))
# A fleet batch dreams up to 500 agents one after another (a few hundred milliseconds
# each at 100 entries; a large memory's first dream can take minutes). Heartbeats carry
# the agents done, so a dead worker is noticed in seconds, not at this timeout.
FLEET_BATCH = ActivityOptions(
    start_to_close=timedelta(hours=2),
    schedule_to_close=OUTAGE_TOLERANCE + timedelta(hours=2),
)
# Synthesis reads a memoryRef's requests (at most a few thousand) and starts a workflow
# per open proposal; a lifecycle step is one transaction, an install one schedule more.
SYNTHESIZE = ActivityOptions(start_to_close=timedelta(minutes=5))
PROPOSAL_STEP = ActivityOptions(start_to_close=timedelta(seconds=30))
# One claim-and-record transaction: short, retried through outages like every store call.
FIRE = ActivityOptions(start_to_close=timedelta(seconds=30))
# A conformance fixture's few writes and reads; a client polls for it for seconds, so an
# outage longer than ten minutes fails the run rather than leave it running.
FIXTURE = ActivityOptions(
    start_to_close=timedelta(seconds=30), schedule_to_close=timedelta(minutes=10)
)
