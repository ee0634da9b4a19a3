"""A small local server that speaks the OpenAI chat completions API (``POST
/v1/chat/completions``), standing in for an LLM endpoint the update judge would call
(memory/consolidation/update_judge.py). It answers what the test sets, records every
request, and can fail or stall."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Header, HTTPException

MODEL_NAME = "local-judge"


@dataclass
class ChatState:
    answer: str = "UPDATE"
    behaviour: str = "ok"  # "ok", "error", "slow"
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


def chat_app(state: ChatState) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(
        body: dict[str, Any], authorization: str | None = Header(default=None)
    ) -> dict[str, Any]:
        state.requests.append(body)
        state.authorizations.append(authorization)
        if state.behaviour == "error":
            raise HTTPException(status_code=500, detail="model crashed")
        if state.behaviour == "slow":
            await asyncio.sleep(5)
        if body.get("model") != MODEL_NAME:
            raise HTTPException(status_code=404, detail="no such model")
        return {
            "object": "chat.completion",
            "model": MODEL_NAME,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": state.answer},
                    "finish_reason": "stop",
                }
            ],
        }

    return app
