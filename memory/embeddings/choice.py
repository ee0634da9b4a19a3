"""Which embedding model a process uses, from its environment (the same names in
docker-compose.yml):

- ``AGENT_MEMORY_EMBEDDINGS``: ``static`` (the default: the offline WordLlama model),
  ``openai-compatible``, or ``off`` (no vectors; search is full-text only and discovery
  does not advertise the semantic mode).
- for ``openai-compatible``: ``AGENT_MEMORY_EMBEDDINGS_URL`` (the API base, e.g.
  ``http://vllm:8000/v1``), ``AGENT_MEMORY_EMBEDDINGS_MODEL``,
  ``AGENT_MEMORY_EMBEDDINGS_DIMENSIONS``, optionally ``AGENT_MEMORY_EMBEDDINGS_API_KEY``
  and ``AGENT_MEMORY_EMBEDDINGS_TIMEOUT`` (seconds, default 10).

One embedder per process and configuration: the static model's weights load once.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory.embeddings.model import Embedder
from memory.embeddings.static_model import StaticWordEmbedder

EMBEDDING_ENV_VARS = (
    "AGENT_MEMORY_EMBEDDINGS",
    "AGENT_MEMORY_EMBEDDINGS_URL",
    "AGENT_MEMORY_EMBEDDINGS_MODEL",
    "AGENT_MEMORY_EMBEDDINGS_DIMENSIONS",
    "AGENT_MEMORY_EMBEDDINGS_API_KEY",
    "AGENT_MEMORY_EMBEDDINGS_TIMEOUT",
)


class EmbeddingSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    provider: Literal["static", "openai-compatible", "off"] = Field(
        default="static", alias="AGENT_MEMORY_EMBEDDINGS"
    )
    url: str | None = Field(default=None, alias="AGENT_MEMORY_EMBEDDINGS_URL")
    model: str | None = Field(default=None, alias="AGENT_MEMORY_EMBEDDINGS_MODEL")
    dimensions: int | None = Field(
        default=None, ge=1, le=16000, alias="AGENT_MEMORY_EMBEDDINGS_DIMENSIONS"
    )
    api_key: str | None = Field(default=None, alias="AGENT_MEMORY_EMBEDDINGS_API_KEY")
    timeout_seconds: float = Field(
        default=10.0, gt=0, le=300, alias="AGENT_MEMORY_EMBEDDINGS_TIMEOUT"
    )

    @model_validator(mode="after")
    def _endpoint_is_complete(self) -> EmbeddingSettings:
        if self.provider == "openai-compatible":
            missing = [
                name
                for name, value in (
                    ("AGENT_MEMORY_EMBEDDINGS_URL", self.url),
                    ("AGENT_MEMORY_EMBEDDINGS_MODEL", self.model),
                    ("AGENT_MEMORY_EMBEDDINGS_DIMENSIONS", self.dimensions),
                )
                if not value
            ]
            if missing:
                raise ValueError(f"openai-compatible embeddings need {', '.join(missing)}")
        return self


def embedder_for(settings: EmbeddingSettings) -> Embedder | None:
    if settings.provider == "off":
        return None
    if settings.provider == "openai-compatible":
        assert settings.url and settings.model and settings.dimensions  # the validator's
        # Imported here: its HTTP client is 80 ms that a deployment on the default
        # embedder, and every command start, would pay for nothing.
        from memory.embeddings.openai_compatible import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            settings.url,
            settings.model,
            settings.dimensions,
            api_key=settings.api_key,
            timeout_seconds=settings.timeout_seconds,
        )
    return static_embedder()


@cache
def static_embedder() -> StaticWordEmbedder:
    return StaticWordEmbedder()


@cache
def configured_embedder() -> Embedder | None:
    """The embedder this process's environment chooses (read once)."""
    return embedder_for(EmbeddingSettings())
