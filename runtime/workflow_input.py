"""Workflow arguments checked before any workflow code runs.

The data converter (runtime/converter.py) fails a run whose JSON input does not
validate. What it cannot see is a start with the wrong number of arguments (the
Temporal CLI without ``--input``, or with two) or with a payload that decodes to
something other than the input model (``null`` sent as binary/null by a Python client,
raw bytes, a protobuf): the SDK then calls the workflow with the wrong arguments, the
workflow *task* fails, and it is retried forever -- the run stays RUNNING and a schedule
with overlap policy Skip skips every later tick. This interceptor fails such a run at
once instead, with the same non-retryable ``invalid_input`` naming the field ``input``,
and never quotes what was sent.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any

from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from schemas.errors import ErrorCode


def _parameter_types(run_fn: Callable[..., Any]) -> list[Any]:
    """The annotated types of the run method's parameters after ``self``."""
    hints = typing.get_type_hints(run_fn)
    names = list(inspect.signature(run_fn).parameters)[1:]
    return [hints.get(name, Any) for name in names]


def _invalid(model: str, rule: str) -> ApplicationError:
    return ApplicationError(
        f"{model} is invalid: input: {rule}",
        {"fields": ["input"]},
        type=ErrorCode.INVALID_INPUT.value,
        non_retryable=True,
    )


def check_workflow_arguments(run_fn: Callable[..., Any], args: Sequence[Any]) -> None:
    """Raise a non-retryable ApplicationError unless ``args`` are what ``run_fn``
    takes: as many as it has parameters, each an instance of its annotated class."""
    expected = _parameter_types(run_fn)
    names = [getattr(t, "__name__", "input") for t in expected]
    model = names[0] if len(names) == 1 else "input"
    if len(args) != len(expected):
        raise _invalid(
            model,
            f"the workflow takes {len(expected)} argument(s), one JSON object; "
            f"it was started with {len(args)}",
        )
    for value, kind in zip(args, expected, strict=True):
        if isinstance(kind, type) and not isinstance(value, kind):
            # The type's name only: never the value.
            raise _invalid(model, f"must be a JSON object, not {type(value).__name__}")


class WorkflowInputInterceptor(Interceptor):
    """Worker interceptor: see the module docstring."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _CheckedInbound


class _CheckedInbound(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        check_workflow_arguments(input.run_fn, input.args)
        return await super().execute_workflow(input)
