"""An optional judge for what the update rules leave open (memory/sameness/updates.py):
a pair the rules record as a conflict may be an update they could not see. Off by
default; on, a pass asks an OpenAI-compatible chat endpoint (``POST
{base}/chat/completions``: vLLM, Ollama, LiteLLM, OpenAI) about each new conflict,
within a per-pass budget of calls and seconds.

What it may decide: ``UPDATE`` turns the conflict into a supersession (the later entry
supersedes the earlier, ``basis: judge``); anything else (``DISTINCT``, ``UNSURE``, an
error, a timeout, an answer it cannot read, the budget spent) leaves the conflict as the
rules recorded it. It never merges and never touches what the rules decided.

Content goes from the pass (an activity) to the endpoint and nowhere else: not into the
workflow's history (the activity's input and result carry ids and counts), not into a log
line or an error message (they name the endpoint's status, never a text).

Settings (environment): ``AGENT_MEMORY_UPDATE_JUDGE`` (``off``, the default, or
``openai-compatible``), ``AGENT_MEMORY_UPDATE_JUDGE_URL`` (the API base, e.g.
``http://vllm:8000/v1``), ``AGENT_MEMORY_UPDATE_JUDGE_MODEL``, optionally
``AGENT_MEMORY_UPDATE_JUDGE_API_KEY``, ``AGENT_MEMORY_UPDATE_JUDGE_TIMEOUT`` (seconds per
call, default 10), ``AGENT_MEMORY_UPDATE_JUDGE_MAX_CALLS`` (per pass, default 20) and
``AGENT_MEMORY_UPDATE_JUDGE_BUDGET`` (seconds per pass, default 60).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Literal

import httpx
from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory.embeddings.openai_compatible import endpoint_client

INSTRUCTIONS = (
    "You compare two notes from an assistant's long-term memory. The EARLIER note was "
    "written before the LATER note. Answer UPDATE if the later note states a new value "
    "for the same fact about the same subject, so the earlier note is out of date. "
    "Answer DISTINCT if they are two different facts that can both be true. Answer "
    "UNSURE otherwise. Answer with exactly one word: UPDATE, DISTINCT or UNSURE."
)


class JudgeAnswer(StrEnum):
    UPDATE = "update"
    DISTINCT = "distinct"
    UNSURE = "unsure"


class JudgeSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    provider: Literal["off", "openai-compatible"] = Field(
        default="off", alias="AGENT_MEMORY_UPDATE_JUDGE"
    )
    url: str | None = Field(default=None, alias="AGENT_MEMORY_UPDATE_JUDGE_URL")
    model: str | None = Field(default=None, alias="AGENT_MEMORY_UPDATE_JUDGE_MODEL")
    api_key: str | None = Field(default=None, alias="AGENT_MEMORY_UPDATE_JUDGE_API_KEY")
    timeout_seconds: float = Field(
        default=10.0, gt=0, le=120, alias="AGENT_MEMORY_UPDATE_JUDGE_TIMEOUT"
    )
    max_calls: int = Field(default=20, ge=1, le=1000, alias="AGENT_MEMORY_UPDATE_JUDGE_MAX_CALLS")
    budget_seconds: float = Field(
        default=60.0, gt=0, le=600, alias="AGENT_MEMORY_UPDATE_JUDGE_BUDGET"
    )

    @model_validator(mode="after")
    def _endpoint_is_complete(self) -> JudgeSettings:
        if self.provider == "openai-compatible" and not (self.url and self.model):
            raise ValueError(
                "an openai-compatible update judge needs AGENT_MEMORY_UPDATE_JUDGE_URL and "
                "AGENT_MEMORY_UPDATE_JUDGE_MODEL"
            )
        return self


class UpdateJudge:
    """One endpoint, asked one pair at a time."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_seconds: float = 10.0,
        max_calls: int = 20,
        budget_seconds: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self.max_calls = max_calls
        self.budget_seconds = budget_seconds
        self._client = endpoint_client(base_url, api_key, timeout_seconds, transport)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def ask(self, earlier: str, later: str) -> JudgeAnswer:
        """The endpoint's answer; UNSURE on any failure (never raised, never logged with
        the texts)."""
        body = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 3,
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": f"EARLIER: {earlier}\nLATER: {later}"},
            ],
        }
        try:
            response = await self._client.post("chat/completions", json=body)
            if response.status_code != 200:
                return JudgeAnswer.UNSURE
            said = str(response.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            return JudgeAnswer.UNSURE
        word = said.strip().strip(".!").casefold()
        return JudgeAnswer(word) if word in set(JudgeAnswer) else JudgeAnswer.UNSURE


@dataclass
class JudgeRound:
    """One pass's use of the judge: its budget, and what it was asked and answered."""

    judge: UpdateJudge
    calls: int = 0
    updates: int = 0
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    def spent(self) -> bool:
        return (
            self.calls >= self.judge.max_calls
            or time.monotonic() - self.started >= self.judge.budget_seconds
        )

    async def ask(self, earlier: str, later: str) -> JudgeAnswer:
        self.calls += 1
        answer = await self.judge.ask(earlier, later)
        self.updates += answer is JudgeAnswer.UPDATE
        return answer


def judge_for(settings: JudgeSettings) -> UpdateJudge | None:
    if settings.provider == "off":
        return None
    assert settings.url and settings.model  # the validator's
    return UpdateJudge(
        settings.url,
        settings.model,
        api_key=settings.api_key,
        timeout_seconds=settings.timeout_seconds,
        max_calls=settings.max_calls,
        budget_seconds=settings.budget_seconds,
    )


@cache
def configured_judge() -> UpdateJudge | None:
    """The judge this process's environment chooses (read once); None: off."""
    return judge_for(JudgeSettings())
