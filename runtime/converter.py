"""The data converter every client and worker uses: pydantic JSON, plus one rule for
payloads that do not validate.

With the plain pydantic converter, a workflow input that fails validation (tokenBudget
0, a misspelt key, memoryRef 42) raises inside the SDK's argument decoding, which fails
the *workflow task*: the task retries forever, the run stays RUNNING, and a schedule
with overlap policy Skip skips every later tick. Here a ValidationError becomes a
non-retryable ApplicationError instead, which the SDK lets through to fail the
*workflow*: the run is FAILED within seconds, names the field and the rule in
`temporal workflow describe` and the UI, and the schedule's next tick runs.

The message is built from pydantic's error locations and rules only (wire models also
set hide_input_in_errors), so a rejected value never reaches history.
"""

from __future__ import annotations

from typing import Any

import temporalio.api.common.v1
from pydantic import ValidationError
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)
from temporalio.exceptions import ApplicationError

from schemas.errors import ErrorCode

MAX_PROBLEMS = 5
MAX_FIELD_CHARS = 64


def _field(location: tuple[int | str, ...]) -> str:
    name = ".".join(str(part) for part in location) or "input"
    return name if len(name) <= MAX_FIELD_CHARS else name[:MAX_FIELD_CHARS] + "..."


def invalid_payload_error(error: ValidationError, type_hint: Any) -> ApplicationError:
    """A content-free, non-retryable ApplicationError naming each broken field."""
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    fields = [_field(problem["loc"]) for problem in problems[:MAX_PROBLEMS]]
    rules = [f"{field}: {problem['msg']}" for field, problem in zip(fields, problems, strict=False)]
    if len(problems) > MAX_PROBLEMS:
        rules.append(f"and {len(problems) - MAX_PROBLEMS} more")
    # A rule we raise ourselves (PydanticCustomError with one of our codes, such as the
    # memoryRef grammar) keeps its code; everything else is invalid_input.
    codes = {str(problem["type"]) for problem in problems}
    code = next((c for c in ErrorCode if c.value in codes), ErrorCode.INVALID_INPUT)
    model = getattr(type_hint, "__name__", "input")
    return ApplicationError(
        f"{model} is invalid: " + "; ".join(rules),
        {"fields": fields},
        type=code.value,
        non_retryable=True,
    )


class ValidatingJSONPayloadConverter(PydanticJSONPlainPayloadConverter):
    def from_payload(
        self,
        payload: temporalio.api.common.v1.Payload,
        type_hint: type | None = None,
    ) -> Any:
        try:
            return super().from_payload(payload, type_hint)
        except ValidationError as error:
            raise invalid_payload_error(error, type_hint) from None


class ValidatingPayloadConverter(CompositePayloadConverter):
    """The SDK's default converters with JSON handled by ValidatingJSONPayloadConverter."""

    def __init__(self) -> None:
        json_converter = ValidatingJSONPayloadConverter()
        super().__init__(
            *(
                json_converter if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


data_converter = DataConverter(payload_converter_class=ValidatingPayloadConverter)
