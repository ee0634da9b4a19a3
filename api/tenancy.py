"""CTI-1 at the edge: a memoryRef in a request is an opaque name that resolves within the
caller's tenant (the key's), never a way to name another tenant (openwop
host-sample-seams §1: "memoryRef is opaque"; docs/http-api.md, memoryRefs).

The mapping to the canonical ``mem://<tenant>/<agent>[/<scope>]`` form:

- ``mem://<own tenant>/<agent>[/<scope>]``: itself;
- one segment (``conformance-distill``): ``mem://<tenant>/<it>`` (a bare agent id);
- two segments (``conformance/agent-memory-cti``): ``mem://<tenant>/<agent>/<scope>``;
- anything else (``mem://conformance/consolidation`` with a key of another tenant,
  ``mem_tenant:default_agent:x_longTerm``, three or more segments, characters a segment
  cannot hold): ``mem://<tenant>/o-<first 32 hex digits of its SHA-256>``, a bucket of
  the caller's own that holds nothing of any other tenant. So a ref that names another
  tenant reads exactly like a ref that holds nothing: no 404 or 403 tells the two apart.

A malformed ref (not a string, empty, over 512 bytes, NUL or control characters, a '.' or
'..' path segment) is InvalidMemoryRef: 422 naming memoryRef.
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


def owned_ref(tenant: str, raw: object) -> MemoryRef:
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


def agent_ref(tenant: str, agent_id: object, field: str = "agent_id") -> MemoryRef:
    """The memoryRef of an OpenIntent agent: ``mem://<tenant>/<agent_id>``."""
    return MemoryRef(tenant, parse_segment(agent_id, field))
