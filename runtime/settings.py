"""Runtime settings, read from the environment (same names in docker-compose.yml)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_TASK_QUEUE = "agent-memory"

# The environment variable names the worker and the API both read (the same Temporal,
# database, task queue and secrets).
ENV_VARS = (
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "AGENT_MEMORY_TASK_QUEUE",
    "DATABASE_URL",
    "AGENT_MEMORY_SECRETS_FILE",
    "AGENT_MEMORY_PAYLOAD_KEYS_FILE",
    "AGENT_MEMORY_LOG_FORMAT",
    # The worker starts a proposal's workflow after a dream, the API on first review:
    # both with the same activation mode and approval timeout.
    "AGENT_MEMORY_PROPOSAL_ACTIVATION",
    "AGENT_MEMORY_PROPOSAL_APPROVAL_TIMEOUT_S",
)
# The worker's: the shared names plus its health and metrics endpoint; docker-compose's
# worker service sets exactly these (tests/docs/test_compose.py checks).
WORKER_ENV_VARS = (*ENV_VARS, "AGENT_MEMORY_WORKER_HTTP_ADDRESS")
# The HTTP API (`memoryctl serve`) reads the worker's names (it starts the same workflows
# on the same task queue and redacts writes with the same secrets) plus where to listen;
# docker-compose's api service sets exactly these.
API_ENV_VARS = (
    *ENV_VARS,
    "AGENT_MEMORY_API_HOST",
    "AGENT_MEMORY_API_PORT",
    "AGENT_MEMORY_CODEC_CORS_ORIGINS",
    "OPENWOP_TEST_SEAM_ENABLED",
    "AGENT_MEMORY_PROPOSAL_SCOPE",
)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    temporal_address: str = Field(default="localhost:7233", alias="TEMPORAL_ADDRESS")
    temporal_namespace: str = Field(default="default", alias="TEMPORAL_NAMESPACE")
    task_queue: str = Field(default=DEFAULT_TASK_QUEUE, alias="AGENT_MEMORY_TASK_QUEUE")
    database_url: str | None = Field(default=None, alias="DATABASE_URL")
    secrets_file: str | None = Field(default=None, alias="AGENT_MEMORY_SECRETS_FILE")
    # Payload encryption (runtime/payload_keys.py): unset or empty means payloads are
    # stored in clear and workflow ids stay readable.
    payload_keys_file: str | None = Field(default=None, alias="AGENT_MEMORY_PAYLOAD_KEYS_FILE")
    # The HTTP API (memoryctl serve): where it listens.
    # text, or json: one object a line with the Temporal ids (runtime/log_format.py).
    log_format: Literal["text", "json"] = Field(default="text", alias="AGENT_MEMORY_LOG_FORMAT")
    # host:port of the worker's /healthz, /readyz and /metrics (runtime/health.py);
    # unset: the worker serves none.
    worker_http_address: str | None = Field(default=None, alias="AGENT_MEMORY_WORKER_HTTP_ADDRESS")
    api_host: str = Field(default="127.0.0.1", alias="AGENT_MEMORY_API_HOST")
    api_port: int = Field(default=8000, ge=1, le=65535, alias="AGENT_MEMORY_API_PORT")
    # Browser origins allowed to call the codec endpoint (/codec): the Temporal UI's.
    # Comma-separated.
    codec_cors_origins: str = Field(
        default="http://localhost:8233", alias="AGENT_MEMORY_CODEC_CORS_ORIGINS"
    )
    # The openwop conformance seams (/v1/host/sample/*): conformance-only, so off unless
    # an operator turns them on (upstream's switch name). Off, they answer 404, which
    # the suite reads as "not wired". The quick start and the tests turn them on.
    test_seams: bool = Field(default=False, alias="OPENWOP_TEST_SEAM_ENABLED")
    # Proposals (RFC 0096, docs/proposals.md): how an apply is authorised. direct-rbac:
    # the caller's key holds proposal_scope. approval-gate: a reviewer holding
    # "proposals:review" grants it within the timeout ("proposals:override" skips the
    # gate, recorded on the activation).
    proposal_activation: Literal["approval-gate", "direct-rbac"] = Field(
        default="direct-rbac", alias="AGENT_MEMORY_PROPOSAL_ACTIVATION"
    )
    proposal_scope: str = Field(default="proposals:apply", alias="AGENT_MEMORY_PROPOSAL_SCOPE")
    proposal_approval_timeout_s: int = Field(
        default=7 * 24 * 3600, ge=1, alias="AGENT_MEMORY_PROPOSAL_APPROVAL_TIMEOUT_S"
    )

    @field_validator("payload_keys_file", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # docker-compose passes an unset variable as "" (${AGENT_MEMORY_PAYLOAD_KEYS_FILE:-}).
        return None if value == "" else value

    @field_validator("worker_http_address", mode="before")
    @classmethod
    def _host_and_port(cls, value: object) -> object:
        if value in ("", None):
            return None
        host, _, port = str(value).rpartition(":")
        if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(f"must be host:port with a port from 1 to 65535, got {value!r}")
        return value

    @property
    def worker_http_host_port(self) -> tuple[str, int] | None:
        if self.worker_http_address is None:
            return None
        host, _, port = self.worker_http_address.rpartition(":")
        return host.strip("[]"), int(port)

    @property
    def codec_origins(self) -> tuple[str, ...]:
        return tuple(o.strip() for o in self.codec_cors_origins.split(",") if o.strip())
