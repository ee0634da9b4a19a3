"""SR-1 over every field an entry write stores, not only its content.

A secret written as a tag would otherwise land in memory_entries.tags, in the append-only
event log (lifecycle events carry tags) and in the MEMORY-INDEX tag histogram. The rule
per field, all through the one chokepoint (memory.redaction.write_redacted):

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

from memory.redaction import MemorySecretRegistry, write_redacted
from schemas.errors import InvalidInput
from schemas.input_rules import MAX_METADATA_BYTES
from schemas.memory_entry import Attribution

MAX_TAG_CHARS = 128
_HOLDS_SECRET = "must not contain a registered secret (identifiers are refused, not redacted)"


def refuse_secret(field: str, value: str | None, registry: MemorySecretRegistry | None) -> None:
    if value and registry is not None and registry.contains_secret(value):
        raise InvalidInput(field, _HOLDS_SECRET)


def refuse_secret_in_attribution(
    attribution: Attribution, registry: MemorySecretRegistry | None
) -> None:
    for field, value in (
        ("attribution.agentId", attribution.agent_id),
        ("attribution.nodeId", attribution.node_id),
        ("attribution.runId", attribution.run_id),
    ):
        refuse_secret(field, value, registry)


def redact_tags(tags: Iterable[str], registry: MemorySecretRegistry | None) -> list[str]:
    redacted: list[str] = []
    for position, tag in enumerate(tags):
        clean = write_redacted(tag, registry)
        if len(clean) > MAX_TAG_CHARS:
            raise InvalidInput(
                "tags",
                f"item {position}: longer than {MAX_TAG_CHARS} characters once its "
                "registered secret is redacted",
            )
        redacted.append(clean)
    return list(dict.fromkeys(redacted))


def redact_metadata(
    metadata: Mapping[str, Any], registry: MemorySecretRegistry | None
) -> dict[str, Any]:
    if registry is None:
        return dict(metadata)
    clean = _redact_object(metadata, "metadata", registry)
    size = len(json.dumps(clean, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(
            "metadata",
            f"is {size} bytes once registered secrets are redacted, over the limit of "
            f"{MAX_METADATA_BYTES} bytes",
        )
    return clean


def _redact_object(
    value: Mapping[str, Any], where: str, registry: MemorySecretRegistry
) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for position, (key, item) in enumerate(value.items()):
        # Named by position: the key is the part that holds the secret.
        refuse_secret(f"{where}.<key {position}>", key, registry)
        clean[key] = _redact_value(item, f"{where}.<key {position}>", registry)
    return clean


def _redact_value(value: Any, where: str, registry: MemorySecretRegistry) -> Any:
    if isinstance(value, str):
        return write_redacted(value, registry)
    if isinstance(value, Mapping):
        return _redact_object(value, where, registry)
    if isinstance(value, list | tuple):
        return [_redact_value(item, f"{where}[{i}]", registry) for i, item in enumerate(value)]
    return value
