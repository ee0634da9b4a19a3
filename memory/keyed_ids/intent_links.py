"""The link from a lifecycle event to the OpenIntent intent its entry is scoped to.

RFC-0015 §5 and §6.1: memory lifecycle events belong in the intent's event log when the
entry has an intent context, its ``scope.intent_id`` (kept in the entry's metadata under
``openintent``, api/openintent_models.py). The event log carries ids and checksums, never
text a user wrote, and an intent id is free text (up to 128 characters). So an event
records ``intent_digest`` (migration 0017): a keyed digest of (tenant, intent id), never
the id. ``GET /api/v1/intents/{intent_id}/events`` computes the same digest from its
path and reads the events that carry it (memory/events/reads.py).

The key (the keyed hash is memory/keyed_ids/opaque_refs.py's ``keyed_token``, as for the opaque
workflow ids):

- with payload encryption (AGENT_MEMORY_PAYLOAD_KEYS_FILE), a secret derived from the
  system ids key (runtime/payload_keys.py, runtime/intent_link_keys.py intent_links_for):
  whoever reads the database without the keys file cannot confirm a guessed intent id,
  even after its entries are forgotten;
- without it there is no secret to key with, and a fixed public key stands in: the
  digest still never shows the id, but a guessed id can be confirmed (as with the opaque
  refs' SHA-256).

Every process writing events of such entries (the API, the worker, memoryctl) builds
its store with the same key. Events written under another key (before payload keys were
turned on, or another ``system.ids``) keep that key's digest and are no longer found.

Which events: every lifecycle event of an entry whose metadata holds
``openintent.scope.intent_id`` as a string. A write's event carries the scope the entry
holds after the write; a removal's event the scope the removed row held (removals bring
it back in their RETURNING, ``intent_id_column``). Distilled entries hold no scope (they
speak for many entries), so their events link to no intent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Label, Table

from memory.keyed_ids.opaque_refs import keyed_token

INTENT_PATH = ("openintent", "scope", "intent_id")
_PUBLIC_KEY = b"agent-memory/intent-links/public/v1"


class IntentLinks:
    """Digests of (tenant, intent id) under one key (the module's docstring)."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = _PUBLIC_KEY if secret is None else secret

    def digest(self, tenant: str, intent_id: object) -> str | None:
        """The link to ``intent_id`` of ``tenant`` (a tenant never holds a newline, so
        the pair is unambiguous); None when there is no intent id."""
        if not isinstance(intent_id, str) or not intent_id:
            return None
        return keyed_token(self._secret, f"{tenant}\n{intent_id}")

    def of_metadata(self, tenant: str, metadata: object) -> str | None:
        """The link of an entry whose metadata is ``metadata``."""
        return self.digest(tenant, intent_id_in(metadata))


def intent_id_in(metadata: object) -> object:
    """``metadata["openintent"]["scope"]["intent_id"]``, or None."""
    value: Any = metadata
    for part in INTENT_PATH:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def intent_id_column(table: Table) -> Label[Any]:
    """A row's ``scope.intent_id`` as JSON (``#>``), labelled ``intent_id``: what a
    removal's RETURNING adds so its events carry the link."""
    return table.c.metadata[INTENT_PATH].label("intent_id")
