"""memoryctl demo: the quick start's main job.

    memoryctl demo [--exit-after-run] [--new-day] [--temporal-port P] [--ui-port P] [--api-port P]

The command; the stack it runs (embedded PostgreSQL, the Temporal dev server, a worker,
the HTTP API, seeded memory and one dream per demo tenant) is memoryctl/demo_stack.py,
imported only when the command runs.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer


def demo(
    exit_after_run: Annotated[
        bool, typer.Option("--exit-after-run", help="Stop the stack once the dream is shown.")
    ] = False,
    temporal_port: Annotated[int, typer.Option(help="Temporal dev server gRPC port.")] = 7233,
    ui_port: Annotated[int, typer.Option(help="Temporal UI port.")] = 8233,
    api_port: Annotated[int, typer.Option(help="HTTP API port.", min=1, max=65535)] = 8000,
    new_day: Annotated[
        bool,
        typer.Option("--new-day", help="Add another day's notes (the demo memory is seeded once)."),
    ] = False,
) -> None:
    """Start embedded PostgreSQL, the Temporal dev server, the worker and the HTTP API;
    run a dream."""
    from memory.storage.embedded import default_data_dir
    from memoryctl.cli import console, print_error
    from memoryctl.demo_guard import QuickStartRefused, check_ports, state_dir_lock

    try:
        # Checked before the stack's imports (Temporal, the store, the worker: seconds),
        # so a second quick start is refused at once; the lock is held for the whole run.
        with state_dir_lock(default_data_dir().parent):
            check_ports(
                {"--temporal-port": temporal_port, "--ui-port": ui_port, "--api-port": api_port}
            )
            from memoryctl.demo_stack import DemoOptions, run_demo

            options = DemoOptions(
                exit_after_run=exit_after_run,
                new_day=new_day,
                temporal_port=temporal_port,
                ui_port=ui_port,
                api_port=api_port,
            )
            status = asyncio.run(run_demo(options))
    except QuickStartRefused as refused:
        print_error(str(refused))
        raise typer.Exit(refused.exit_status) from None
    except KeyboardInterrupt:
        console.print(
            "Interrupted: stopped the API, the worker and the Temporal dev server. A dream "
            "left running resumes on the next run."
        )
        raise typer.Exit(130) from None
    raise typer.Exit(status)
