"""When an entry's content was said, if the writer says so: ``metadata.saidAt``.

An agent that stores a conversation after the fact (a session's turns written that
night, a transcript imported a month later) knows when each thing was said; the store
only knows when it was written. ``saidAt`` is read at the write boundary into the
``said_at`` column (migration 0025), which search uses to tell the entries said in one
sitting (memory/search/context.py); an entry without one was said when it was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from schemas.errors import InvalidInput

SAID_AT_KEY = "saidAt"
_RULE = "must be an ISO-8601 instant with a UTC offset, e.g. 2023-05-08T13:56:00Z"


def said_at_of(metadata: Mapping[str, Any]) -> datetime | None:
    """``metadata.saidAt`` as an aware instant, None when absent; InvalidInput naming
    the field when it is there and is no instant."""
    raw = metadata.get(SAID_AT_KEY)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _RULE)
    try:
        instant = datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _RULE) from None
    if instant.tzinfo is None:
        raise InvalidInput(f"metadata.{SAID_AT_KEY}", _RULE)
    return instant
