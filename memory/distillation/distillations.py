"""Distillation and what it produces: the budgeted distill itself (memory/distillation/run.py
enforces the token budget and commits in one transaction), the immutable archives and
the MEMORY-INDEX.json workspace file."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from memory.distillation.memory_index import INDEX_PATH, index_digest, read_workspace_file
from memory.distillation.packing import Distiller
from memory.distillation.run import distill
from memory.indexes.vectors import EntryVectors
from memory.input_gate import TEXT_ID, possible
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef
from schemas.workflow_io import DistillationResult, DistillMemoryRequest, IndexDigest

ARCHIVES = tables.archives
Progress = Callable[[dict[str, object]], None]


class Distillations:
    def __init__(self, db: Database, vectors: EntryVectors | None = None) -> None:
        self.db = db
        self.vectors = vectors

    async def distill(
        self,
        request: DistillMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        distiller: Distiller | None = None,
        progress: Progress = lambda _: None,
    ) -> DistillationResult:
        return await distill(
            self.db,
            request,
            secrets=secrets,
            distiller=distiller,
            progress=progress,
            vectors=self.vectors,
        )

    async def archive_checksum(self, ref: MemoryRef, output_id: str) -> str | None:
        """The checksum of the live archive whose distilled entry is ``output_id``."""
        if not possible(TEXT_ID, output_id):
            return None
        query = select(ARCHIVES.c.checksum).where(
            scoped(ARCHIVES, ref), ARCHIVES.c.output_id == output_id
        )
        async with self.db.reading() as connection:
            found = (await connection.execute(query)).scalar_one_or_none()
        return str(found) if found is not None else None

    async def index_digest(self, ref: MemoryRef) -> IndexDigest:
        async with self.db.reading() as connection:
            return await index_digest(connection, ref)

    async def index_file(
        self, ref: MemoryRef, version: int | None = None
    ) -> tuple[int, bytes] | None:
        """The latest (or a given) version of MEMORY-INDEX.json: (version, body)."""
        async with self.db.reading() as connection:
            return await read_workspace_file(connection, ref, INDEX_PATH, version)
