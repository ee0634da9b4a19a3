"""Input rules every stored value must pass, shared by the wire models: text PostgreSQL
can hold (no NUL, no lone surrogates) and metadata that is a bounded JSON object.

Each rule raises a PydanticCustomError with a stable ``type`` (the names below) so a
caller can tell which rule broke, and a message naming the rule and the limit. None of
them quotes the value: it may be memory content or a secret (WireModel also hides the
input), and the store repeats these messages in InvalidInput.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from schemas.errors import InvalidInput

# Metadata is a small JSON object stored beside the entry (JSONB): at most this many bytes
# as compact UTF-8 JSON, and at most this many levels of objects/arrays (the top-level
# object is level 1). Integers must fit in 64 bits, the widest most JSON readers keep.
MAX_METADATA_BYTES = 16 * 1024
MAX_METADATA_DEPTH = 16
MIN_METADATA_INT = -(2**63)
MAX_METADATA_INT = 2**63 - 1

TEXT_NUL = "text_nul"
TEXT_SURROGATE = "text_surrogate"
METADATA_NOT_JSON = "metadata_not_json"
METADATA_KEY_TYPE = "metadata_key_type"
METADATA_NUMBER_NOT_FINITE = "metadata_number_not_finite"
METADATA_INTEGER_RANGE = "metadata_integer_range"
METADATA_TOO_DEEP = "metadata_too_deep"
METADATA_TOO_LARGE = "metadata_too_large"

_SURROGATE = re.compile("[\ud800-\udfff]")
# A metadata key is named in an error only when it looks like a field name; any other key
# (free text, possibly content) is named by its position instead.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,39}")


def text_problem(value: str) -> tuple[str, str] | None:
    """(error type, rule) when PostgreSQL text cannot hold ``value``, else None.

    Text is stored as UTF-8 without NUL (jsonb rejects \\u0000 too), and a Python string
    may hold lone surrogates ('\\ud800') that have no UTF-8 encoding at all."""
    if "\x00" in value:
        return TEXT_NUL, "must not contain NUL characters (U+0000)"
    if not value.isascii() and _SURROGATE.search(value):
        return TEXT_SURROGATE, "must be valid Unicode: no surrogate code points (U+D800-U+DFFF)"
    return None


def _check_text(value: Any) -> Any:
    # Runs before the str validation and its pattern: a precise rule beats "should match
    # pattern", and pydantic would otherwise report surrogates as "not a valid string".
    if isinstance(value, str) and (problem := text_problem(value)) is not None:
        raise PydanticCustomError(*problem)
    return value


# The text rules for any str field: Annotated[str, ..., CHECK_TEXT].
CHECK_TEXT = BeforeValidator(_check_text)
SafeText = Annotated[str, CHECK_TEXT]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank_text", "must hold some text, not nothing or only spaces")
    return value


# What an entry says: an empty or blank entry is no memory.
EntryText = Annotated[str, CHECK_TEXT, AfterValidator(_not_blank)]


class _Broken(Exception):
    """A metadata rule broken at ``where`` (a path such as metadata.source[2])."""

    def __init__(self, error_type: str, where: str, rule: str) -> None:
        super().__init__(rule)
        self.error_type, self.where, self.rule = error_type, where, rule


def _check_json(value: Any, where: str, depth: int) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not MIN_METADATA_INT <= value <= MAX_METADATA_INT:
            raise _Broken(
                METADATA_INTEGER_RANGE, where, "integers must fit in 64 bits (-2^63 to 2^63-1)"
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _Broken(METADATA_NUMBER_NOT_FINITE, where, "numbers must be finite")
    elif isinstance(value, str):
        if (problem := text_problem(value)) is not None:
            raise _Broken(problem[0], where, problem[1])
    elif isinstance(value, dict | list | tuple):
        if depth > MAX_METADATA_DEPTH:
            # Named as a whole: the path would be as long as the limit. This also ends a
            # structure that contains itself.
            raise _Broken(
                METADATA_TOO_DEEP,
                "metadata",
                f"objects and arrays must nest at most {MAX_METADATA_DEPTH} levels deep",
            )
        if isinstance(value, dict):
            _check_object(value, where, depth)
        else:
            for index, item in enumerate(value):
                _check_json(item, f"{where}[{index}]", depth + 1)
    else:
        raise _Broken(
            METADATA_NOT_JSON,
            where,
            "values must be JSON: an object, array, string, number, boolean or null",
        )


def _check_object(value: dict[Any, Any], where: str, depth: int) -> None:
    for position, (key, item) in enumerate(value.items()):
        by_position = f"{where}.<key {position}>"
        if not isinstance(key, str):
            raise _Broken(METADATA_KEY_TYPE, by_position, "keys must be strings")
        if (problem := text_problem(key)) is not None:
            raise _Broken(problem[0], by_position, f"keys {problem[1]}")
        named = f"{where}.{key}" if _PLAIN_KEY.fullmatch(key) else by_position
        _check_json(item, named, depth + 1)


def _json_size(value: dict[str, Any]) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _check_metadata(value: Any) -> Any:
    """Metadata must be a JSON object PostgreSQL's jsonb accepts, within the limits.

    Runs before pydantic's own dict validation so that keys are checked by the same
    rules (and named the same way) at every level."""
    if not isinstance(value, dict):
        return value  # pydantic reports the type
    try:
        _check_object(value, "metadata", 1)
    except _Broken as broken:
        raise PydanticCustomError(
            broken.error_type, "{where}: {rule}", {"where": broken.where, "rule": broken.rule}
        ) from None
    size = _json_size(value)
    if size > MAX_METADATA_BYTES:
        raise PydanticCustomError(
            METADATA_TOO_LARGE,
            "{where}: {rule}",
            {
                "where": "metadata",
                "rule": f"is {size} bytes as compact UTF-8 JSON, "
                f"over the limit of {MAX_METADATA_BYTES} bytes",
            },
        )
    return value


Metadata = Annotated[
    dict[str, Any],
    BeforeValidator(_check_metadata),
    Field(
        description=(
            f"A JSON object of at most {MAX_METADATA_BYTES} bytes as compact UTF-8 JSON, "
            f"nested at most {MAX_METADATA_DEPTH} levels; numbers finite, integers within "
            "64 bits, no NUL characters."
        )
    ),
]


class InvalidField(InvalidInput):
    """InvalidInput raised for a broken validation rule; ``error_type`` is the rule's
    stable name (TEXT_NUL, METADATA_TOO_LARGE, ... or pydantic's own error type)."""

    def __init__(self, field: str, rule: str, error_type: str) -> None:
        super().__init__(field, rule)
        self.error_type = error_type


def invalid_input(
    error: ValidationError, model: type[BaseModel] | None = None, *, field: str = "input"
) -> InvalidField:
    """The first problem of ``error`` as InvalidInput naming the field and the rule.

    ``model`` names the field by its wire name; a bare value (a TypeAdapter) is named by
    ``field``. Built from pydantic's locations and messages only, never from the input;
    locations may hold caller data (dict keys), so only field names and positions are used.
    """
    problem = error.errors(include_url=False, include_input=False)[0]
    location = problem["loc"]
    context = problem.get("ctx") or {}
    if "where" in context:  # the metadata rules name their path themselves
        return InvalidField(str(context["where"]), str(context["rule"]), problem["type"])
    if model is not None and location:
        field = _wire_name(model, location[0])
    rule = problem["msg"]
    if len(location) == 2 and isinstance(location[1], int):  # an item of a tuple field
        rule = f"item {location[1]}: {rule}"
    return InvalidField(field, rule, problem["type"])


def _wire_name(model: type[BaseModel], name: int | str) -> str:
    info = model.model_fields.get(name) if isinstance(name, str) else None
    if info is None:
        return "input"  # not a field of ours (an unknown key): never echo it
    return info.alias or to_camel(str(name))
