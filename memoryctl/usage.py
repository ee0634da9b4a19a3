"""Click's usage errors, worded without what was typed.

Click quotes the offending token back ("Got unexpected extra argument (...)", "No such
command '...'", "Invalid value for '--after': '...' is not a valid integer"). On a
command line that token is often a value, and a value that lost its option name (a
forgotten ``--content``) may be entry content or a secret, which would then land in a
terminal log or CI output. So every typed token that is not an option or command name is
replaced by ``<value>``; names stay, so "No such option: --tagg" still helps."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

# An option name as typed (--memory-ref, -h): kept in messages.
_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9-]{0,39}")
# Shorter tokens ("1", "x") are no secret, and replacing them would garble the message.
_MIN_VALUE_CHARS = 3
VALUE = "<value>"


def command_names(command: Any) -> set[str]:
    """Every command and group name under a click command."""
    names = {command.name} if getattr(command, "name", None) else set()
    for sub in getattr(command, "commands", {}).values():
        names |= command_names(sub)
    return names


def without_typed_values(message: str, typed: Sequence[str], names: Iterable[str]) -> str:
    keep = set(names)
    values = {
        token
        for token in typed
        if len(token) >= _MIN_VALUE_CHARS and token not in keep and not _OPTION.fullmatch(token)
    }
    # Longest first, so a token inside another is not replaced half-way.
    for token in sorted(values, key=len, reverse=True):
        message = message.replace(token, VALUE)
        # Click shows some values through repr() (escapes, other quotes).
        message = message.replace(repr(token), repr(VALUE))
    # "Invalid value for '--tier': Value error, '<value>' is not one of ..." reads as if
    # "<value>" were what was typed: say the rule alone.
    return _QUOTED_VALUE.sub("", message)


# The typed value quoted before the rule it broke, with pydantic's "Value error, ".
_QUOTED_VALUE = re.compile(r"(?:Value error, )?'<value>' (?=is not|does not)")


def usage_line(error: Any, typed: Sequence[str]) -> str:
    """The one line memoryctl prints for a click UsageError."""
    root = error.ctx.find_root().command if error.ctx is not None else None
    names = command_names(root) if root is not None else set()
    return without_typed_values(error.format_message(), typed, names)


def show_flags_without_a_type() -> None:
    """Typer 0.29's help prints a type beside every option, flags included: ``--json
    <bool>`` reads as if the flag took a value (``--json true``), which it refuses. A flag
    gets no type column; options that take a value keep theirs (``--limit <int>``)."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "hides_flag_types", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.hides_flag_types = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
