"""The memoryRef grammar and the one parser every query goes through (CTI-1).

Grammar (documented in docs/architecture.md)::

    mem://<tenant>/<agent>[/<scope>]

Each segment is 1-64 characters of ``[A-Za-z0-9_-]`` plus inner dots, must start with a
letter or digit, and cannot be ``.`` or ``..``. The whole ref is at most 512 bytes. The
tenant is the first segment: a ref names exactly one tenant, and every row in the store
carries that tenant, so a query built from a parsed ref cannot reach another tenant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from schemas.errors import ErrorCode, InvalidInput, InvalidMemoryRef

SCHEME = "mem://"
MAX_REF_BYTES = 512
MAX_SEGMENT_CHARS = 64
_SEGMENT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class MemoryRef:
    tenant: str
    agent: str
    scope: str | None = None

    def __str__(self) -> str:
        tail = f"/{self.scope}" if self.scope else ""
        return f"{SCHEME}{self.tenant}/{self.agent}{tail}"


def checked_ref_text(raw: object) -> str:
    """The rules every memoryRef string obeys, canonical or opaque
    (memory/keyed_ids/opaque_refs.py): a string of at most MAX_REF_BYTES with no NUL or
    control character."""
    if not isinstance(raw, str):
        raise InvalidMemoryRef("must be a string")
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_REF_BYTES:
        raise InvalidMemoryRef(f"must be at most {MAX_REF_BYTES} bytes")
    if _CONTROL.search(raw):
        raise InvalidMemoryRef("must not contain NUL or control characters")
    return raw


def parse_memory_ref(raw: object) -> MemoryRef:
    """Parse ``raw`` or raise InvalidMemoryRef naming the broken rule (never the input).
    An already parsed MemoryRef passes through unchanged (parse once, pass it down)."""
    if isinstance(raw, MemoryRef):
        return raw
    raw = checked_ref_text(raw)
    if not raw.startswith(SCHEME):
        raise InvalidMemoryRef(f"must start with {SCHEME}")
    segments = raw[len(SCHEME) :].split("/")
    if not 2 <= len(segments) <= 3:
        raise InvalidMemoryRef("must have the shape mem://<tenant>/<agent>[/<scope>]")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise InvalidMemoryRef("segments must be non-empty and not '.' or '..'")
        if len(segment) > MAX_SEGMENT_CHARS or not _SEGMENT.fullmatch(segment):
            raise InvalidMemoryRef(
                f"segments must be 1-{MAX_SEGMENT_CHARS} characters of letters, digits, "
                "'_', '-' and inner '.'"
            )
    return MemoryRef(*segments)


def parse_segment(raw: object, field: str) -> str:
    """One memoryRef segment on its own (a tenant, an agent id), checked by the same
    grammar, or InvalidInput naming ``field`` and the rule."""
    if not isinstance(raw, str):
        raise InvalidInput(field, "must be a string")
    if len(raw) > MAX_SEGMENT_CHARS or raw in (".", "..") or not _SEGMENT.fullmatch(raw):
        raise InvalidInput(
            field,
            f"must be 1-{MAX_SEGMENT_CHARS} characters of letters, digits, '_', '-' and "
            "inner '.', starting with a letter or digit",
        )
    return raw


def try_parse_memory_ref(raw: object) -> MemoryRef | None:
    """Read paths use this: a malformed ref resolves to nothing rather than an error."""
    try:
        return parse_memory_ref(raw)
    except InvalidMemoryRef:
        return None


def _validated_ref(value: object) -> MemoryRef:
    if isinstance(value, MemoryRef):
        return value
    try:
        return parse_memory_ref(value)
    except InvalidMemoryRef as error:
        # Our code as the pydantic error type, so the Temporal converter and the CLI
        # report invalid_memory_ref; the rule only, never the value.
        raise PydanticCustomError(
            ErrorCode.INVALID_MEMORY_REF.value, "{rule}", {"rule": error.rule}
        ) from None


# A memoryRef inside a wire model: parsed once when the model is validated (a workflow
# input decoded from history, a CLI argument), typed MemoryRef from then on, and written
# back as its string form.
MemoryRefField = Annotated[
    MemoryRef,
    PlainValidator(_validated_ref),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": MAX_REF_BYTES,
            "pattern": r"^mem://[A-Za-z0-9][^/]*/[A-Za-z0-9][^/]*(/[A-Za-z0-9][^/]*)?$",
            "description": "mem://<tenant>/<agent>[/<scope>]",
        }
    ),
]
