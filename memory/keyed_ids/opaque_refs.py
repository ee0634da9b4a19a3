"""An opaque memoryRef resolved within a tenant: the one mapping the HTTP edge
(api/tenancy.py) and the conformance fixtures' runs (memory/fixture_runs/) use, so a name
means the same memory wherever it arrives (docs/http-api.md, memoryRefs are opaque).

- ``mem://<own tenant>/<agent>[/<scope>]``: itself;
- one segment (``conformance-distill``): ``mem://<tenant>/<it>`` (a bare agent id);
- two segments (``conformance/agent-memory-cti``): ``mem://<tenant>/<agent>/<scope>``;
- anything else (``mem://conformance/consolidation`` for another tenant,
  ``mem_tenant:default_agent:x_longTerm``, three or more segments, characters a segment
  cannot hold): ``mem://<tenant>/o-<first 32 hex digits of its SHA-256>``, a bucket of
  the tenant's own that holds nothing of any other tenant.

A malformed ref (not a string, empty, over 512 bytes, NUL or control characters, a '.' or
'..' path segment) is InvalidMemoryRef.

``keyed_token`` is the one keyed hash behind the opaque names that must not be
reversible by guessing: the opaque workflow ids (runtime/workflow_ids.py) and the
events' intent links (memory/keyed_ids/intent_links.py).
"""

from __future__ import annotations

import hashlib
import hmac
import re

from schemas.errors import InvalidMemoryRef
from schemas.memory_ref import (
    SCHEME,
    MemoryRef,
    checked_ref_text,
    parse_segment,
    try_parse_memory_ref,
)

OPAQUE_PREFIX = "o-"
OPAQUE_HEX_CHARS = 32
KEYED_PREFIX = "h"


def keyed_token(secret: bytes, text: str) -> str:
    """``h`` + the first 32 hex digits (128 bits) of HMAC-SHA256 of ``text`` under
    ``secret``: the same text always gives the same token, which reveals nothing of it
    to whoever lacks the secret."""
    data = text.encode("utf-8", "surrogatepass")
    return KEYED_PREFIX + hmac.new(secret, data, hashlib.sha256).hexdigest()[:OPAQUE_HEX_CHARS]


def _check_shape(raw: object) -> str:
    text = checked_ref_text(raw)
    if not text:
        raise InvalidMemoryRef("must not be empty")
    path = text[len(SCHEME) :] if text.startswith(SCHEME) else text
    if any(part in (".", "..") for part in re.split(r"[/\\]", path)):
        raise InvalidMemoryRef("must not contain '.' or '..' path segments")
    return text


def opaque_agent(raw: str) -> str:
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
    return OPAQUE_PREFIX + digest[:OPAQUE_HEX_CHARS]


def resolve_ref(tenant: str, raw: object) -> MemoryRef:
    """The canonical memoryRef ``raw`` names within ``tenant`` (mapping above)."""
    if isinstance(raw, MemoryRef):
        raw = str(raw)
    text = _check_shape(raw)
    tenant = parse_segment(tenant, "tenant")
    canonical = try_parse_memory_ref(text)
    if canonical is not None and canonical.tenant == tenant:
        return canonical
    if canonical is None and not text.startswith(SCHEME):
        # One or two segments ("agent", "agent/scope") are a path in the tenant: the
        # parser's own grammar decides, and anything it refuses is opaque.
        in_tenant = try_parse_memory_ref(f"{SCHEME}{tenant}/{text}")
        if in_tenant is not None:
            return in_tenant
    return MemoryRef(tenant, opaque_agent(text))
