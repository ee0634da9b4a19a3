"""Consolidation passes, their undo and their audit (memory/consolidation/ does the work:
plan, claim at the version read, mark, lineage, events, in one transaction)."""

from __future__ import annotations

from collections.abc import Callable

from memory.consolidation.apply import consolidate
from memory.consolidation.undo import open_conflicts, superseded_entries, undo_pass
from memory.consolidation.update_judge import UpdateJudge
from memory.indexes.vectors import EntryVectors
from memory.input_gate import PASS_ID, checked, checked_int, possible
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage.database import Database
from schemas.consolidation import (
    ConflictRecord,
    ConsolidateMemoryRequest,
    ConsolidationResult,
    SupersededEntry,
    UndoReport,
)
from schemas.errors import InvalidInput
from schemas.memory_entry import MAX_LIST_LIMIT
from schemas.memory_ref import MemoryRef

Progress = Callable[[dict[str, object]], None]


class Consolidations:
    def __init__(
        self,
        db: Database,
        vectors: EntryVectors | None = None,
        judge: UpdateJudge | None = None,
    ) -> None:
        self.db = db
        self.vectors = vectors
        self.judge = judge

    async def consolidate(
        self,
        request: ConsolidateMemoryRequest,
        *,
        secrets: MemorySecretRegistry | None = None,
        progress: Progress = lambda details: None,
    ) -> ConsolidationResult:
        """One pass over the ref's long-term entries, committed in one transaction."""
        request = checked(ConsolidateMemoryRequest, request)
        rewritten: set[str] = set()
        async with self.db.writing() as connection:
            result = await consolidate(
                connection,
                request,
                now=self.db.now(),
                secrets=secrets,
                progress=progress,
                links=self.db.intent_links,
                rewritten=rewritten,
                judge=self.judge,
            )
        if self.vectors is not None:
            # Survivors re-redacted lost their vectors in the pass; embed the new text.
            await self.vectors.catch_up_entries(request.memory_ref, sorted(rewritten))
        return result

    async def undo(self, ref: MemoryRef, pass_id: str) -> UndoReport:
        if not possible(PASS_ID, pass_id):
            # Named as the CLI option is; the value typed is not repeated.
            raise InvalidInput(
                "--pass", "must be a pass id (cp- and 20 hex digits, as consolidate run prints)"
            )
        async with self.db.writing() as connection:
            return await undo_pass(connection, ref, pass_id, self.db.now(), self.db.intent_links)

    async def superseded(
        self, ref: MemoryRef, *, pass_id: str | None = None, limit: int = 1000
    ) -> list[SupersededEntry]:
        """Audit: rows consolidation marked (merged or superseded), oldest mark first."""
        limit = checked_int("limit", limit, 1, MAX_LIST_LIMIT)
        if pass_id is not None and not possible(PASS_ID, pass_id):
            return []
        async with self.db.reading() as connection:
            return await superseded_entries(connection, ref, pass_id, limit)

    async def conflicts(self, ref: MemoryRef, *, limit: int = 1000) -> list[ConflictRecord]:
        """Look-alike pairs consolidation left unmerged, while both are live."""
        limit = checked_int("limit", limit, 1, MAX_LIST_LIMIT)
        async with self.db.reading() as connection:
            return await open_conflicts(connection, ref, self.db.now(), limit)
