"""The wire shapes: checked-in JSON Schema export is current, and shapes validate."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import jsonschema
import pytest
from pydantic import ValidationError

from schemas import export
from schemas.events import Distillation, MemoryCompacted
from schemas.memory_entry import MemoryEntry, MemoryListOptions, NewMemoryEntry


def test_checked_in_json_schema_export_is_current() -> None:
    assert export.stale_files() == [], "run `python -m schemas.export` and commit the result"


def test_memory_entry_wire_shape_matches_openwop() -> None:
    schema = json.loads((export.OUTPUT_DIR / "memory-entry.schema.json").read_text())
    assert set(schema["properties"]) == {"id", "content", "tags", "createdAt", "expiresAt"}
    assert set(schema["required"]) == {"id", "content", "createdAt"}
    options = json.loads((export.OUTPUT_DIR / "memory-list-options.schema.json").read_text())
    # RFC 0113 added the budgeted read's fields to MemoryListOptions.
    assert set(options["properties"]) == {"limit", "tag", "tokenBudget", "rank", "query"}


def test_instances_validate_against_the_exported_schema() -> None:
    entry = MemoryEntry(
        id="m1", content="x", tags=("a",), created_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    schema = json.loads((export.OUTPUT_DIR / "memory-entry.schema.json").read_text())
    jsonschema.validate(entry.to_wire(), schema)
    assert entry.to_wire()["createdAt"] == "2026-01-01T00:00:00.000Z"
    event = MemoryCompacted(
        memory_ref="mem://a/b",
        output_id="m2",
        source_count=3,
        trigger="host-managed",
        byte_size=10,
        distillation=Distillation(token_budget=100, tokens_used=90, index_updated=True),
    )
    compacted = json.loads((export.OUTPUT_DIR / "event-memory-compacted.schema.json").read_text())
    jsonschema.validate(event.to_wire(), compacted)


def test_stale_export_is_detected(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "OUTPUT_DIR", tmp_path)
    export.write()
    assert export.stale_files() == []
    (tmp_path / "memory-entry.schema.json").write_text("{}")
    assert export.stale_files() == ["memory-entry.schema.json"]
    assert export.main(["--check"]) == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x", "tags": [""]}, "tags"),
        ({"content": "x", "tier": "forever"}, "tier"),
        ({"content": "x", "expiresAt": "2026-01-01T00:00:00"}, "expiresAt"),
        ({"content": "x", "tags": ["t"] * 65}, "tags"),
    ],
)
def test_bad_new_entries_name_the_field(payload: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        NewMemoryEntry.model_validate(payload)
    assert field in str(info.value)


def test_list_limit_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="limit"):
        MemoryListOptions(limit=0)
