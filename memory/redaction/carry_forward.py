"""SR-1 carry-forward of secret markers other systems wrote (RFC 0012 §D): derived
content (a distillation's sources) must not carry a BYOK reference or a foreign marker
as it is: a BYOK reference names key material, and a marker that is not ours is not
ours to trust. A write stores what it is given; only derived content goes through here.
"""

from __future__ import annotations

import re

from memory.redaction.chokepoint import marker

FOREIGN_MARKER = re.compile(r"\[BYOK:[^\]\r\n]{1,256}\]|<REDACTED:[^>\r\n]{1,256}>")


def carry_forward(text: str) -> str:
    """For derived content only (a distillation's sources; a write stores what it is
    given): every foreign secret marker becomes ``[REDACTED:carry-forward-<n>]``, the
    same text the same marker, numbered in order of first appearance."""
    seen: dict[str, str] = {}

    def canonical(match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in seen:
            seen[found] = marker(f"carry-forward-{len(seen) + 1}")
        return seen[found]

    return FOREIGN_MARKER.sub(canonical, text)
