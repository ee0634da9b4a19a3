"""Audit workflow histories for memory content.

Workflows must carry ids, counts and checksums only. ``searchable_text`` turns a history
(JSON, as `temporal workflow show -o json` or WorkflowHistory.to_json() give it) into
every string it holds plus every payload's base64 data decoded, so a secret cannot hide
inside an encoded payload; ``leaks`` lists which forbidden strings occur. The tests and
the distillation benchmark use it; hosts can run it over their own histories.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def _walk(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        data = node.get("data")
        if isinstance(data, str) and "metadata" in node:
            try:
                out.append(base64.b64decode(data).decode("utf-8", "replace"))
            except (binascii.Error, ValueError):
                out.append(data)
        for value in node.values():
            _walk(value, out)
    elif isinstance(node, list):
        for value in node:
            _walk(value, out)
    elif isinstance(node, str):
        out.append(node)


def searchable_text(history_json: str) -> str:
    parts: list[str] = []
    _walk(json.loads(history_json), parts)
    return "\n".join(parts)


# Forbidden strings at least this long are found through their first WINDOW characters:
# one pass over the text with set look-ups, instead of one scan of the text per string
# (a test session forbids tens of thousands of entry texts).
WINDOW = 16


class ForbiddenTexts:
    """A set of strings to look for in many texts; build it once, call ``found_in``."""

    def __init__(self, forbidden: set[str]) -> None:
        self.short = sorted(s for s in forbidden if 0 < len(s) < WINDOW)
        self.by_prefix: dict[str, list[str]] = {}
        for s in forbidden:
            if len(s) >= WINDOW:
                self.by_prefix.setdefault(s[:WINDOW], []).append(s)

    def found_in(self, text: str) -> list[str]:
        found = {s for s in self.short if s in text}
        prefixes = self.by_prefix
        for start in range(len(text) - WINDOW + 1):
            candidates = prefixes.get(text[start : start + WINDOW])
            if candidates:
                found.update(s for s in candidates if text.startswith(s, start))
        return sorted(found)

    def leaked_by(self, history_json: str) -> list[str]:
        return self.found_in(searchable_text(history_json))


def leaks(history_json: str, forbidden: set[str]) -> list[str]:
    return ForbiddenTexts(forbidden).leaked_by(history_json)
