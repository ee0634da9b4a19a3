"""The offline default: WordLlama's l2_supercat static token embeddings, 256 dimensions,
whose weights (16 MB) and tokenizer ship inside the ``wordllama`` wheel.

Why this model: it is the one the issue names, it needs no download and no GPU, it loads
in about half a second and embeds about 30,000 short texts a second on one core
(benchmarks/embedding_bench.py), which lets the store embed inside the write path. A
static model averages token vectors, so it knows that "likes" is near "prefers" but not
that "not" reverses a sentence: every merge it proposes still passes the conflict guard.

``WordLlama.load()`` looks for its tokenizer under ``wordllama/tokenizer/`` while the
wheel ships it under ``wordllama/tokenizers/``, then falls back to a Hugging Face
download; this module reads both files from the package directly, so nothing is ever
fetched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memory.embeddings.model import EMBED_BATCH, EmbeddingModel, Vectors, unit_rows

if TYPE_CHECKING:
    from wordllama.inference import WordLlamaInference

MODEL = EmbeddingModel(id="wordllama/l2_supercat-256", dimensions=256)
# Below this many texts the model runs on the caller's thread (a few hundred µs at most);
# above it, on a worker thread so the event loop keeps serving.
INLINE_TEXTS = 32


class StaticWordEmbedder:
    """Thread-safe; the weights load on first use, once per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @property
    def model(self) -> EmbeddingModel:
        return MODEL

    @cached_property
    def _inference(self) -> WordLlamaInference:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with _root_logging_kept():
            # wordllama calls logging.basicConfig(level=INFO) when imported: every
            # process that embedded something then printed INFO lines of every library
            # on stderr (the CLI, the quick start on Ctrl-C).
            import wordllama
            from wordllama.inference import WordLlamaInference

        root = Path(wordllama.__file__).parent
        weights = root / "weights" / "l2_supercat_256.safetensors"
        tokenizer = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
        with safe_open(str(weights), framework="np") as tensors:
            matrix = tensors.get_tensor("embedding.weight")
        return WordLlamaInference(matrix, Tokenizer.from_file(str(tokenizer)))

    def load(self) -> None:
        """Load the weights now (worker and API start-up) instead of on the first write."""
        with self._lock:
            self._inference  # noqa: B018 - cached_property: the access loads it

    def embed_now(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, MODEL.dimensions), dtype=np.float32)
        with self._lock:
            matrix = self._inference.embed(list(texts), batch_size=EMBED_BATCH)
        return unit_rows(matrix)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) <= INLINE_TEXTS:
            return self.embed_now(texts)
        return await asyncio.to_thread(self.embed_now, texts)


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
