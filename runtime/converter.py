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

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import temporalio.api.common.v1
from pydantic import ValidationError
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)
from temporalio.exceptions import ApplicationError, FailureError

from runtime.payload_codec import EncryptionCodec
from runtime.payload_keys import cached_keyring
from runtime.settings import Settings
from schemas.errors import ErrorCode

MAX_PROBLEMS = 5
MAX_FIELD_CHARS = 64
# An unknown key is named (a misspelt "tokenbudget") only when it looks like a field
# name; any other key is input text (it may be content or a secret) and is not quoted.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,39}")
UNKNOWN_KEY = "<unknown key>"


def _field(location: tuple[int | str, ...], error_type: str = "") -> str:
    parts = [str(part) for part in location]
    if error_type == "extra_forbidden" and parts and not _PLAIN_KEY.fullmatch(parts[-1]):
        parts[-1] = UNKNOWN_KEY
    name = ".".join(parts) or "input"
    return name if len(name) <= MAX_FIELD_CHARS else name[:MAX_FIELD_CHARS] + "..."


def invalid_payload_error(error: ValidationError, type_hint: Any) -> ApplicationError:
    """A content-free, non-retryable ApplicationError naming each broken field."""
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    fields = [_field(problem["loc"], problem["type"]) for problem in problems[:MAX_PROBLEMS]]
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
    """The SDK's default converters with JSON handled by ValidatingJSONPayloadConverter.

    A payload of an encoding none of them reads fails the workflow like invalid JSON
    does (the SDK's KeyError would fail the workflow task, retried forever)."""

    def __init__(self) -> None:
        json_converter = ValidatingJSONPayloadConverter()
        super().__init__(
            *(
                json_converter if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )

    def from_payloads(
        self,
        payloads: Sequence[temporalio.api.common.v1.Payload],
        type_hints: list[type] | None = None,
    ) -> list[Any]:
        for payload in payloads:
            if payload.metadata.get("encoding") not in self.converters:
                raise _undecodable("in an encoding this worker does not read")
        try:
            return super().from_payloads(payloads, type_hints)
        except FailureError:
            raise  # ours (a ValidationError above): already names the field
        except Exception:  # e.g. a json/protobuf payload that is not that message
            raise _undecodable("that does not decode in its encoding") from None


def _undecodable(why: str) -> ApplicationError:
    return ApplicationError(
        f"input: a payload {why} (send one JSON object, json/plain)",
        {"fields": ["input"]},
        type=ErrorCode.INVALID_INPUT.value,
        non_retryable=True,
    )


data_converter = DataConverter(payload_converter_class=ValidatingPayloadConverter)


def payload_codec_for(settings: Settings) -> EncryptionCodec | None:
    """The encrypting codec when AGENT_MEMORY_PAYLOAD_KEYS_FILE is set, else None."""
    if not settings.payload_keys_file:
        return None
    return EncryptionCodec(cached_keyring(settings.payload_keys_file))


def data_converter_for(settings: Settings) -> DataConverter:
    """What every client and worker of this deployment uses (runtime/client.py connect,
    the worker, the API, memoryctl): ``data_converter``, plus, with a payload keys file,
    the encrypting codec and the failure converter that moves failure messages and stack
    traces into an (encrypted) payload instead of leaving them in clear."""
    codec = payload_codec_for(settings)
    if codec is None:
        return data_converter
    return dataclasses.replace(
        data_converter,
        payload_codec=codec,
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
