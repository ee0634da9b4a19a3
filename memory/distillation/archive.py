"""The distilled archive: RFC 8785 (JCS) canonical JSON, addressed by its SHA-256.

The document holds only what the sources and budget determine (no timestamps, run ids
or hostnames), so the same sources and budget always give byte-identical bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import rfc8785

from memory.distillation.packing import DistillationOutcome
from memory.tokens import TOKENIZER_NAME

ARCHIVE_FORMAT = "agent-memory-archive/1"


@dataclass(frozen=True, slots=True)
class Archive:
    body: bytes
    checksum: str

    @property
    def output_id(self) -> str:
        """The distilled entry's id: derived from the archive, so a retry reuses it."""
        return f"dist-{self.checksum[:32]}"


def build_archive(
    memory_ref: str, token_budget: int, outcome: DistillationOutcome, distiller: str
) -> Archive:
    document: dict[str, Any] = {
        "archiveFormat": ARCHIVE_FORMAT,
        "memoryRef": memory_ref,
        "distiller": distiller,
        "tokenizer": TOKENIZER_NAME,
        "tokenBudget": token_budget,
        "tokens": {
            "input": outcome.input_tokens,
            "output": outcome.output_tokens,
            "used": outcome.tokens_used,
        },
        "sources": [
            {"id": s.entry_id, "version": s.version, "sha256": s.content_sha256}
            for s in sorted(outcome.consumed, key=lambda s: s.entry_id)
        ],
        "items": [
            {"text": item.text, "sourceIds": list(item.source_ids), "tags": list(item.tags)}
            for item in outcome.items
        ],
        "output": outcome.output_text,
    }
    body = rfc8785.dumps(document)
    return Archive(body=body, checksum=hashlib.sha256(body).hexdigest())
