"""CTI-1 at the edge: a request reaches only its own tenant's memoryRefs. A ref of
another tenant is answered exactly like a ref that does not exist (404, no data), so a
probe cannot tell the two apart."""

from __future__ import annotations

from api.errors import not_found
from schemas.memory_ref import MemoryRef, parse_memory_ref, parse_segment


def owned_ref(tenant: str, raw: object) -> MemoryRef:
    """``raw`` parsed (a malformed ref is InvalidMemoryRef, a 422 naming memoryRef) and
    checked to belong to ``tenant`` (else 404)."""
    ref = parse_memory_ref(raw)
    if ref.tenant != tenant:
        raise not_found("memoryRef")
    return ref


def agent_ref(tenant: str, agent_id: object, field: str = "agent_id") -> MemoryRef:
    """The memoryRef of an OpenIntent agent: ``mem://<tenant>/<agent_id>``."""
    return MemoryRef(tenant, parse_segment(agent_id, field))
