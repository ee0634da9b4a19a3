"""Shared by the payload-encryption tests: a keys file, a client and a worker that
encrypt, and a history turned into every string it holds (search attributes set aside)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import secrets
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from runtime.client import connect
from runtime.settings import Settings
from worker import build_worker


def new_key() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


def write_keys(path: Path, tenants: list[str]) -> Path:
    """system key sys-1, and key <tenant>-1 for each tenant."""
    document = {
        "system": {"active": "sys-1", "keys": {"sys-1": new_key()}},
        "tenants": {t: {"active": f"{t}-1", "keys": {f"{t}-1": new_key()}} for t in tenants},
    }
    path.write_text(json.dumps(document))
    return path


def settings_for(
    temporal_env: WorkflowEnvironment, keys_file: Path | None, **extra: Any
) -> Settings:
    return Settings(
        TEMPORAL_ADDRESS=temporal_env.client.service_client.config.target_host,
        AGENT_MEMORY_TASK_QUEUE=f"test-enc-{uuid.uuid4().hex[:12]}",
        AGENT_MEMORY_PAYLOAD_KEYS_FILE=str(keys_file) if keys_file else None,
        **extra,
    )


@contextlib.asynccontextmanager
async def encrypted_worker(settings: Settings, store: PostgresMemoryStore) -> AsyncIterator[Client]:
    """A client connected the production way (runtime.client.connect) and a worker on
    the settings' task queue; yields the client."""
    client = await connect(settings)
    async with build_worker(client, settings, store, StaticSecretVault({})):
        yield client


def _strings(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for value in node.values():
            _strings(value, out)
    elif isinstance(node, list):
        for value in node:
            _strings(value, out)
    elif isinstance(node, str):
        out.append(node)
        # Every bytes field (payload data and metadata) is base64 in history JSON.
        with contextlib.suppress(binascii.Error, ValueError):
            out.append(base64.b64decode(node, validate=True).decode("utf-8", "replace"))


SEARCH_ATTRIBUTE_EVENT = "upsertWorkflowSearchAttributesEventAttributes"


def without_search_attributes(history_json: str) -> dict[str, Any]:
    """The history with every search attribute removed (the one documented place a
    memoryRef and a tenant stay in clear)."""
    history: dict[str, Any] = json.loads(history_json)
    for event in history["events"]:
        event.pop(SEARCH_ATTRIBUTE_EVENT, None)
        for value in event.values():
            if isinstance(value, dict):
                value.pop("searchAttributes", None)
    return history


def clear_text(history_json: str) -> str:
    """Every string of the history outside its search attributes, and every bytes field
    decoded: what anyone with read access to Temporal sees without a key."""
    out: list[str] = []
    _strings(without_search_attributes(history_json), out)
    return "\n".join(out)


def search_attribute_text(history_json: str) -> str:
    history = json.loads(history_json)
    out: list[str] = []
    for event in history["events"]:
        _strings(event.get(SEARCH_ATTRIBUTE_EVENT), out)
        for value in event.values():
            if isinstance(value, dict):
                _strings(value.get("searchAttributes"), out)
    return "\n".join(out)
