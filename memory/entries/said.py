"""When and by whom an entry's content was said, if the writer says so:
``metadata.saidAt`` and ``metadata.saidBy``.

An agent that stores a conversation after the fact (a session's turns written that
night, a transcript imported a month later) knows when each thing was said and who said
it; the store only knows when it was written and by which caller. Both are read at the
write boundary into columns (migration 0025): ``said_at`` tells search the entries said
in one sitting (memory/search/context.py) and, with ``said_by``, is a filter of every
search ("what did Melanie say about ...", "what was said in May"). An entry without
``saidAt`` was said when it was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import ColumnElement, FromClause, func

from schemas.errors import InvalidInput
from schemas.memory_entry import SaidBy

SAID_AT_KEY = "saidAt"
SAID_BY_KEY = "saidBy"
_SAID_BY = TypeAdapter(SaidBy)
_SAID_AT_RULE = "must be an ISO-8601 instant with a UTC offset, e.g. 2023-05-08T13:56:00Z"
_SAID_BY_RULE = "must be a name of 1 to 200 characters, without control characters"


def said_or_written(table: FromClause) -> ColumnElement[datetime]:
    """When an entry of ``table`` (memory_entries or an alias of it) was said: the
    writer's metadata.saidAt, else when it was written."""
    return func.coalesce(table.c.said_at, table.c.created_at)


def said_columns(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The ``said_at`` and ``said_by`` columns of an entry with ``metadata``: None where
    the writer said nothing; InvalidInput naming the field where it said something else
    than an instant or a name."""
    return {"said_at": said_at_of(metadata), "said_by": said_by_of(metadata)}


def said_at_of(metadata: Mapping[str, Any]) -> datetime | None:
    raw = metadata.get(SAID_AT_KEY)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _SAID_AT_RULE)
    try:
        instant = datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _SAID_AT_RULE) from None
    if instant.tzinfo is None:
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _SAID_AT_RULE)
    return instant


def said_by_of(metadata: Mapping[str, Any]) -> str | None:
    raw = metadata.get(SAID_BY_KEY)
    if raw is None:
        return None
    try:
        return _SAID_BY.validate_python(raw, strict=True)
    except ValidationError:
        raise InvalidInput(f"metadata.{SAID_BY_KEY}", _SAID_BY_RULE) from None
