"""CTI-1 at the edge: a memoryRef in a request is an opaque name that resolves within the
caller's tenant (the key's), never a way to name another tenant (openwop
host-sample-seams §1: "memoryRef is opaque"; docs/http-api.md, memoryRefs).

The mapping to the canonical ``mem://<tenant>/<agent>[/<scope>]`` form is
memory/keyed_ids/opaque_refs.py's (the fixture runs resolve their refs the same way). A ref that
names another tenant reads exactly like a ref that holds nothing: no 404 or 403 tells
the two apart. A malformed ref is a 422 naming memoryRef.
"""

from __future__ import annotations

from memory.keyed_ids.opaque_refs import resolve_ref
from schemas.memory_ref import MemoryRef, parse_segment


def owned_ref(tenant: str, raw: object) -> MemoryRef:
    """The canonical memoryRef ``raw`` names within the key's ``tenant``
    (memory/keyed_ids/opaque_refs.py); a malformed one is a 422 naming memoryRef."""
    return resolve_ref(tenant, raw)


def agent_ref(tenant: str, agent_id: object, field: str = "agent_id") -> MemoryRef:
    """The memoryRef of an OpenIntent agent: ``mem://<tenant>/<agent_id>``."""
    return MemoryRef(tenant, parse_segment(agent_id, field))
