"""Lists bound as one PostgreSQL array parameter.

``column.in_(values)`` binds one parameter per value, and asyncpg refuses a statement
with more than 32,767: a forget by tag or a consolidation pass over 100k entries would
fail. ``column == any_(texts("ids", values))`` and ``unnest(:ids)`` bind the whole list
as one text[] instead, whatever its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import BindParameter, Text, bindparam
from sqlalchemy.dialects.postgresql import ARRAY


def texts(name: str, values: Sequence[str | None]) -> BindParameter[Any]:
    """A None element binds as NULL (unnest gives it back as NULL)."""
    return bindparam(name, list(values), type_=ARRAY(Text))
