"""memoryctl in-process, exactly as the console script runs it (memoryctl.main.run_app:
click's usage errors as one line, every other failure through cli.run_action), with typer's
test isolation for stdin, stdout, stderr and the environment. Used by the CLI fuzzing and
the CLI cross-tenant sweep, which run thousands of commands: no interpreter start-up per
command, and typer's app turned into its click command once rather than per command
(that conversion is 30 ms of every run). Call from a thread (asyncio.to_thread):
commands run their own event loop."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

import typer
from typer.testing import CliRunner

from memoryctl import main as memoryctl_main

_one_at_a_time = threading.Lock()  # the isolation swaps sys.stdout and os.environ


class _Built:
    """Stands in for ``memoryctl.main.app`` while a command runs: the same click command
    (built once), called the way run_app calls the app."""

    def __init__(self) -> None:
        self.command = typer.main.get_command(memoryctl_main.app)

    def __call__(self, **kwargs: object) -> object:
        return self.command.main(prog_name="memoryctl", **kwargs)  # type: ignore[arg-type]


_built: _Built | None = None


@dataclass(frozen=True)
class Ran:
    status: int
    stdout: str
    stderr: str
    crash: BaseException | None  # an exception that escaped (a traceback for the user)


def memoryctl(args: list[str], env: dict[str, str], stdin: bytes | None = None) -> Ran:
    global _built
    with _one_at_a_time, CliRunner().isolation(input=stdin, env=env) as (out, err, _):
        _built = _built or _Built()
        saved_argv, saved_app = sys.argv, memoryctl_main.app
        sys.argv = ["memoryctl", *args]
        memoryctl_main.app = _built  # type: ignore[assignment]
        crash: BaseException | None = None
        status = 0
        try:
            memoryctl_main.run_app()
        except SystemExit as done:
            status = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
        except BaseException as error:  # what a user would see as a traceback
            crash, status = error, -1
        finally:
            sys.argv, memoryctl_main.app = saved_argv, saved_app
            sys.stdout.flush()
            sys.stderr.flush()
        return Ran(
            status,
            out.getvalue().decode("utf-8", "replace"),
            err.getvalue().decode("utf-8", "replace"),
            crash,
        )
