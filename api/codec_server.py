"""The codec server: what the Temporal UI and `temporal ... --codec-endpoint` call to see
encrypted payloads decoded (POST /codec/decode, POST /codec/encode; body and answer
``{"payloads": [{"metadata": {name: base64}, "data": base64}]}``, the protobuf JSON form
of temporal.api.common.v1.Payloads).

- Authenticated like every route (API key as ``Authorization: Bearer`` or
  ``X-API-Key``): a key of tenant T decodes payloads under T's keys, and payloads under
  the system or default key that name no memoryRef of another tenant. Anything else is
  answered still encrypted, exactly as sent, so the caller learns nothing about it.
- CORS for the configured UI origins only (AGENT_MEMORY_CODEC_CORS_ORIGINS); a preflight
  needs no credentials (browsers send none), a preflight from any other origin is
  refused.
- Without a payload keys file every payload passes through unchanged.

A sub-application mounted at /codec, so its CORS policy reaches no other route.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import FastAPI
from pydantic import BeforeValidator, ConfigDict, Field
from starlette.middleware.cors import CORSMiddleware
from temporalio.api.common.v1 import Payload

from api.auth import Api, Tenant, _KeyCache
from api.errors import ApiError, install_error_handlers
from api.services import ApiServices
from runtime.converter import payload_codec_for
from runtime.payload_codec import (
    EncryptionCodec,
    PayloadDecryptionError,
    is_encrypted,
    key_id_of,
    tenants_in,
)
from runtime.payload_keys import Scope
from schemas.base import WireModel

MAX_PAYLOADS = 1000
# What the UI and the CLI send: JSON bodies, the namespace, and the credential.
_ALLOWED_HEADERS = ["content-type", "x-namespace", "authorization", "x-api-key"]


def _base64(value: object) -> bytes:
    if not isinstance(value, str):
        raise ValueError("must be a base64 string")
    try:
        # Protobuf JSON writes standard base64; it also reads the URL-safe alphabet.
        return base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be base64") from None


Base64 = Annotated[bytes, BeforeValidator(_base64)]


class WirePayload(WireModel):
    model_config = ConfigDict(extra="ignore")  # protobuf JSON may add fields later

    metadata: dict[str, Base64] = {}
    data: Base64 = b""

    def to_proto(self) -> Payload:
        return Payload(metadata=self.metadata, data=self.data)

    @staticmethod
    def of(payload: Payload) -> dict[str, object]:
        encode = base64.b64encode
        return {
            "metadata": {name: encode(value).decode() for name, value in payload.metadata.items()},
            "data": encode(payload.data).decode(),
        }


class PayloadsBody(WireModel):
    payloads: list[WirePayload] = Field(max_length=MAX_PAYLOADS)


def _readable_by(codec: EncryptionCodec, payload: Payload, tenant: str) -> Payload:
    """``payload`` decoded if ``tenant`` may read it, else unchanged."""
    key = codec.keyring.get(key_id_of(payload) or "")
    if key is None or (key.scope is Scope.TENANT and key.tenant != tenant):
        return payload
    try:
        decoded = codec.decrypt(payload)
    except PayloadDecryptionError:
        return payload
    # A shared (system or default) key: the content decides. A payload naming another
    # tenant's memoryRef stays encrypted.
    if tenants_in(decoded.data) - {tenant}:
        return payload
    return decoded


def codec_app(api: ApiServices, key_cache: _KeyCache) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)
    app.state.services = api
    app.state.key_cache = key_cache  # one cache with the main app: a revoked key stops here too
    install_error_handlers(app)

    @app.post("/decode")
    async def decode(body: PayloadsBody, tenant: Tenant, api: Api) -> dict[str, object]:
        codec = payload_codec_for(api.settings)
        payloads = [p.to_proto() for p in body.payloads]
        if codec is not None:
            payloads = [_readable_by(codec, p, tenant) if is_encrypted(p) else p for p in payloads]
        return {"payloads": [WirePayload.of(p) for p in payloads]}

    @app.post("/encode")
    async def encode(body: PayloadsBody, tenant: Tenant, api: Api) -> dict[str, object]:
        codec = payload_codec_for(api.settings)
        payloads = [p.to_proto() for p in body.payloads]
        for index, payload in enumerate(payloads):
            if not is_encrypted(payload) and tenants_in(payload.data) - {tenant}:
                raise ApiError(
                    403,
                    "forbidden",
                    f"payloads[{index}]: names a memoryRef of another tenant",
                    field=f"payloads[{index}]",
                )
        if codec is not None:
            payloads = await codec.encode(payloads)
        return {"payloads": [WirePayload.of(p) for p in payloads]}

    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(api.settings.codec_origins),
        allow_methods=["POST"],
        allow_headers=_ALLOWED_HEADERS,
        # The UI's "include cross-origin credentials" option needs it; never with "*".
        allow_credentials="*" not in api.settings.codec_origins,
        max_age=600,
    )
    return app
