"""Timeouts and retry policies shared by the workflows, in one place."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

# Errors that retrying cannot fix: bad input and an un-meetable budget.
NON_RETRYABLE = ["token_budget_exceeded", "invalid_input", "invalid_memory_ref"]

STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=10,
    non_retryable_error_types=NON_RETRYABLE,
)

# Every schedule action carries an execution timeout, so no run (stuck or not) can hold a
# schedule whose overlap policy is Skip for longer than this.
DREAM_EXECUTION_TIMEOUT = timedelta(hours=6)

SNAPSHOT_TIMEOUT = timedelta(minutes=5)
# A dream over a large backlog reads the whole snapshot; heartbeats show progress and
# catch a dead worker within HEARTBEAT_TIMEOUT instead of waiting for the full timeout.
DISTILL_TIMEOUT = timedelta(minutes=30)
HEARTBEAT_TIMEOUT = timedelta(seconds=30)
MAINTENANCE_TIMEOUT = timedelta(minutes=5)
INDEX_TIMEOUT = timedelta(seconds=30)
