"""One writer of entry content (DESIGN.md, "One writer of content"): no product module but
memory/entries/content.py inserts an entry or writes its ``content`` or ``content_sha256``,
so every derived index of an entry is kept in step by the one function that changes what
the entry says.

Read from the source with ast, as the other structure checks are: a statement built on
the entries table (``insert(ENTRIES)``, ``update(ENTRIES).values(content=...)``, an
upsert) or raw SQL that sets the content of ``memory_entries`` anywhere else fails here.
The behaviour behind it (no vector outlives its text, for every path) is tested in
tests/memory/test_index_in_step.py and checked after every test (tests/conftest.py).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.architecture.test_structure import ROOT, product_files

WRITER = "memory/entries/content.py"
EXEMPT = ("memory/migrations/",)
CONTENT_COLUMNS = {"content", "content_sha256"}
# Raw SQL that inserts entries or sets their content.
RAW_CONTENT_WRITE = re.compile(
    r"INSERT\s+INTO\s+memory_entries\b|UPDATE\s+memory_entries\b[^;]*?\bcontent(_sha256)?\s*=",
    re.IGNORECASE | re.DOTALL,
)


def entries_aliases(tree: ast.Module) -> set[str]:
    """The names a module gives the entries table: ``X = tables.entries`` (also in a
    tuple), ``from ... import entries as X``, ``from ... import ENTRIES``."""
    names = {"ENTRIES"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (
                    zip(target.elts, node.value.elts, strict=False)
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                    else [(target, node.value)]
                )
                for name, value in pairs:
                    if (
                        isinstance(name, ast.Name)
                        and isinstance(value, ast.Attribute)
                        and value.attr == "entries"
                    ):
                        names.add(name.id)
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                from_tables = alias.name == "entries" and (node.module or "").endswith("tables")
                if from_tables or alias.name == "ENTRIES":
                    names.add(alias.asname or alias.name)
    return names


def _names_entries_table(node: ast.expr, aliases: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in aliases
    return isinstance(node, ast.Attribute) and node.attr == "entries"


def _base_call(node: ast.expr) -> ast.Call | None:
    """The call a chain of methods starts from: ``update(X)`` in
    ``update(X).where(...).values(...)``."""
    while True:
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                if isinstance(node.func.value, ast.Call | ast.Attribute):
                    inner = _base_call(node.func.value)
                    if inner is not None:
                        return inner
                return node
            return node
        if isinstance(node, ast.Attribute):
            node = node.value
            continue
        return None


def content_writes(source: str, filename: str) -> list[str]:
    """Where ``source`` inserts an entry or writes its content: ``line: what``."""
    found: list[str] = []
    tree = ast.parse(source, filename)
    aliases = entries_aliases(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and (
                node.func.id in ("insert", "pg_insert")
                and node.args
                and _names_entries_table(node.args[0], aliases)
            )
        ):
            found.append(f"{node.lineno}: inserts into the entries table")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "values"
        ):
            base = _base_call(node.func.value)
            if (
                base is not None
                and isinstance(base.func, ast.Name)
                and base.func.id == "update"
                and base.args
                and _names_entries_table(base.args[0], aliases)
            ):
                written = {k.arg for k in node.keywords}
                if written & CONTENT_COLUMNS or None in written:
                    found.append(f"{node.lineno}: sets the content of entries")
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and RAW_CONTENT_WRITE.search(node.value)
        ):
            found.append(f"{node.lineno}: raw SQL writing entries' content")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_the_finder_finds_each_kind_of_content_write() -> None:
    source = (
        "E = tables.entries\n"
        "insert(E)\n"
        "pg_insert(tables.entries).values(id=1)\n"
        "update(ENTRIES).where(x).values(content=c, version=2)\n"
        "update(ENTRIES).values(**values)\n"
        "text('UPDATE memory_entries AS e SET content = v.content')\n"
        "update(ENTRIES).values(version=2)\n"
        "text('UPDATE memory_entries SET superseded_by = v.s')\n"
        "insert(ARCHIVES)\n"
    )
    assert [line.split(":")[0] for line in content_writes(source, "x.py")] == [
        "2",
        "3",
        "4",
        "5",
        "6",
    ]


def test_only_the_content_writer_writes_entry_content() -> None:
    writers = {}
    for path in product_files():
        relative = str(path.relative_to(ROOT))
        if relative == WRITER or relative.startswith(EXEMPT):
            continue
        found = content_writes(path.read_text(), relative)
        if found:
            writers[relative] = found
    assert writers == {}


def test_the_writer_is_where_the_check_looks() -> None:
    assert content_writes((ROOT / WRITER).read_text(), WRITER), (
        "the content writer moved: point WRITER at it"
    )
    assert Path(ROOT / WRITER).exists()
