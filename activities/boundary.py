"""The one wrapper every activity runs inside: no exception leaves an activity with
memory content in it, and every activity heartbeats while it runs (activities/heartbeat.py).

Errors we raise on purpose (schemas.errors) carry a code and a content-free message;
they become ApplicationErrors of that type, non-retryable exactly when the code is in
NON_RETRYABLE_CODES. Anything else (a driver error, a bug) may quote statement
parameters, row values or entry text, so it is reported by class name and SQLSTATE
only, retryable, and without its cause chain (``from None``: the SDK would otherwise
serialise the original exception, message and all, into the failure in history, and
the worker's log would print it).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeat import liveness
from schemas.errors import ErrorCode, MemoryError_

log = logging.getLogger("agent_memory.activities")
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

# Failures of the connection rather than of the statement: the store is unavailable.
_UNAVAILABLE = (ConnectionError, OSError, TimeoutError, DisconnectionError, OperationalError)


def _sqlstate(error: BaseException) -> str | None:
    original = getattr(error, "orig", None)
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return str(code) if code else None


def content_free_error(error: BaseException) -> ApplicationError:
    """The ApplicationError an activity reports for ``error``."""
    if isinstance(error, ApplicationError):
        return error  # raised on purpose, already content-free
    if isinstance(error, MemoryError_):
        return ApplicationError(
            str(error), error.details(), type=error.code.value, non_retryable=not error.retryable
        )
    kind = type(error).__name__
    state = _sqlstate(error)
    where = f" (SQLSTATE {state})" if state else ""
    code = ErrorCode.STORE_UNAVAILABLE if isinstance(error, _UNAVAILABLE) else ErrorCode.INTERNAL
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        code = ErrorCode.STORE_UNAVAILABLE
    return ApplicationError(
        f"{code.value}: {kind}{where}; details withheld (they may quote memory content)",
        {"exception": kind, "sqlstate": state},
        type=code.value,
        non_retryable=False,
    )


def content_free(function: F) -> F:
    """Wrap an activity so every failure it reports is a content-free ApplicationError."""

    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            async with liveness():
                return await function(*args, **kwargs)
        except Exception as error:
            reported = content_free_error(error)
            if reported is not error:
                log.warning(
                    "activity %s failed: %s",
                    activity.info().activity_type,
                    reported.message,
                )
            raise reported from None

    return wrapper  # type: ignore[return-value]
