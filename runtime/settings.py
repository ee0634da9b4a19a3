"""Runtime settings, read from the environment (same names in docker-compose.yml)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_TASK_QUEUE = "agent-memory"

# The environment variable names the worker reads; docker-compose's worker service sets
# exactly these (tests/test_compose.py checks).
ENV_VARS = (
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "AGENT_MEMORY_TASK_QUEUE",
    "DATABASE_URL",
    "AGENT_MEMORY_SECRETS_FILE",
)
# The HTTP API (`memoryctl serve`) reads the worker's names (it starts the same workflows
# on the same task queue and redacts writes with the same secrets) plus where to listen;
# docker-compose's api service sets exactly these.
API_ENV_VARS = (*ENV_VARS, "AGENT_MEMORY_API_HOST", "AGENT_MEMORY_API_PORT")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    temporal_address: str = Field(default="localhost:7233", alias="TEMPORAL_ADDRESS")
    temporal_namespace: str = Field(default="default", alias="TEMPORAL_NAMESPACE")
    task_queue: str = Field(default=DEFAULT_TASK_QUEUE, alias="AGENT_MEMORY_TASK_QUEUE")
    database_url: str | None = Field(default=None, alias="DATABASE_URL")
    secrets_file: str | None = Field(default=None, alias="AGENT_MEMORY_SECRETS_FILE")
    # The HTTP API (memoryctl serve): where it listens.
    api_host: str = Field(default="127.0.0.1", alias="AGENT_MEMORY_API_HOST")
    api_port: int = Field(default=8000, ge=1, le=65535, alias="AGENT_MEMORY_API_PORT")
