"""What every memoryctl command shares: exit statuses, the one-line failure path
(``run_action``), the bounded Temporal client and the store over DATABASE_URL
(``with_store``, ``open_store``), the secrets vault, and argument checks
(``checked_ref`` parses a memoryRef once, at the edge).

Every command module (memoryctl/entries.py, memoryctl/consolidate.py, ...) takes its
shared helpers from here and only from here; memoryctl/main.py puts the modules'
commands and groups together."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console

from schemas.errors import InvalidInput, MemoryError_

if TYPE_CHECKING:
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.ext.asyncio import AsyncEngine
    from temporalio.client import Client
    from temporalio.service import RPCError

    from memory.redaction.vault import FileSecretVault
    from memory.store import PostgresMemoryStore
    from schemas.memory_ref import MemoryRef


T = TypeVar("T")
EXIT_FAILED = 1  # refused (no such schedule, id taken) or infrastructure unreachable
EXIT_BAD_INPUT = 2
# A server that accepts TCP but never answers would otherwise hang the command: asyncpg
# waits 60 s and the Temporal client indefinitely. A few seconds tells the user sooner.
TEMPORAL_CONNECT_TIMEOUT_S = 5.0
DATABASE_CONNECT_TIMEOUT_S = 5.0
UNDEFINED_TABLE = "42P01"  # PostgreSQL's SQLSTATE for a database never migrated

console = Console()
errors = Console(stderr=True)

# Escaped: typer renders option help as rich markup, where "[/...]" is a closing tag
# (unescaped, every --help of a command with this option failed with a MarkupError).
MEMORY_REF_HELP = r"mem://<tenant>/<agent>\[/<scope>]"
MemoryRefOption = Annotated[str, typer.Option("--memory-ref", help=MEMORY_REF_HELP)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


class Unreachable(Exception):
    """A service the command needs did not answer; the message is the one line to print."""

    exit_status = EXIT_FAILED


def plural(count: int, noun: str, many: str | None = None) -> str:
    """ "1 archive", "3 archives", "0 archives" (``many``: an irregular plural)."""
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, red, on one line."""
    # markup=False: messages quote grammar like mem://<tenant>/<agent>[/<scope>].
    # soft_wrap=True: one message is one line, however narrow the terminal.
    errors.print(f"error: {message}", markup=False, style="red", soft_wrap=True)


def bad_input(message: str) -> typer.Exit:
    """One line on stderr naming the option, then exit 2: raise what this returns."""
    print_error(message)
    return typer.Exit(EXIT_BAD_INPUT)


def run_action(action: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine; every expected failure becomes one line on stderr and an exit
    status (see the module docstring). Anything else is a bug and keeps its traceback."""
    try:
        return asyncio.run(action())  # type: ignore[arg-type]
    except ValidationError as error:
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"]) or "input"
            print_error(f"{field}: {problem['msg']}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except Exception as error:
        failure = _failure(error)
        if failure is None:
            raise
        status, message = failure
        print_error(message)
        raise typer.Exit(status) from None


def _failure(error: Exception) -> tuple[int, str] | None:
    """(exit status, one line) for an error the user can act on, else None."""
    # Imported here: a command that succeeds never pays for the other half's imports.
    from sqlalchemy.exc import DBAPIError
    from temporalio.service import RPCError

    if isinstance(error, BrokenPipeError):
        # The reader went away (| head -1): not the database's fault. Click ends the
        # command without a word, exit 1, as it does for any closed pipe.
        return None
    if isinstance(error, InvalidInput):
        return EXIT_BAD_INPUT, str(error)
    if isinstance(error, MemoryError_):  # refused by the store: not found, conflict, ...
        return EXIT_FAILED, f"{error.code}: {error}"
    exit_status = getattr(error, "exit_status", None)  # Unreachable, schedules.ScheduleError
    if isinstance(exit_status, int):
        return exit_status, str(error)
    if isinstance(error, RPCError):
        return EXIT_FAILED, _temporal_refusal(error)
    if isinstance(error, OSError | DBAPIError):
        # Temporal connect errors arrive as Unreachable (see temporal_client), so what is left
        # here comes from asyncpg: refused, unknown host, timed out, or a server answer.
        return EXIT_FAILED, _database_failure(error)
    return None


# ---------------------------------------------------------------------- Temporal


def _temporal_address() -> str:
    from runtime.settings import Settings

    return Settings().temporal_address


def _cannot_reach_temporal(reason: str) -> str:
    return (
        f"cannot reach Temporal at {_temporal_address()}: {reason} "
        "(is the server running? set TEMPORAL_ADDRESS)"
    )


_temporal_connected = False


def exit_process(status: int) -> NoReturn:
    """End the command with ``status``. Once a Temporal client was connected, skip the
    interpreter's finalization: the SDK's Rust runtime threads can crash it
    (temporalio/sdk-python#300, "PyGILState_Release ... finalizing"), which turned a
    command that had done its work and printed its output into exit status -11 now and
    then. Commands close what they own (database engines) before returning."""
    if _temporal_connected:
        sys.stdout.flush()
        sys.stderr.flush()
        # os._exit skips exit handlers, the embedded PostgreSQL's among them: release
        # its handle first, or the server would never be stopped again.
        from memory.storage.embedded import release_embedded_servers

        release_embedded_servers()
        os._exit(status)
    raise SystemExit(status)


def temporal_client_made() -> None:
    """Call before a command makes a Temporal client of its own (serve, capabilities):
    it then ends the way exit_process describes."""
    global _temporal_connected
    _temporal_connected = True


async def temporal_client() -> Client:
    """The client every schedule command uses, failing as Unreachable within seconds."""
    from runtime.client import connect

    temporal_client_made()
    try:
        return await asyncio.wait_for(connect(), TEMPORAL_CONNECT_TIMEOUT_S)
    except TimeoutError:
        reason = f"no answer within {TEMPORAL_CONNECT_TIMEOUT_S:g} s"
        raise Unreachable(_cannot_reach_temporal(reason)) from None
    except RuntimeError as error:
        # How Client.connect reports every failure to connect: "Failed client connect: ..."
        raise Unreachable(_cannot_reach_temporal(_connect_reason(str(error)))) from None


def _connect_reason(message: str) -> str:
    # The Rust core's message is a long debug dump; name the cause in a few words.
    if "ConnectionRefused" in message:
        return "connection refused"
    if "dns error" in message:
        return "unknown host"
    return "no Temporal frontend answered"


def _temporal_refusal(error: RPCError) -> str:
    from temporalio.service import RPCStatusCode

    if error.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED):
        return _cannot_reach_temporal("the server went away")
    return f"Temporal at {_temporal_address()}: {error.status.name}: {error.message}"


# ---------------------------------------------------------------------- database


def _database_url() -> str | None:
    return os.environ.get("DATABASE_URL") or None


def database_target() -> str:
    """host:port/database of DATABASE_URL (user and password left out)."""
    from sqlalchemy.engine import make_url

    url = _database_url()
    if not url:
        return "the embedded PostgreSQL"
    parsed = make_url(url)
    host = parsed.host or str(parsed.query.get("host", "localhost"))
    port = f":{parsed.port}" if parsed.port else ""
    return f"{host}{port}/{parsed.database or ''}"


def check_database_url() -> None:
    from sqlalchemy.engine import make_url

    url = _database_url()
    if url is None:
        return
    rule = "must be a URL of the form postgresql://user:password@host:port/database"
    try:
        parsed = make_url(url)
    except Exception:  # ArgumentError, or ValueError for a non-numeric port
        # Never echo the URL: it may carry the password.
        raise InvalidInput("DATABASE_URL", rule) from None
    if parsed.get_backend_name() not in ("postgresql", "postgres"):
        raise InvalidInput("DATABASE_URL", rule)


def database_engine() -> AsyncEngine:
    """The engine under every command's store (and ``db upgrade``'s migrations):
    DATABASE_URL checked, connects bounded."""
    from sqlalchemy import event

    from memory.storage.engines import create_engine, database_url_from_env

    check_database_url()
    engine = create_engine(database_url_from_env(attach_to_running=True))
    event.listen(engine.sync_engine, "do_connect", _bounded_connect)
    return engine


def _bounded_connect(dialect: Any, record: Any, cargs: Any, cparams: dict[str, Any]) -> None:
    # asyncpg's connect timeout. The engine's own (if any) suits a worker riding out an
    # outage; a person at a prompt should hear within DATABASE_CONNECT_TIMEOUT_S.
    engine_timeout = float(cparams.get("timeout") or DATABASE_CONNECT_TIMEOUT_S)
    cparams["timeout"] = min(engine_timeout, DATABASE_CONNECT_TIMEOUT_S)


def _database_failure(error: OSError | DBAPIError) -> str:
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    target = database_target()
    if isinstance(error, OSError):  # refused, unknown host, unix socket missing, timed out
        reason = str(error) or f"no answer within {DATABASE_CONNECT_TIMEOUT_S:g} s"
        return (
            f"cannot reach the database at {target} ({reason}; is PostgreSQL running? "
            "set DATABASE_URL)"
        )
    reason = _server_message(error)
    if isinstance(error, OperationalError | InterfaceError):
        return f"lost the connection to the database at {target} ({reason})"
    if isinstance(error, DBAPIError) and error.statement is None:
        # Raised while connecting: unknown database or role, bad password.
        return f"the database at {target} refused the connection ({reason}; check DATABASE_URL)"
    if getattr(error.orig, "sqlstate", None) == UNDEFINED_TABLE:
        return f"the database at {target} has no memory schema ({reason}; run memoryctl db upgrade)"
    return f"the database at {target} failed: {reason}"


def _server_message(error: DBAPIError) -> str:
    # SQLAlchemy's text adds the SQL and a help link; the driver's first line is the news.
    cause: BaseException = error if error.orig is None else (error.orig.__cause__ or error.orig)
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__


def checked_ref(memory_ref: str) -> MemoryRef:
    """--memory-ref parsed once, at the edge: the typed ref every command passes down,
    or one line naming the broken rule (never the input) and exit 2."""
    from schemas.memory_ref import parse_memory_ref

    try:
        return parse_memory_ref(memory_ref)
    except InvalidInput as error:
        print_error(str(error))
        raise typer.Exit(EXIT_BAD_INPUT) from None


def checked_entry_id(entry_id: str, option: str) -> str:
    """An entry id by the entry id grammar, or one line naming ``option`` and exit 2."""
    from pydantic import TypeAdapter

    from schemas.memory_entry import EntryId

    try:
        return TypeAdapter(EntryId).validate_python(entry_id)
    except ValidationError as error:
        raise bad_input(f"{option}: {error.errors()[0]['msg']}") from None


def secrets_vault() -> FileSecretVault:
    """The tenants' registered secrets (AGENT_MEMORY_SECRETS_FILE): commands build a
    run's SR-1 registry from it with memory.redaction.vault.registry_for_tenant, the one builder,
    which reads the file when called (ValueError for a malformed file)."""
    from memory.redaction.vault import vault_from_settings
    from runtime.settings import Settings

    return vault_from_settings(Settings().secrets_file)


def short_instant(instant: datetime | None) -> str:
    """An instant for a table cell: UTC to the second ("2026-11-23 23:00:05Z"); "-" for none."""
    if instant is None:
        return "-"
    return instant.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def print_json(value: object) -> None:
    """``value`` as indented JSON on stdout."""
    # Plain stdout, not rich: a narrow terminal must not wrap a document a script parses.
    typer.echo(json.dumps(value, indent=2))


@asynccontextmanager
async def open_store() -> AsyncIterator[PostgresMemoryStore]:
    """The store over DATABASE_URL (database_engine), its engine disposed on leaving:
    for an action that does more than one store call."""
    from memory.store import PostgresMemoryStore
    from runtime.intent_link_keys import intent_links_for
    from runtime.settings import Settings

    engine = database_engine()
    try:
        # The events it writes link to intents under the deployment's key.
        yield PostgresMemoryStore(engine, intent_links=intent_links_for(Settings()))
    finally:
        await engine.dispose()


def with_store(use: Callable[[PostgresMemoryStore], Awaitable[T]]) -> T:
    """Run one store call against DATABASE_URL: connect, call, dispose; failures as one
    line (see run_action)."""

    async def action() -> T:
        async with open_store() as store:
            return await use(store)

    return run_action(action)


class WorkflowRefused(Exception):
    """The workflow could not start or failed; the message is the one line to print."""

    exit_status = EXIT_FAILED


async def start_and_wait(
    run: Any, argument: Any, *, workflow_id: str, summary: str, busy: str, what: str
) -> Any:
    """Start a workflow on the configured task queue (a new run of a closed id is
    allowed; a running one is refused with ``busy``) and wait for its result."""
    from temporalio.client import WorkflowFailureError
    from temporalio.common import WorkflowIDReusePolicy
    from temporalio.exceptions import WorkflowAlreadyStartedError

    from runtime.settings import Settings

    client = await temporal_client()
    try:
        handle = await client.start_workflow(
            run,
            argument,
            id=workflow_id,
            task_queue=Settings().task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            static_summary=summary,
        )
    except WorkflowAlreadyStartedError:
        raise WorkflowRefused(busy) from None
    errors.print(f"{what}: workflow {handle.id} started, waiting for it")
    try:
        return await handle.result()
    except WorkflowFailureError as error:
        raise WorkflowRefused(f"the workflow failed: {error.cause}") from None
