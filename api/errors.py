"""One error envelope for every route: ``{"error": code, "message": ..., ...details}``.

The envelope is the openwop REST shape (``error`` is a registered code such as
``token_budget_exceeded``); details name fields and limits. Nothing here echoes a
request body or stored content: pydantic errors are reduced to location and rule, and
unexpected exceptions become a content-free 500.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from schemas.errors import (
    CapacityExceeded,
    ErrorCode,
    InvalidInput,
    MemoryError_,
    TokenBudgetExceeded,
    VersionConflict,
)

log = logging.getLogger("agent_memory.api")

# Where each error code lands, whether a store call raised it or a workflow's activity
# reported it. Anything not listed is a refusal (409); see status_of.
_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_INPUT: 422,
    ErrorCode.INVALID_MEMORY_REF: 422,
    ErrorCode.CONTENT_TOO_LARGE: 413,
    ErrorCode.INVALID_SECRET: 422,
    ErrorCode.UNREDACTABLE_CONTENT: 422,
    ErrorCode.TOKEN_BUDGET_EXCEEDED: 422,
    ErrorCode.VERSION_CONFLICT: 409,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.DUPLICATE_KEY: 409,
    ErrorCode.CAPACITY_EXCEEDED: 429,
    ErrorCode.CONSOLIDATION_REFUSED: 409,
    ErrorCode.STORE_UNAVAILABLE: 503,
}


class ApiError(Exception):
    """A refusal a route raises on purpose; ``details`` are content-free."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def status_of(code: ErrorCode) -> int:
    return _STATUS.get(code, 409)


def not_found(what: str = "resource") -> ApiError:
    # The same answer whether the thing is missing or belongs to another tenant (CTI-1).
    return ApiError(404, ErrorCode.NOT_FOUND.value, f"no such {what}")


def envelope(status: int, code: str, message: str, **details: Any) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **details}, status_code=status)


def _memory_error(error: MemoryError_) -> JSONResponse:
    details: dict[str, Any] = dict(error.details())
    message = str(error)
    if isinstance(error, VersionConflict):
        # OpenIntent: a stale If-Match gets the current version to retry against. The
        # current value is not echoed (errors never carry stored content), and no text
        # here may say "lease": the OpenIntent SDK turns such a 409 into a lease error.
        details = {"current_version": error.current_version, "entry_id": error.memory_id}
        message = f"version conflict: the entry is at version {error.current_version}"
    elif isinstance(error, CapacityExceeded):
        details = {"current_count": error.capacity, "max_capacity": error.capacity}
    elif isinstance(error, TokenBudgetExceeded):
        details = {"details": {"budget": error.budget, "minimumRequired": error.minimum_required}}
    elif isinstance(error, InvalidInput):
        details = {"field": error.field}
    status = status_of(error.code)
    return envelope(status, error.code.value, message, **details)


def _field(location: tuple[Any, ...]) -> str:
    # ("body", "value", "total") -> "value.total"; ("header", "if-match") -> "If-Match".
    parts = [str(part) for part in location]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        kind, parts = parts[0], parts[1:]
        if kind == "header" and parts:
            return "-".join(word.capitalize() for word in parts[0].split("-"))
    return ".".join(parts) or "body"


def _validation_error(error: RequestValidationError) -> JSONResponse:
    problems = [
        {"field": _field(tuple(problem.get("loc", ()))), "message": problem.get("msg", "")}
        for problem in error.errors()
    ]
    first = problems[0] if problems else {"field": "body", "message": "invalid"}
    return envelope(
        422,
        ErrorCode.INVALID_INPUT.value,
        f"{first['field']}: {first['message']}",
        field=first["field"],
        errors=problems,
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        return envelope(error.status, error.code, error.message, **error.details)

    @app.exception_handler(MemoryError_)
    async def memory_error(_: Request, error: MemoryError_) -> JSONResponse:
        return _memory_error(error)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        return _validation_error(error)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return envelope(error.status_code, code, str(error.detail))

    @app.exception_handler(DBAPIError)
    async def database_error(_: Request, error: DBAPIError) -> JSONResponse:
        log.warning("database error: %s", type(error.orig).__name__)
        return envelope(503, ErrorCode.STORE_UNAVAILABLE.value, "the memory store is unavailable")

    @app.exception_handler(OSError)
    async def os_error(_: Request, error: OSError) -> JSONResponse:
        log.warning("service unreachable: %s", type(error).__name__)
        return envelope(503, ErrorCode.STORE_UNAVAILABLE.value, "a backing service is unreachable")

    @app.exception_handler(Exception)
    async def unexpected(_: Request, error: Exception) -> JSONResponse:
        # The type only: an exception's text may quote a value it was handed.
        log.error("unexpected %s", type(error).__name__)
        return envelope(500, ErrorCode.INTERNAL.value, "internal error")
