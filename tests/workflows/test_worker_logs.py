"""Log lines of failures: the service's own refusals lose their traceback, anything else
keeps it. The worker's JSON logs as a process writes them are checked in
tests/workflows/test_worker_endpoint.py."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from temporalio.exceptions import ApplicationError

from runtime.log_format import ExpectedFailuresOnOneLine, JsonLines

pytestmark = pytest.mark.slow

CANARY = "log-canary-91c2"


def _record(error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except BaseException:
        return logging.LogRecord(
            "temporalio.activity", logging.WARNING, __file__, 1, "Completing activity as failed",
            None, sys.exc_info(),
        )  # fmt: skip


def test_an_unexpected_failure_keeps_its_traceback() -> None:
    unexpected = _record(ApplicationError("connection reset", type="store_unavailable"))
    assert ExpectedFailuresOnOneLine().filter(unexpected)
    line = json.loads(JsonLines().format(unexpected))
    assert "Traceback" in line["traceback"] and "error" not in line
    refused = _record(ApplicationError("budget 20 < 96", type="token_budget_exceeded"))
    assert ExpectedFailuresOnOneLine().filter(refused)
    line = json.loads(JsonLines().format(refused))
    assert "traceback" not in line and line["error"] == "token_budget_exceeded"
    assert line["message"].endswith(": token_budget_exceeded: budget 20 < 96")
