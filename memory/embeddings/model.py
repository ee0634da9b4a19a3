"""What an embedding model is to the store: an id, a dimension count and a way to turn
texts into unit vectors.

Each stored vector records the model id and the dimension count, so a change of model is
visible in the data (the re-embed workflow replaces vectors of another model) and two
models' vectors are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

# Texts embedded per call of the model: bounds one request's size (and the memory a
# batch takes) whatever a caller passes.
EMBED_BATCH = 256


@dataclass(frozen=True)
class EmbeddingModel:
    """``id``: stable and unique per model and dimension count ("wordllama/l2_supercat-256",
    "openai-compatible/text-embedding-3-small-1536")."""

    id: str
    dimensions: int


class EmbeddingUnavailable(RuntimeError):
    """The model could not embed (endpoint down, timeout, wrong answer). The message
    never carries the texts."""


class Embedder(Protocol):
    @property
    def model(self) -> EmbeddingModel: ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector (float32, L2 norm 1, or all zeros for a text with no known
        token) per text, in order."""
        ...


def unit_rows(matrix: Vectors) -> Vectors:
    """Rows scaled to length 1 (cosine distance is then 1 - dot); a zero row stays zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0).astype(np.float32)
