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
"""

from __future__ import annotations

import hashlib
import re

from schemas.errors import InvalidMemoryRef
from schemas.memory_ref import (
    MAX_REF_BYTES,
    SCHEME,
    MemoryRef,
    parse_memory_ref,
    parse_segment,
    try_parse_memory_ref,
)

OPAQUE_PREFIX = "o-"
OPAQUE_HEX_CHARS = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEGMENT_OK = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?")


def _check_shape(raw: object) -> str:
    if not isinstance(raw, str):
        raise InvalidMemoryRef("must be a string")
    if not raw:
        raise InvalidMemoryRef("must not be empty")
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_REF_BYTES:
        raise InvalidMemoryRef(f"must be at most {MAX_REF_BYTES} bytes")
    if _CONTROL.search(raw):
        raise InvalidMemoryRef("must not contain NUL or control characters")
    path = raw[len(SCHEME) :] if raw.startswith(SCHEME) else raw
    if any(part in (".", "..") for part in re.split(r"[/\\]", path)):
        raise InvalidMemoryRef("must not contain '.' or '..' path segments")
    return raw


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
        parts = text.split("/")
        if 1 <= len(parts) <= 2 and all(_SEGMENT_OK.fullmatch(p) for p in parts):
            return parse_memory_ref(f"{SCHEME}{tenant}/{text}")
    return MemoryRef(tenant, opaque_agent(text))
