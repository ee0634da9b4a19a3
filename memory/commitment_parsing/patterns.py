"""The ordered pattern registry both grammars are built on.

A grammar is a list of (compiled regular expression, handler) pairs, tried in the order
they were registered, so the most specific shapes are registered first::

    _RULES: PatternRegistry[_Handler] = PatternRegistry()
    _rule = _RULES.register

    @_rule(r"tomorrow|tmrw")
    def _tomorrow(match, ctx): ...

    for pattern, handler in _RULES: ...

``time_grammar`` registers its scanning rules on one, ``recurrence_phrases`` its
recurrence recognizers on another.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

H = TypeVar("H", bound=Callable[..., object])


class PatternRegistry(Generic[H]):
    """(pattern, handler) pairs in registration order: the order is the priority."""

    def __init__(self) -> None:
        self._sources: list[tuple[str, H]] = []
        self._entries: list[tuple[re.Pattern[str], H]] | None = None

    def register(self, pattern: str) -> Callable[[H], H]:
        """A decorator registering its function as the handler of ``pattern``."""

        def register(handler: H) -> H:
            self._sources.append((pattern, handler))
            self._entries = None
            return handler

        return register

    def __iter__(self) -> Iterator[tuple[re.Pattern[str], H]]:
        # Compiled on first use, not at import: the grammars' patterns take about 0.15 s
        # to compile, which every command importing the store paid, parsing or not.
        if self._entries is None:
            self._entries = [(re.compile(pattern), handler) for pattern, handler in self._sources]
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._sources)
