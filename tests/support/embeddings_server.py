"""A small server of our own that speaks the OpenAI embeddings API
(``POST /v1/embeddings``), standing in for vLLM, Ollama or OpenAI, none of which can be
downloaded here. Its vectors are the static model's, served over HTTP with the API's
shapes; ``behaviour`` makes it fail the ways a real endpoint does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Header, HTTPException

from memory.embeddings.choice import static_embedder

MODEL_NAME = "local-static"
DIMENSIONS = 256


@dataclass
class EndpointState:
    behaviour: Literal["ok", "error", "wrong-size"] = "ok"
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


def embeddings_app(state: EndpointState) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/embeddings")
    async def embeddings(
        body: dict[str, Any], authorization: str | None = Header(default=None)
    ) -> dict[str, Any]:
        state.requests.append(body)
        state.authorizations.append(authorization)
        if state.behaviour == "error":
            raise HTTPException(status_code=500, detail="model crashed")
        if body.get("model") != MODEL_NAME:
            raise HTTPException(status_code=404, detail="no such model")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = static_embedder().embed_now(texts)
        if state.behaviour == "wrong-size":
            vectors = vectors[:, :128]
        return {
            "object": "list",
            "model": MODEL_NAME,
            "data": [
                {"object": "embedding", "index": i, "embedding": vector.tolist()}
                for i, vector in reversed(list(enumerate(vectors)))  # any order: by index
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    return app
