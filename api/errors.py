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

from api.wire_version import wire_major
from memory.embeddings.model import EmbeddingUnavailable
from schemas.errors import (
    CapacityExceeded,
    ErrorCode,
    InvalidInput,
    MemoryError_,
    MissingScope,
    TokenBudgetExceeded,
    VersionConflict,
)

log = logging.getLogger("agent_memory.api")

# v2's error codes are a closed registry (spec/v2/errors.json) or ``<org>.<code>``:
# ours that have a registered twin take it (with its status), the rest go out
# vendor-prefixed.
V2_REGISTERED: dict[str, tuple[str, int | None]] = {
    "invalid_input": ("validation_error", 400),
    "invalid_memory_ref": ("validation_error", 400),
    "validation_error": ("validation_error", 400),
    "unauthorized": ("unauthenticated", 401),
    "internal_error": ("internal_error", 500),
    "invalid_argument": ("validation_error", 400),
    "not_found": ("not_found", None),
    "forbidden": ("forbidden", None),
    "token_budget_exceeded": ("token_budget_exceeded", None),
    "id_tenant_mismatch": ("id_tenant_mismatch", None),
    "run_terminal": ("run_terminal", None),
    "unsupported_stream_mode": ("unsupported_stream_mode", None),
    "protocol_version_unsupported": ("protocol_version_unsupported", None),
    "protocol_version_mismatch": ("protocol_version_mismatch", None),
}
V2_VENDOR = "agent-memory-temporal"


def v2_code(status: int, code: str) -> tuple[int, str]:
    registered = V2_REGISTERED.get(code)
    if registered is None:
        return status, f"{V2_VENDOR}.{code}"
    name, fixed_status = registered
    return fixed_status or status, name


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
    ErrorCode.FORBIDDEN_SCOPE: 403,
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


def envelope(
    status: int, code: str, message: str, *, major: int | None = None, **details: Any
) -> JSONResponse:
    """The error body. On the v2 wire the envelope is closed (``{error, message,
    details?}``, a registered code or a vendor one): details move under ``details``."""
    if major == 2:
        status, code = v2_code(status, code)
        body: dict[str, Any] = {"error": code, "message": message}
        nested = dict(details.pop("details", None) or {})
        if details or nested:
            body["details"] = {**details, **nested}
        return JSONResponse(body, status_code=status)
    return JSONResponse({"error": code, "message": message, **details}, status_code=status)


def _memory_error(error: MemoryError_, major: int | None) -> JSONResponse:
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
    elif isinstance(error, MissingScope):
        # As the reference host answers: the scope under "details".
        details = {"details": error.details()}
    status = status_of(error.code)
    return envelope(status, error.code.value, message, major=major, **details)


def _field(location: tuple[Any, ...]) -> str:
    # ("body", "value", "total") -> "value.total"; ("header", "if-match") -> "If-Match".
    parts = [str(part) for part in location]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        kind, parts = parts[0], parts[1:]
        if kind == "header" and parts:
            return "-".join(word.capitalize() for word in parts[0].split("-"))
    return ".".join(parts) or "body"


def _problem(problem: dict[str, Any]) -> dict[str, str]:
    """One refused part of a request: its field and what is wrong with it. A body that is
    not JSON is the body's fault (its location is a character offset, not a field)."""
    location = tuple(problem.get("loc", ()))
    if problem.get("type") == "json_invalid":
        offset = location[-1] if location and isinstance(location[-1], int) else None
        where = f" at character {offset}" if offset is not None else ""
        return {"field": "body", "message": f"is not valid JSON{where}"}
    return {"field": _field(location), "message": problem.get("msg", "")}


def _validation_error(error: RequestValidationError, major: int | None) -> JSONResponse:
    problems = [_problem(problem) for problem in error.errors()]
    first = problems[0] if problems else {"field": "body", "message": "invalid"}
    return envelope(
        422,
        ErrorCode.INVALID_INPUT.value,
        f"{first['field']}: {first['message']}",
        major=major,
        field=first["field"],
        errors=problems,
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return envelope(
            error.status, error.code, error.message, major=wire_major(request), **error.details
        )

    @app.exception_handler(MemoryError_)
    async def memory_error(request: Request, error: MemoryError_) -> JSONResponse:
        return _memory_error(error, wire_major(request))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
        return _validation_error(error, wire_major(request))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return envelope(error.status_code, code, str(error.detail), major=wire_major(request))

    @app.exception_handler(DBAPIError)
    async def database_error(request: Request, error: DBAPIError) -> JSONResponse:
        log.warning("database error: %s", type(error.orig).__name__)
        return envelope(
            503,
            ErrorCode.STORE_UNAVAILABLE.value,
            "the memory store is unavailable",
            major=wire_major(request),
        )

    @app.exception_handler(EmbeddingUnavailable)
    async def embedding_error(request: Request, error: EmbeddingUnavailable) -> JSONResponse:
        # The message names the failure (status, timeout), never a text.
        log.warning("embedding model unavailable: %s", error)
        return envelope(
            503,
            ErrorCode.STORE_UNAVAILABLE.value,
            "the embedding model is unavailable; mode 'hybrid' or 'text' still answers",
            major=wire_major(request),
        )

    @app.exception_handler(OSError)
    async def os_error(request: Request, error: OSError) -> JSONResponse:
        log.warning("service unreachable: %s", type(error).__name__)
        return envelope(
            503,
            ErrorCode.STORE_UNAVAILABLE.value,
            "a backing service is unreachable",
            major=wire_major(request),
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        # The type only: an exception's text may quote a value it was handed.
        log.error("unexpected %s", type(error).__name__)
        return envelope(500, ErrorCode.INTERNAL.value, "internal error", major=wire_major(request))
