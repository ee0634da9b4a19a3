"""Which key links a deployment's lifecycle events to OpenIntent intents
(memory/keyed_ids/intent_links.py): the keys file's intent-link secret when payloads are encrypted
(derived from the system ids key, like the opaque workflow ids'), else the public
fallback key. Every process that writes events (the API, the worker, memoryctl, the
quick start) builds its store with this, so they all link under the same key.

Its own module, apart from runtime/workflow_ids.py: workflows import the workflow ids,
and must not import the store's SQL layer (tests/workflows/test_activity_boundary.py).
"""

from __future__ import annotations

from memory.keyed_ids.intent_links import IntentLinks
from runtime.payload_keys import cached_keyring
from runtime.settings import Settings


def intent_links_for(settings: Settings) -> IntentLinks:
    if not settings.payload_keys_file:
        return IntentLinks()
    return IntentLinks(cached_keyring(settings.payload_keys_file).intent_link_secret)
