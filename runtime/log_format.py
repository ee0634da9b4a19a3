"""How the worker and the API log (``AGENT_MEMORY_LOG_FORMAT``: ``text``, the default,
or ``json``; docs/operations.md#logs).

- ``json``: one object per line with ``time``, ``level``, ``logger`` and ``message``,
  plus the Temporal ids of the workflow or activity the line came from (``workflowId``,
  ``runId``, ``workflowType`` or ``activityType``, ``activityId``, ``attempt``,
  ``taskQueue``, ``namespace``): from the SDK's loggers' extras, and for any other
  logger called inside an activity, from the activity's context.
- Expected failures are one line in both formats: an activity that fails with one of
  the service's own refusals (an ApplicationError whose type is an ErrorCode retrying
  cannot fix, such as ``token_budget_exceeded``) is logged with its type and message
  (content-free by design) and no traceback. Anything else keeps its traceback.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from temporalio import activity
from temporalio.exceptions import ApplicationError

from schemas.errors import NON_RETRYABLE_CODES

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
_EXPECTED = frozenset(code.value for code in NON_RETRYABLE_CODES)

# The SDK's extras (temporalio.workflow/activity.logger) under our field names.
_FIELDS = {
    "workflow_id": "workflowId",
    "run_id": "runId",
    "workflow_run_id": "runId",
    "workflow_type": "workflowType",
    "activity_type": "activityType",
    "activity_id": "activityId",
    "attempt": "attempt",
    "task_queue": "taskQueue",
    "namespace": "namespace",
}


def _expected_failure(record: logging.LogRecord) -> ApplicationError | None:
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, ApplicationError) and error.type in _EXPECTED:
        return error
    return None


class ExpectedFailuresOnOneLine(logging.Filter):
    """The service's own refusals without their traceback: the type and message say
    everything, and a night of them would bury the unexpected."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = _expected_failure(record)
        if error is not None:
            record.msg = f"{record.getMessage()}: {error.type}: {error.message}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.expected_error = error.type
        return True


def _temporal_ids(record: logging.LogRecord) -> dict[str, Any]:
    details = getattr(record, "temporal_workflow", None) or getattr(
        record, "temporal_activity", None
    )
    if details is None and activity.in_activity():
        info = activity.info()
        details = {
            "workflow_id": info.workflow_id,
            "workflow_run_id": info.workflow_run_id,
            "workflow_type": info.workflow_type,
            "activity_type": info.activity_type,
            "activity_id": info.activity_id,
            "attempt": info.attempt,
            "task_queue": info.task_queue,
        }
    if not details:
        return {}
    return {_FIELDS[key]: value for key, value in details.items() if key in _FIELDS and value}


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **_temporal_ids(record),
        }
        expected = getattr(record, "expected_error", None)
        if expected is not None:
            line["error"] = expected
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(log_format: LogFormat, level: int = logging.INFO) -> None:
    """The root logger's one handler, for the worker and the API processes."""
    handler = logging.StreamHandler()
    handler.addFilter(ExpectedFailuresOnOneLine())
    if log_format == "json":
        handler.setFormatter(JsonLines())
        # The ids travel as fields: the SDK's copy of them in every message is noise.
        activity.logger.activity_info_on_message = False
        from temporalio import workflow

        workflow.logger.workflow_info_on_message = False
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
