"""SR-1 redaction throughput: 1 MB of memory text with 1,000 registered secrets, our
Aho-Corasick chokepoint against the naive baseline (sort by length, str.replace per
secret), measured in the same run. Also the tokenizer's floor on the same text.

    python -m benchmarks.redaction_bench
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

from memory.redaction import MemorySecretRegistry
from memory.tokens import count_tokens

T = TypeVar("T")

WORDS = [
    "customer",
    "invoice",
    "follow-up",
    "prefers",
    "email",
    "renewal",
    "quote",
    "escalated",
    "dashboard",
    "refund",
    "contract",
    "meeting",
    "thursday",
    "pipeline",
    "security",
    "questionnaire",
    "onboarding",
]


def corpus(size: int, secrets: list[str], rng: random.Random) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)) + ". "
        if rng.random() < 0.05:
            sentence += f"token {rng.choice(secrets)} was used. "
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)[:size]


def naive(text: str, secrets: dict[str, str]) -> str:
    for secret_id, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(value, f"[REDACTED:{secret_id}]")
    return text


def timed(function: Callable[[], T], runs: int) -> tuple[float, T]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def main() -> None:
    rng = random.Random(7)
    secrets = {f"key-{i}": f"sk_live_{rng.getrandbits(96):024x}" for i in range(1000)}
    text = corpus(1_000_000, list(secrets.values()), rng)
    registry = MemorySecretRegistry("bench")
    for secret_id, value in secrets.items():
        registry.register(secret_id, value)
    registry.redact("warm up the automaton")

    ours, ours_out = timed(lambda: registry.redact(text), 5)
    base, base_out = timed(lambda: naive(text, secrets), 3)
    for output in (ours_out, base_out):
        assert not any(value in output for value in secrets.values()), "a secret survived"
    tokens_time, tokens = timed(lambda: count_tokens(text), 3)

    print("redaction of 1 MB with 1,000 secrets (median)")
    print(f"  aho-corasick chokepoint : {ours * 1000:8.1f} ms")
    print(f"  naive str.replace       : {base * 1000:8.1f} ms")
    print(f"  ratio baseline/ours     : {base / ours:8.1f}x")
    print(
        f"tokenizer floor on the same 1 MB: {tokens} tokens in {tokens_time * 1000:.1f} ms "
        f"({tokens / tokens_time / 1e6:.2f} M tokens/s)"
    )


if __name__ == "__main__":
    main()
