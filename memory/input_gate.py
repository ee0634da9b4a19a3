"""The input gate: every value a caller hands the store passes here before any SQL runs.

A bad value becomes InvalidInput naming the field and the rule (never the value), never
a driver error that may quote the statement's data. Models are re-validated because a
caller may have built them with model_construct or mutated them. Reads answer "nothing
there" for a value no valid entry can hold (an id with NUL, a lone surrogate) instead of
raising.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import BaseModel, StringConstraints, TypeAdapter, ValidationError

from schemas.errors import InvalidInput
from schemas.input_rules import CHECK_TEXT, invalid_input
from schemas.memory_entry import EntryId, MemoryQuery, Name, Tag, Tier

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
ENTRY_ID: TypeAdapter[str] = TypeAdapter(EntryId)
NAME: TypeAdapter[str] = TypeAdapter(Name)
PASS_ID: TypeAdapter[str] = TypeAdapter(
    Annotated[str, StringConstraints(pattern=r"^cp-[0-9a-f]{20}$")]
)
TAG: TypeAdapter[str] = TypeAdapter(Tag)
# Snapshot ids and event types have no grammar of their own: any text PostgreSQL can hold.
TEXT_ID: TypeAdapter[str] = TypeAdapter(
    Annotated[str, StringConstraints(min_length=1, max_length=512), CHECK_TEXT]
)
TIER: TypeAdapter[Tier] = TypeAdapter(Tier)
# The fields a read matches entries by: a value no entry can hold there finds nothing.
LIST_MATCH = frozenset({"tag"})
QUERY_MATCH = frozenset(
    {"tagsAll", "tagsAny", "tier", "namespace", "subject", "key", "namespacePrefix"}
)


def checked(model: type[M], value: object) -> M:
    """``value`` validated as ``model``, or InvalidInput naming the first broken rule."""
    data = value.__dict__ if isinstance(value, BaseModel) else value
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise invalid_input(error, model) from None


def checked_value(adapter: TypeAdapter[T], value: object, field: str, strict: bool = True) -> T:
    try:
        return adapter.validate_python(value, strict=strict)
    except ValidationError as error:
        raise invalid_input(error, field=field) from None


def possible(adapter: TypeAdapter[str], value: object) -> bool:
    """Could a stored row hold ``value`` (an id, a namespace, a key)?"""
    try:
        adapter.validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def read_filter(model: type[M], value: object, matched_by: frozenset[str]) -> M | None:
    """A read's options: None when a field entries are matched by holds a value no entry
    can hold (the read finds nothing); any other bad value (a limit) is InvalidInput."""
    try:
        return checked(model, value)
    except InvalidInput as error:
        if error.field in matched_by:
            return None
        raise


def read_query(query: object) -> MemoryQuery | None:
    """A query's filters, or None when it can match nothing (see read_filter). tagsAny is
    an OR: a tag no entry can carry drops out, and only when none is left does the
    query match nothing (an empty tagsAny would mean "any tags at all")."""
    data = dict(query.__dict__) if isinstance(query, BaseModel) else query
    if isinstance(data, dict) and isinstance(data.get("tags_any"), tuple | list):
        kept = tuple(tag for tag in data["tags_any"] if possible(TAG, tag))
        if data["tags_any"] and not kept:
            return None
        data["tags_any"] = kept
    return read_filter(MemoryQuery, data, QUERY_MATCH)


def checked_int(field: str, value: object, low: int, high: int) -> int:
    # bool is an int subclass; a flag passed as a count is a caller bug, not a count.
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidInput(field, f"must be an integer from {low} to {high}")
    return value
