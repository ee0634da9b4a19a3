"""The re-embed workflow's input and its activity's request and result: cursors, counts
and the model id, never a text."""

from __future__ import annotations

from pydantic import Field

from schemas.base import WireModel, WireResult
from schemas.memory_entry import EntryId
from schemas.registry import register

MAX_REEMBED_BATCH = 5000


class EmbeddingCursor(WireModel):
    """Where the catch-up goes on: the last (memoryRef, entry id) it passed."""

    memory_ref: str = Field(min_length=1, max_length=1024)
    entry_id: EntryId


class ReembedInput(WireModel):
    """{} from the Temporal CLI: embed every live entry that has no vector of the
    worker's configured model (or one of an older text), then retire other models'
    vectors. The cursor and counts carry over continue-as-new."""

    batch_size: int = Field(default=500, ge=1, le=MAX_REEMBED_BATCH)
    after: EmbeddingCursor | None = None
    embedded_so_far: int = Field(default=0, ge=0)


class ReembedResult(WireResult):
    """What a finished re-embedding did, by name (a bare count in the CLI's and the UI's
    result read as nothing in particular)."""

    embedded: int = Field(ge=0, description="entries given a vector of the configured model")
    retired: int = Field(ge=0, description="vectors of other models deleted")


class CatchUpVectorsRequest(WireModel):
    batch_size: int = Field(ge=1, le=MAX_REEMBED_BATCH)
    # Pages one activity works through before handing the cursor back to the workflow
    # (its progress shows in the UI between activities).
    max_pages: int = Field(default=20, ge=1, le=1000)
    after: EmbeddingCursor | None = None


class CatchUpVectorsResult(WireResult):
    model: str | None
    embedded: int
    after: EmbeddingCursor | None
    done: bool


class RetireVectorsRequest(WireModel):
    batch_size: int = Field(default=5000, ge=1, le=50_000)


class RetireVectorsResult(WireResult):
    model: str | None
    retired: int


register("workflow-reembed-input", ReembedInput)
register("workflow-reembed-result", ReembedResult)
