"""memoryctl memory search: one memoryRef's live entries ranked against a query.

    memoryctl memory search --memory-ref REF QUERY [--limit N]
                            [--mode hybrid|semantic|text] [--tag T ...]
                            [--said-by NAME] [--said-after INSTANT]
                            [--said-before INSTANT] [--exclude-superseded]
                            [--explain] [--json]

Hybrid by default (BM25 and vectors fused by score, see
memory/search/ranking.py). Like ``get``, this is a read path and prints content: the
table shows each hit's place, its id whole, its text and what a later entry says of it
(a value superseded by another entry, or in conflict with one). Hits whose text is
identical to a better one's are folded into its row, named by id, so ten copies of one
note do not fill the page. ``--explain`` adds the fused score and each ranking's place,
with a line saying what they are; ``--json`` prints the whole result, nothing folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from pydantic import ValidationError
from rich import box
from rich.table import Table
from rich.text import Text

from memoryctl.cli import (
    JsonOption,
    MemoryRefOption,
    bad_input,
    checked_ref,
    console,
    plural,
    print_json,
    with_store,
)
from schemas.search import (
    DEFAULT_SEARCH_LIMIT,
    MAX_SEARCH_LIMIT,
    SearchHit,
    SearchMode,
    SearchRequest,
)

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
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Show each hit's fused score and its place in each ranking."
        ),
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
    rows = _folded(result.hits)
    console.print(_table(rows, explain=explain))
    folded = len(result.hits) - len(rows)
    same = f", {folded} identical to a hit above and folded into it" if folded else ""
    console.print(
        f"{plural(len(result.hits), 'hit')}{same} ({result.mode} search, "
        f"model {result.model or 'none'})",
        markup=False,
        soft_wrap=True,
    )
    if explain:
        console.print(EXPLAINED, markup=False, soft_wrap=True)


EXPLAINED = (
    "score: how relevant the fused ranking found the hit (higher is better); full-text "
    "and vector: the hit's place in the keyword (BM25) and the embedding ranking before "
    "they were fused, - when that ranking did not find it."
)


def _folded(hits: Sequence[SearchHit]) -> list[tuple[SearchHit, list[str]]]:
    """Each hit with the ids of the later hits whose text is the same, in rank order."""
    rows: list[tuple[SearchHit, list[str]]] = []
    first: dict[str, list[str]] = {}
    for hit in hits:
        same = first.get(hit.entry.content_sha256)
        if same is not None:
            same.append(hit.entry.id)
            continue
        first[hit.entry.content_sha256] = []
        rows.append((hit, first[hit.entry.content_sha256]))
    return rows


def _table(rows: list[tuple[SearchHit, list[str]]], *, explain: bool) -> Table:
    changed = any(hit.entry.superseded_by or hit.entry.conflicts_with for hit, _ in rows)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("#", justify="right", no_wrap=True)
    if explain:
        for name in ("score", "full-text", "vector"):
            table.add_column(name, justify="right", no_wrap=True)
    table.add_column("id", no_wrap=True)  # whole, to copy into `memory get`
    if changed:
        table.add_column("changed", overflow="fold")
    table.add_column("content", overflow="fold", ratio=1)
    for place, (hit, same) in enumerate(rows, 1):
        content = hit.entry.content.replace("\n", " ")
        shown = content[:SHOWN_CHARS] + ("…" if len(content) > SHOWN_CHARS else "")
        if same:
            shown += f" (identical: {', '.join(same)})"
        scores = [f"{hit.score:.3f}", str(hit.text_rank or "-"), str(hit.vector_rank or "-")]
        table.add_row(
            str(place),
            *(scores if explain else []),
            hit.entry.id,
            *([_changed(hit.entry.superseded_by, hit.entry.conflicts_with)] if changed else []),
            Text(shown),  # Text: stored text is never markup
        )
    return table
