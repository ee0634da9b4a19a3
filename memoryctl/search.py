"""memoryctl memory search: one memoryRef's live entries ranked against a query.

    memoryctl memory search --memory-ref REF QUERY [--limit N]
                            [--mode hybrid|semantic|text] [--tag T ...]
                            [--said-by NAME] [--said-after INSTANT]
                            [--said-before INSTANT] [--exclude-superseded] [--json]

Hybrid by default (BM25 and vectors fused by score, see
memory/search/ranking.py). Like ``get``, this is a read path and prints content: the
table shows each hit's rank, score, the leg ranks, what a later entry says of it (a
value superseded by another entry, or in conflict with one) and its text on one line;
``--json`` prints the whole result.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table
from rich.text import Text

from memoryctl.cli import (
    JsonOption,
    MemoryRefOption,
    bad_input,
    checked_ref,
    console,
    print_json,
    with_store,
)
from schemas.search import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchMode, SearchRequest

# Characters of content the table shows per hit (the whole text is in --json).
SHOWN_CHARS = 120


def _changed(superseded_by: str | None, conflicts_with: tuple[str, ...] | None) -> str:
    if superseded_by:
        return f"superseded by {superseded_by}"
    if conflicts_with:
        return "conflicts with " + ", ".join(conflicts_with)
    return "-"


def search(
    memory_ref: MemoryRefOption,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=MAX_SEARCH_LIMIT)
    ] = DEFAULT_SEARCH_LIMIT,
    mode: Annotated[SearchMode, typer.Option("--mode")] = SearchMode.HYBRID,
    tags: Annotated[
        list[str] | None, typer.Option("--tag", help="Only entries with this tag (repeat: all).")
    ] = None,
    said_by: Annotated[
        str | None, typer.Option("--said-by", help="Only what this person said (metadata.saidBy).")
    ] = None,
    said_after: Annotated[
        str | None,
        typer.Option(
            "--said-after",
            help="Only what was said after this ISO-8601 instant (metadata.saidAt, else when "
            "it was written).",
        ),
    ] = None,
    said_before: Annotated[
        str | None,
        typer.Option("--said-before", help="Only what was said before this ISO-8601 instant."),
    ] = None,
    exclude_superseded: Annotated[
        bool,
        typer.Option("--exclude-superseded", help="Leave out entries a later entry supersedes."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Entries ranked by relevance to QUERY, best first (a changed fact's newer value
    right before its older one)."""
    ref = checked_ref(memory_ref)
    try:
        request = SearchRequest.model_validate(
            {
                "query": query,
                "limit": limit,
                "mode": mode,
                "tags_all": tuple(tags or ()),
                "said_by": said_by,
                "said_after": said_after,
                "said_before": said_before,
                "exclude_superseded": exclude_superseded,
            }
        )
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "QUERY"
        raise bad_input(f"{field}: {first['msg']}") from None
    result = with_store(lambda store: store.search(ref, request))
    if as_json:
        print_json(result.to_wire())
        return
    table = Table("#", "score", "text", "vector", "id", "changed", "content", box=None)
    for rank, hit in enumerate(result.hits, 1):
        content = hit.entry.content.replace("\n", " ")
        table.add_row(
            str(rank),
            f"{hit.score:.4f}",
            str(hit.text_rank or "-"),
            str(hit.vector_rank or "-"),
            hit.entry.id,
            _changed(hit.entry.superseded_by, hit.entry.conflicts_with),
            Text(content[:SHOWN_CHARS] + ("…" if len(content) > SHOWN_CHARS else "")),
        )
    console.print(table)
    console.print(f"{len(result.hits)} hits ({result.mode}, model {result.model or 'none'})")
