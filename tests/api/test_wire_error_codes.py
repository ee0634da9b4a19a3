"""The v2 error envelope speaks the registry the official client knows: every code we
map to is a registered openwop code (openwop-client's copy of spec/v2/errors.json), and
every other code goes out in the vendor form the v2 envelope's schema allows."""

from __future__ import annotations

import re
import typing

from openwop_client._generated import ErrorCode

from api.errors import V2_REGISTERED, v2_code
from schemas.errors import ErrorCode as OurCodes

VENDOR = re.compile(r"^(?!openwop\.)[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9_]*$")


def test_every_v2_code_is_registered_or_vendor_shaped() -> None:
    registered = set(typing.get_args(ErrorCode))
    assert {name for name, _ in V2_REGISTERED.values()} <= registered
    for code in [c.value for c in OurCodes] + ["unauthorized", "temporal_unavailable"]:
        _, sent = v2_code(400, code)
        assert sent in registered or VENDOR.fullmatch(sent), sent
    assert v2_code(422, "invalid_input") == (400, "validation_error")
    assert v2_code(409, "memory_capacity_exceeded") == (
        409,
        "agent-memory-temporal.memory_capacity_exceeded",
    )
