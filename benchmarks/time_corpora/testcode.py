"""Read parameterised test cases out of Python test code with ``ast``, never importing or
running it.

``param(...)`` calls (parameterized) and tuples inside ``pytest.mark.parametrize`` lists
are read into a mapping from the test function's argument names to values. Values are
rebuilt only from literals and a few constructors (datetime, date, time, timedelta,
dicts, lists, tuples, unary minus); anything else (an f-string, a lambda, a time zone
object) becomes ``Opaque``, and the loader skips that row as "not a literal".
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

_CONSTRUCTORS: dict[str, Any] = {
    "datetime": datetime,
    "date": date,
    "time": time,
    "timedelta": timedelta,
}


class Opaque:
    """A value the reader does not rebuild."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"Opaque({self.source})"


def value_of(node: ast.expr) -> Any:
    try:
        return _value(node)
    except (ValueError, TypeError, OverflowError):
        return Opaque(ast.unparse(node))


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand)
        if isinstance(inner, Opaque):
            return inner
        return -inner
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return Opaque(ast.unparse(node))
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k}
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func).rsplit(".", 1)[-1]
        constructor = _CONSTRUCTORS.get(name)
        if constructor is None:
            return Opaque(ast.unparse(node))
        args = [_value(a) for a in node.args]
        kwargs = {k.arg: _value(k.value) for k in node.keywords if k.arg}
        if any(isinstance(v, Opaque) for v in (*args, *kwargs.values())):
            return Opaque(ast.unparse(node))
        if "tzinfo" in kwargs:
            return Opaque(ast.unparse(node))
        return constructor(*args, **kwargs)
    return Opaque(ast.unparse(node))


@dataclass(frozen=True)
class Case:
    """One parameter set of one test function."""

    path: str  # the test file, relative to the sdist
    owner: str  # the class name, or "" for a module-level test
    function: str
    index: int  # position in the decorator's list
    args: dict[str, Any]
    source: str  # the parameter set's source text
    body: ast.FunctionDef

    @property
    def key(self) -> str:
        """Stable: names the place and hashes the source, so a changed case gets a new key
        (and shows up as absent from the split) instead of inheriting an old half."""
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:8]
        where = f"{self.owner}.{self.function}" if self.owner else self.function
        return f"{self.path}::{where}::{self.index}::{digest}"


def _argument_names(function: ast.FunctionDef) -> list[str]:
    names = [a.arg for a in function.args.args]
    return names[1:] if names and names[0] == "self" else names


def _parameter_lists(function: ast.FunctionDef) -> Iterator[tuple[list[str], ast.List]]:
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or not decorator.args:
            continue
        called = ast.unparse(decorator.func)
        if called.endswith("parameterized.expand") and isinstance(decorator.args[0], ast.List):
            yield _argument_names(function), decorator.args[0]
        elif called.endswith("mark.parametrize") and len(decorator.args) >= 2:
            names_node, cases = decorator.args[0], decorator.args[1]
            if isinstance(names_node, ast.Constant) and isinstance(cases, ast.List):
                names = [n.strip() for n in str(names_node.value).split(",")]
                yield names, cases


def _bind(names: list[str], node: ast.expr) -> dict[str, Any]:
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("param"):
        bound = dict(zip(names, (value_of(a) for a in node.args), strict=False))
        bound.update({k.arg: value_of(k.value) for k in node.keywords if k.arg})
        return bound
    if isinstance(node, ast.Tuple):
        return dict(zip(names, (value_of(e) for e in node.elts), strict=False))
    return dict(zip(names, [value_of(node)], strict=False))


def cases(path: str, text: str) -> Iterator[Case]:
    """Every parameter set of every parameterised test in ``text``, in file order."""
    tree = ast.parse(text)
    scopes: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    scopes += [(n.name, n.body) for n in tree.body if isinstance(n, ast.ClassDef)]
    for owner, body in scopes:
        for function in body:
            if not isinstance(function, ast.FunctionDef):
                continue
            for names, listed in _parameter_lists(function):
                for index, node in enumerate(listed.elts):
                    yield Case(
                        path,
                        owner,
                        function.name,
                        index,
                        _bind(names, node),
                        ast.unparse(node),
                        function,
                    )


def setting_in(function: ast.FunctionDef, name: str) -> Any:
    """The literal value given to setting ``name`` in the function body (a dict entry
    ``"NAME": value`` or a keyword ``NAME=value``), or None."""
    for node in ast.walk(function):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == name:
                    return value_of(value)
        if isinstance(node, ast.keyword) and node.arg == name:
            return value_of(node.value)
    return None


def assigned_in(function: ast.FunctionDef, target: str) -> Any:
    """The literal value of the first ``target = ...`` (or ``self.target = ...``)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = ast.unparse(node.targets[0])
            if name in (target, f"self.{target}"):
                return value_of(node.value)
    return None
