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


def leaks(history_json: str, forbidden: set[str]) -> list[str]:
    text = searchable_text(history_json)
    return sorted(s for s in forbidden if s in text)
