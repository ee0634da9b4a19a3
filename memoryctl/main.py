"""memoryctl: the project's command line.

    memoryctl demo [--exit-after-run]                      the quick start's main job
    memoryctl schedule create --memory-ref REF [--token-budget N] [--cron EXPR]
    memoryctl schedule list | trigger ID | delete ID
    memoryctl db upgrade                                   apply migrations to DATABASE_URL
    memoryctl index show --memory-ref REF                  print MEMORY-INDEX.json
    memoryctl events --memory-ref REF                      print the content-free event log
    memoryctl events tail --memory-ref REF [--type T ...] [--after SEQ] [--follow] [--json]
    memoryctl forget --memory-ref REF (--id ID ... | --tag TAG | --subject S [--tenant-wide])
                     [--dry-run] [--yes] [--json]          erase entries and their derived copies
    memoryctl lineage --memory-ref REF --id ID [--json]    where an entry's text went
    memoryctl consolidate run | audit | conflicts | undo   merge duplicates, link changed facts
    memoryctl commitments infer | list | show | cancel     promises found in memory
    memoryctl proposals list | show | revise | apply | decide | reject | archive
                                                           automations waiting for review
    memoryctl memory put | get | list | search | forget    entries by hand
    memoryctl mcp --memory-ref REF                         the MCP server over stdio
    memoryctl dream run --memory-ref REF [--token-budget N] [--json]   a dream now, waited for
    memoryctl dream fleet [--tenant T] [--json]    every agent with new work, one workflow
    memoryctl keys create --tenant T | list | revoke KEY_ID   the HTTP API's keys
    memoryctl serve [--host H] [--port P]                  run the HTTP API until Ctrl-C
    memoryctl capabilities [--json]                        the live discovery document

Each group's own --help (memoryctl consolidate --help) lists its commands and options.

Every failure is one line on stderr, never a traceback:
  exit 2  bad input, naming the field (memoryRef, token-budget, cron, DATABASE_URL, ...)
  exit 1  the operation was refused (no such schedule or pass, schedule id taken, a pass
          already running, an undo whose key is taken again) or Temporal or
          the database cannot be reached (named with its address, never a password)
Nothing is written when a command fails.
"""

from __future__ import annotations

import sys

import typer

from memoryctl.capabilities import capabilities
from memoryctl.cli import EXIT_BAD_INPUT, console, exit_process, print_error
from memoryctl.commitments import commitments_app
from memoryctl.consolidate import consolidate_app
from memoryctl.db import db_app
from memoryctl.demo import demo
from memoryctl.dream import dream_app
from memoryctl.entries import memory_app
from memoryctl.events import events_app
from memoryctl.forget import forget, lineage
from memoryctl.index import index_app
from memoryctl.keys import keys_app
from memoryctl.mcp import mcp
from memoryctl.payload_keys import payload_keys_app
from memoryctl.proposals import proposals_app
from memoryctl.schedule import schedule_app
from memoryctl.serve import serve
from memoryctl.usage import show_flags_without_a_type, usage_line

show_flags_without_a_type()

# The root: each command module owns its group (or its one command); this only puts
# them together, in the order --help lists them.
app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
app.add_typer(schedule_app, name="schedule")
app.add_typer(db_app, name="db")
app.add_typer(index_app, name="index")
app.add_typer(consolidate_app, name="consolidate")
app.add_typer(commitments_app, name="commitments")
app.add_typer(proposals_app, name="proposals")
app.add_typer(events_app, name="events")
app.add_typer(memory_app, name="memory")
app.add_typer(dream_app, name="dream")
app.add_typer(keys_app, name="keys")
app.add_typer(payload_keys_app, name="payload-keys")
app.command("serve")(serve)
app.command("capabilities")(capabilities)
app.command("demo")(demo)
app.command("forget")(forget)
app.command("lineage")(lineage)
app.command("mcp")(mcp)


def main() -> None:
    """The console script (see cli.exit_process for how it ends)."""
    try:
        run_app()
    except SystemExit as done:
        code = done.code
        exit_process(code if isinstance(code, int) else 0 if code is None else 1)


def run_app() -> None:
    """Run ``app`` on sys.argv and raise SystemExit with its status. Click's usage errors
    (a missing option, --token-budget 0) are one line too, like every other failure,
    instead of a framed help box."""
    # Typer 0.2x vendors click; its exception classes are only importable from there.
    from typer._click.exceptions import UsageError

    try:
        status = app(standalone_mode=False)
    except UsageError as error:
        if error.format_message():
            print_error(f"{usage_line(error, sys.argv[1:])} (see --help)")
        elif error.ctx is not None:  # no arguments at all: show the help
            console.print(error.ctx.get_help(), markup=False)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except typer.Abort:
        raise SystemExit(130) from None
    raise SystemExit(status if isinstance(status, int) else 0)


if __name__ == "__main__":
    main()
