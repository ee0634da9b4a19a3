"""SR-1 redaction throughput, and the tokenizer on the same text.

    python -m benchmarks.redaction_bench

Builds 1 MB of agent-memory-like text (notes, tool output, log lines) and registers
1,000 secrets of realistic shapes (API keys, tokens, JWTs, passwords with punctuation
including brackets); 3% of the sentences embed one of 300 of them (about 240
occurrences). Then, in the same run and on the same text:

- ``MemorySecretRegistry.redact`` (one Aho-Corasick pass, then scans near each marker) against
  the naive baseline (sort secrets by length, ``str.replace`` each), median of several
  runs each; both outputs are checked to hold no secret, and to be identical (no two
  occurrences overlap here, where the two rules agree);
- ``count_tokens`` on the whole 1 MB (tokens/s), and ``count_tokens_batch`` (serial)
  against tiktoken's threaded ``encode_ordinary_batch`` on the text cut into memory-sized
  entries, which re-checks the choice documented in ``memory/tokens.py``.

Runs in well under 30 s.
"""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from memory.redaction.chokepoint import MemorySecretRegistry, marker
from memory.tokens import count_tokens, count_tokens_batch, get_encoding

T = TypeVar("T")

TEXT_SIZE = 1_000_000
SECRETS = 1_000
EMBEDDED = 300

WORDS = (
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
    "deployment",
    "staging",
    "production",
    "rollback",
    "migration",
    "ticket",
    "priority",
    "owner",
    "budget",
    "forecast",
    "integration",
    "webhook",
    "latency",
    "incident",
    "postmortem",
    "credentials",
    "rotated",
    "vendor",
)
NAMES = ["Dana", "Priya", "Mateo", "Wen", "Olu", "Sasha", "Kenji", "Ines"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark"]


def _token(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def make_secret(rng: random.Random, index: int) -> tuple[str, str]:
    """(secretId, value) in one of the shapes a vault really holds."""
    alnum = string.ascii_letters + string.digits
    b64url = alnum + "-_"
    kind = index % 6
    if kind == 0:
        return f"stripe.live-{index:04d}", "sk_live_" + _token(rng, string.hexdigits[:16], 24)
    if kind == 1:
        return f"github.pat-{index:04d}", "ghp_" + _token(rng, alnum, 36)
    if kind == 2:
        upper = string.ascii_uppercase + string.digits
        return f"aws.access-key-{index:04d}", "AKIA" + _token(rng, upper, 16)
    if kind == 3:
        value = f"xoxb-{rng.randrange(10**11)}-{rng.randrange(10**12)}-{_token(rng, alnum, 24)}"
        return f"slack.bot-{index:04d}", value
    if kind == 4:
        parts = (_token(rng, b64url, 36), _token(rng, b64url, 60), _token(rng, b64url, 43))
        return f"jwt.service-{index:04d}", "eyJ" + ".".join(parts)
    punctuation = "!@#$%^&*()[]{}<>?_-+=~"
    return f"db.password-{index:04d}", _token(rng, alnum + punctuation, rng.randint(12, 24))


def sentence(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        who, company = rng.choice(NAMES), rng.choice(COMPANIES)
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
        return f"{who} at {company}: {body}. "
    if kind < 0.8:
        fields = {rng.choice(WORDS): rng.randint(0, 10**6) for _ in range(4)}
        pairs = ", ".join(f'"{key}": {value}' for key, value in fields.items())
        return "{" + pairs + "}\n"
    level = rng.choice(["INFO", "WARN", "ERROR"])
    stamp = f"2026-03-0{rng.randint(1, 9)}T12:{rng.randint(10, 59)}:00Z"
    return f"{stamp} {level} {rng.choice(WORDS)} ok\n"


def corpus(rng: random.Random, embedded: list[str]) -> str:
    parts: list[str] = []
    length = 0
    while length < TEXT_SIZE:
        part = sentence(rng)
        if rng.random() < 0.03:
            part += f"token {rng.choice(embedded)} was used. "
        parts.append(part)
        length += len(part)
    return "".join(parts)[:TEXT_SIZE]


def naive(text: str, secrets: dict[str, str]) -> str:
    for secret_id, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        text = text.replace(value, marker(secret_id))
    return text


def timed(function: Callable[[], T], runs: int) -> tuple[float, T]:
    """Median wall time of ``runs`` calls, and the last result."""
    samples: list[float] = []
    result: T | None = None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - start)
    assert result is not None
    return statistics.median(samples), result


def bench_redaction() -> str:
    rng = random.Random(7)
    secrets = dict(make_secret(rng, index) for index in range(SECRETS))
    text = corpus(rng, rng.sample(list(secrets.values()), EMBEDDED))

    start = time.perf_counter()
    registry = MemorySecretRegistry("bench")
    for secret_id, value in secrets.items():
        registry.register(secret_id, value)
    registry.contains_secret("builds the automaton")
    setup = time.perf_counter() - start

    ours, ours_out = timed(lambda: registry.redact(text), 7)
    base, base_out = timed(lambda: naive(text, secrets), 5)
    for output in (ours_out, base_out):
        assert not any(value in output for value in secrets.values()), "a secret survived"
    assert ours_out == base_out, "the two rules disagree on non-overlapping secrets"

    print(f"redaction: {len(text) / 1e6:.1f} MB of text, {len(secrets)} secrets registered,")
    print(f"  {ours_out.count('[REDACTED:')} occurrences replaced (outputs identical)")
    print(f"  register {len(secrets)} + build automaton : {setup * 1000:8.1f} ms")
    print(f"  MemorySecretRegistry.redact (median of 7): {ours * 1000:8.1f} ms")
    print(f"  naive sort + str.replace   (median of 5): {base * 1000:8.1f} ms")
    print(f"  ratio baseline / ours                   : {base / ours:8.1f}x")
    return text


def bench_tokens(text: str) -> None:
    get_encoding()  # load outside the timing
    seconds, tokens = timed(lambda: count_tokens(text), 3)
    print(f"count_tokens on {len(text) / 1e6:.1f} MB (median of 3):")
    print(f"  {tokens} tokens in {seconds * 1000:.1f} ms = {tokens / seconds / 1e6:.2f} M tokens/s")

    entries = [text[at : at + 500] for at in range(0, len(text), 500)]
    encoding = get_encoding()
    serial, counts = timed(lambda: count_tokens_batch(entries), 3)
    print(f"count_tokens_batch on {len(entries)} entries of 500 chars (median of 3):")
    print(f"  serial (count_tokens_batch)        : {serial * 1000:8.1f} ms")
    for threads in (2, 8):
        threaded, batches = timed(
            partial(encoding.encode_ordinary_batch, entries, num_threads=threads), 3
        )
        assert [len(batch) for batch in batches] == counts
        print(f"  encode_ordinary_batch, {threads} threads   : {threaded * 1000:8.1f} ms")


def main() -> None:
    start = time.perf_counter()
    text = bench_redaction()
    bench_tokens(text)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
