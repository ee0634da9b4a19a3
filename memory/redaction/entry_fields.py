"""SR-1 over every field an entry write stores, not only its content.

A secret written as a tag would otherwise land in memory_entries.tags, in the append-only
event log (lifecycle events carry tags) and in the MEMORY-INDEX tag histogram. The rule
per field, all through the one chokepoint (memory.redaction.chokepoint.write_redacted):

- content, tags and metadata string values are redacted (``[REDACTED:<secretId>]``);
  a tag that no longer fits its 128 characters once redacted is refused;
- identifiers (id, namespace, key, subject, attribution ids) and metadata keys are
  refused when they contain a registered secret: they address entries, and a marker in
  an address would silently merge or split them. The error names the field, never the
  value or the secret.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from schemas.errors import InvalidInput
from schemas.input_rules import MAX_METADATA_BYTES
from schemas.memory_entry import Attribution

MAX_TAG_CHARS = 128
_HOLDS_SECRET = "must not contain a registered secret (identifiers are refused, not redacted)"


def refuse_secret(field: str, value: str | None, secrets: MemorySecretRegistry | None) -> None:
    if value and secrets is not None and secrets.contains_secret(value):
        raise InvalidInput(field, _HOLDS_SECRET)


def refuse_secret_in_attribution(
    attribution: Attribution, secrets: MemorySecretRegistry | None
) -> None:
    for field, value in (
        ("attribution.agentId", attribution.agent_id),
        ("attribution.nodeId", attribution.node_id),
        ("attribution.runId", attribution.run_id),
    ):
        refuse_secret(field, value, secrets)


def redact_tags(tags: Iterable[str], secrets: MemorySecretRegistry | None) -> list[str]:
    redacted: list[str] = []
    for position, tag in enumerate(tags):
        clean = write_redacted(tag, secrets)
        if len(clean) > MAX_TAG_CHARS:
            raise InvalidInput(
                "tags",
                f"item {position}: longer than {MAX_TAG_CHARS} characters once its "
                "registered secret is redacted",
            )
        redacted.append(clean)
    return list(dict.fromkeys(redacted))


def redact_metadata(
    metadata: Mapping[str, Any], secrets: MemorySecretRegistry | None
) -> dict[str, Any]:
    if secrets is None:
        return dict(metadata)
    clean = _redact_object(metadata, "metadata", secrets)
    size = len(json.dumps(clean, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(
            "metadata",
            f"is {size} bytes once registered secrets are redacted, over the limit of "
            f"{MAX_METADATA_BYTES} bytes",
        )
    return clean


def _redact_object(
    value: Mapping[str, Any], where: str, secrets: MemorySecretRegistry
) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for position, (key, item) in enumerate(value.items()):
        # Named by position: the key is the part that holds the secret.
        refuse_secret(f"{where}.<key {position}>", key, secrets)
        clean[key] = _redact_value(item, f"{where}.<key {position}>", secrets)
    return clean


def _redact_value(value: Any, where: str, secrets: MemorySecretRegistry) -> Any:
    if isinstance(value, str):
        return write_redacted(value, secrets)
    if isinstance(value, Mapping):
        return _redact_object(value, where, secrets)
    if isinstance(value, list | tuple):
        return [_redact_value(item, f"{where}[{i}]", secrets) for i, item in enumerate(value)]
    return value
