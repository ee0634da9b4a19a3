"""memoryctl index: a memoryRef's MEMORY-INDEX.json, as the last dream wrote it.

memoryctl index show --memory-ref REF                  print MEMORY-INDEX.json
"""

from __future__ import annotations

import typer

from memoryctl.cli import (
    EXIT_FAILED,
    MemoryRefOption,
    checked_ref,
    console,
    print_error,
    with_store,
)

index_app = typer.Typer(no_args_is_help=True, help="MEMORY-INDEX.json.")


@index_app.command("show")
def index_show(memory_ref: MemoryRefOption) -> None:
    """Print the latest MEMORY-INDEX.json of a memoryRef."""
    from memory.distillation.memory_index import INDEX_PATH

    ref = checked_ref(memory_ref)

    found = with_store(lambda store: store.index_file(ref))
    if found is None:
        print_error(f"no {INDEX_PATH} for {ref} yet (no dream has run)")
        raise typer.Exit(EXIT_FAILED)
    console.print_json(found[1].decode())
