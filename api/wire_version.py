"""Which openwop wire a request speaks, and the ``OpenWOP-Version`` header both ways
(openwop v2 versioning.md §1, RFC 0172/0179).

The host serves two majors through the same handlers: v1 under ``/v1/...`` and v2 on the
unprefixed paths (``/runs``, ``/agents``, ``/conformance/seams/...``). Discovery
(``/.well-known/openwop``) is shared and chooses its representation by the header; with
no header it serves ``PREFERRED_VERSION``'s major, v1, which the v1 suite and the v2
witness both read for the fixture list.

| request | answer |
|---|---|
| a major this host serves, on a path of that major (or discovery) | served |
| a major it does not serve | 406 ``protocol_version_unsupported`` with the list |
| a served major on a path of the other major | 400 ``protocol_version_mismatch`` |
| a header that is not ``<major>`` or ``<major>.<minor>`` | 400 naming the header |
| no header | the path's major; discovery: the preferred one |

Every protocol response carries ``OpenWOP-Version`` naming the contract actually used,
errors included. The negotiated major sits in the ASGI scope (``wire_major``) for the
handlers and the error envelope (api/errors.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PROTOCOL_VERSIONS = ("1.0", "2.0")
PREFERRED_VERSION = "1.0"
HEADER = "OpenWOP-Version"
SCOPE_KEY = "wire_major"

_SERVED = {int(version.split(".")[0]): version for version in PROTOCOL_VERSIONS}
_GRAMMAR = re.compile(r"(0|[1-9][0-9]{0,3})(?:\.(0|[1-9][0-9]{0,3}))?")
_DISCOVERY = "/.well-known/openwop"
# The v2 paths: the unversioned run and agent surfaces, and the seams under
# /conformance/seams/ (where the v2 suite moves /v1/host/sample/).
_V2_ROOTS = frozenset({"runs", "agents"})


def path_major(path: str) -> int | None:
    """The major a path belongs to; None for discovery (negotiated) and for routes
    outside the openwop wire (OpenIntent, the codec server, the docs)."""
    if path.startswith("/v1/"):
        return 1
    first = path.split("/", 2)[1] if path.startswith("/") else ""
    if first in _V2_ROOTS or path.startswith("/conformance/seams/"):
        return 2
    return None


class Refusal(Exception):
    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details


def negotiate(path: str, header: str | None) -> int | None:
    """The major to serve ``path`` in, given the request's ``OpenWOP-Version`` value;
    None when the path is not on the openwop wire. Raises Refusal per the table above."""
    fixed = path_major(path)
    on_wire = fixed is not None or path == _DISCOVERY
    if not on_wire:
        return None
    if header is None or not header.strip():
        return fixed if fixed is not None else int(PREFERRED_VERSION.split(".")[0])
    matched = _GRAMMAR.fullmatch(header.strip())
    if matched is None:
        raise Refusal(
            400,
            "validation_error",
            f"{HEADER}: must be <major> or <major>.<minor>",
            field=HEADER,
        )
    major = int(matched.group(1))
    if major not in _SERVED:
        raise Refusal(
            406,
            "protocol_version_unsupported",
            f"{HEADER}: major {major} is not served here",
            protocolVersions=list(PROTOCOL_VERSIONS),
        )
    if fixed is not None and major != fixed:
        raise Refusal(
            400,
            "protocol_version_mismatch",
            f"{HEADER}: this path is major {fixed}, the header asks for {major}",
            field=HEADER,
        )
    return major


def wire_major(connection: HTTPConnection) -> int | None:
    """The negotiated major of a request (None off the openwop wire)."""
    major: int | None = connection.scope.get(SCOPE_KEY)
    return major


class WireVersion:
    """Pure ASGI: negotiate before routing, stamp the answer's header after."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers") or []:
            if name == b"openwop-version":
                header = value.decode("latin-1")
        try:
            major = negotiate(scope["path"], header)
        except Refusal as refusal:
            # The refusal itself speaks the path's major, or the preferred one.
            fixed = path_major(scope["path"]) or int(PREFERRED_VERSION.split(".")[0])
            await _refuse(send, refusal, _SERVED[fixed])
            return
        scope[SCOPE_KEY] = major
        if major is None:
            await self.app(scope, receive, send)
            return
        stamp = _SERVED[major].encode()

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"openwop-version"
                ]
                headers.append((b"openwop-version", stamp))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, stamped)


async def _refuse(send: Send, refusal: Refusal, version: str) -> None:
    body = json.dumps(
        {"error": refusal.code, "message": refusal.message, "details": refusal.details}
    ).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"openwop-version", version.encode()),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
