"""memoryctl db: the memory store's database.

memoryctl db upgrade                                   apply migrations to DATABASE_URL
"""

from __future__ import annotations

import typer

from memoryctl.cli import JsonOption, console, database_engine, print_json, run_action

db_app = typer.Typer(no_args_is_help=True, help="The memory store's database.")


@db_app.command("upgrade")
def db_upgrade(as_json: JsonOption = False) -> None:
    """Apply the Alembic migrations to DATABASE_URL (or the embedded server)."""
    from memory.storage.engines import migrate

    async def action() -> None:
        engine = database_engine()
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    run_action(action)
    if as_json:
        print_json({"schema": "head"})
        return
    console.print("database schema is at head")
