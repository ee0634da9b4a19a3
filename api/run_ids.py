"""A run id on the wire (openwop v2 identity.md §5): v1 names a run by its bare id
(``run-<hex>``); v2 binds it to its tenant, ``<tenant>/run-<hex>``, and a path carries
it as one segment, projected (``acme~2Frun-...``) or percent-encoded (``acme%2Frun-...``,
which arrives here decoded). Both forms are accepted on both majors; a tenant segment
that is not the caller's is 403 ``id_tenant_mismatch``, decided before any look-up so
the answer says nothing about whether the run exists.
"""

from __future__ import annotations

import re

from api.errors import ApiError

_ESCAPE = re.compile(r"~([0-9A-Fa-f]{2})")
_PASSTHROUGH = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def wire_run_id(major: int | None, tenant: str, run_id: str) -> str:
    return f"{tenant}/{run_id}" if major == 2 else run_id


def path_segment(wire_id: str) -> str:
    """The one-segment projection of a wire id (what links carry)."""
    return "".join(chr(b) if b in _PASSTHROUGH else f"~{b:02X}" for b in wire_id.encode())


def run_path(major: int | None, tenant: str, run_id: str) -> str:
    prefix = "" if major == 2 else "/v1"
    return f"{prefix}/runs/{path_segment(wire_run_id(major, tenant, run_id))}"


def bare_run_id(raw: str, tenant: str) -> str:
    """The stored run id a path segment names for ``tenant``."""
    if "~" in _ESCAPE.sub("", raw):
        raise ApiError(
            400, "validation_error", "runId: '~' must be followed by two hex digits", field="runId"
        )
    decoded = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), raw)
    if "/" not in decoded:
        return decoded
    bound_tenant, _, bare = decoded.partition("/")
    if bound_tenant != tenant:
        raise ApiError(
            403,
            "id_tenant_mismatch",
            "runId: bound to a tenant other than the caller's",
            field="runId",
        )
    return bare
