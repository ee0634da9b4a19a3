"""The ids new entries get: sortable by the time they were written, unguessable."""

from __future__ import annotations

import secrets
import time


def new_entry_id() -> str:
    """Sortable, unguessable ids: 48-bit millisecond time + 80 random bits."""
    return f"m{int(time.time() * 1000):012x}{secrets.token_hex(10)}"
