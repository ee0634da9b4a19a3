"""The checksum of an entry's content: what every derived index of the entry (its
vectors; term statistics and update links next) is keyed by, so a reader can tell an
index row made from the content the entry holds now from one made from older text."""

from __future__ import annotations

import hashlib


def content_checksum(content: str) -> str:
    """SHA-256 of the content's UTF-8 bytes, in hex (memory_entries.content_sha256)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
