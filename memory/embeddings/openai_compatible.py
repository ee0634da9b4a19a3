"""The production option: any server that speaks the OpenAI embeddings API
(``POST {base}/embeddings`` with ``{"model", "input": [...]}``): vLLM, Ollama, OpenAI,
LiteLLM, text-embeddings-inference.

The dimension count is configured, not discovered, so the model id and its index are
known before the first call; an answer of another size, of another count than asked, or
not JSON is refused whole (EmbeddingUnavailable), and the message never carries a text.
Texts go out in batches of EMBED_BATCH.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from memory.embeddings.model import (
    EMBED_BATCH,
    EmbeddingModel,
    EmbeddingUnavailable,
    Vectors,
    unit_rows,
)


def endpoint_client(
    base_url: str,
    api_key: str | None,
    timeout_seconds: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """The HTTP client for an OpenAI-compatible server (embeddings here, chat for the
    update judge): paths relative to ``base_url``, the key as a bearer token."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/") + "/",
        headers=headers,
        timeout=timeout_seconds,
        transport=transport,
    )


class OpenAICompatibleEmbedder:
    def __init__(
        self,
        base_url: str,
        model_name: str,
        dimensions: int,
        *,
        api_key: str | None = None,
        timeout_seconds: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._model_name = model_name
        self._model = EmbeddingModel(
            id=f"openai-compatible/{model_name}-{dimensions}", dimensions=dimensions
        )
        self._client = endpoint_client(base_url, api_key, timeout_seconds, transport)

    @property
    def model(self) -> EmbeddingModel:
        return self._model

    async def aclose(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        parts = [
            await self._embed_batch(texts[start : start + EMBED_BATCH])
            for start in range(0, len(texts), EMBED_BATCH)
        ]
        if not parts:
            return np.zeros((0, self._model.dimensions), dtype=np.float32)
        return np.concatenate(parts)

    async def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        body = {"model": self._model_name, "input": list(texts), "encoding_format": "float"}
        try:
            response = await self._client.post("embeddings", json=body)
        except httpx.HTTPError as error:
            raise EmbeddingUnavailable(
                f"embeddings endpoint unreachable: {type(error).__name__}"
            ) from None
        if response.status_code != 200:
            raise EmbeddingUnavailable(f"embeddings endpoint answered {response.status_code}")
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            matrix = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError):
            raise EmbeddingUnavailable("embeddings endpoint answered no embeddings") from None
        if matrix.shape != (len(texts), self._model.dimensions):
            raise EmbeddingUnavailable(
                f"embeddings endpoint answered shape {list(matrix.shape)}, "
                f"expected [{len(texts)}, {self._model.dimensions}]"
            )
        return unit_rows(matrix)
