"""The shape of the product code: no import cycle between modules, none between the
folders of memory/ or between the top-level packages, no module over 500 lines
(migrations and data tables aside), the store facade's public names held still, and the
README's "where each guarantee lives" table naming paths that exist.

Imports are read with the standard library's ast, so the check needs nothing installed
and sees imports inside functions too (a cycle hidden in a function body is still a
cycle a reader has to follow).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memory.store import PostgresMemoryStore

ROOT = Path(__file__).resolve().parents[2]
PRODUCT_PACKAGES = ("memory", "schemas", "workflows", "activities", "runtime", "api", "memoryctl")
PRODUCT_MODULES = ("worker.py",)
MAX_MODULE_LINES = 500
# Not code a reader follows: schema history and data.
LINE_LIMIT_EXEMPT = ("memory/migrations/",)

# Adding or removing a public name of the facade is an API change: say so here.
FACADE_NAMES = {
    # attributes
    "engine",
    "limits",
    "db",
    "queries",
    "entries",
    "erasure",
    "retention",
    "snapshots",
    "event_log",
    "distillations",
    "fleet_selection",
    "consolidations",
    "commitments",
    "proposals",
    "fixture_runs",
    "vectors",
    "searches",
    # the openwop MemoryAdapter and the host reads
    "list",
    "get",
    "get_entry",
    "get_by_key",
    "query",
    "count",
    "search",
    # writes
    "put",
    "put_many",
    "update",
    "delete",
    "archive_working_memory",
    # forget, TTL and retention
    "forget",
    "erase",
    "expire",
    "lineage",
    "gc_expired",
    "collect_garbage",
    # snapshots and events
    "snapshot",
    "snapshot_info",
    "read_snapshot",
    "events",
    # distillation, archives and the index
    "distill",
    "archive_checksum",
    "index_digest",
    "index_file",
    # consolidation
    "consolidate",
    "undo_consolidation",
    "superseded",
    "conflicts",
    # the clock and health
    "now",
    "ping",
}


def product_files() -> list[Path]:
    files = [ROOT / name for name in PRODUCT_MODULES]
    for package in PRODUCT_PACKAGES:
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The product modules ``path`` imports (``from a.b import c`` counts a.b.c when
    that is a module, else a.b)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            # The deepest product module the name reaches: "memory.store.X" -> memory.store
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in product_files()}
    known = set(files)
    graph = {}
    for name, path in files.items():
        # A package's __init__ is imported on the way to its modules; that is no edge.
        graph[name] = {
            m for m in imports_of(path, known) if m != name and not name.startswith(m + ".")
        }
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> list[str] | None:
        if node in visiting:
            return [*visiting[visiting.index(node) :], node]
        if node in done:
            return None
        visiting.append(node)
        for target in sorted(graph.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        visiting.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_product_code_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "memory.store" in graph and "memory.entries.writes" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def folder_of(module: str) -> str:
    """The unit of the folder check: a memory/ module's folder (``memory.entries``) or the
    module itself when it lies at memory/'s top (``memory.store``); elsewhere the
    top-level package (``api``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "memory" else parts[0]


def folder_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = folder_of(module)
        graph.setdefault(source, set()).update(
            folder_of(target) for target in targets if folder_of(target) != source
        )
    return graph


def test_no_folder_imports_one_that_imports_it_back() -> None:
    """Within memory/, and between the product's packages: concerns stack, so a reader
    can follow any of them down without coming back up."""
    graph = folder_graph()
    assert "memory.entries" in graph and "memory.search" in graph["memory.store"]
    memory = {
        source: {target for target in targets if target.split(".")[0] == "memory"}
        for source, targets in graph.items()
        if source.split(".")[0] == "memory"
    }
    assert find_cycle(memory) is None, " -> ".join(find_cycle(memory) or [])
    packages: dict[str, set[str]] = {}
    for source, targets in graph.items():
        packages.setdefault(source.split(".")[0], set()).update(
            target.split(".")[0]
            for target in targets
            if target.split(".")[0] != source.split(".")[0]
        )
    assert find_cycle(packages) is None, " -> ".join(find_cycle(packages) or [])


def test_the_folder_check_finds_a_loop_between_folders() -> None:
    graph = {"memory.a": {"memory.b"}, "memory.b": {"memory.a"}}
    assert find_cycle(graph) == ["memory.a", "memory.b", "memory.a"]
    assert folder_of("memory.entries.content") == "memory.entries"
    assert folder_of("memory.store") == "memory.store"
    assert folder_of("api.routes.x") == "api"


# The guarantees a reader asks "where is ..." about (DESIGN.md, issue 37): each must have
# a row of the README's table.
GUARANTEES = (
    "token budget",
    "fires once",
    "SR-1",
    "forget",
    "tenant isolation",
    "proposal",
    "search ranking",
    "fleet's selection",
)


def test_the_readme_says_where_each_guarantee_lives_with_paths_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Where each guarantee lives", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    for guarantee in GUARANTEES:
        assert any(guarantee in row.split("|")[1] for row in rows), guarantee
    paths = re.findall(r"`([\w./-]+/[\w./-]*|[\w-]+\.py)`", table)
    assert len(paths) >= len(GUARANTEES)
    assert [path for path in paths if not (ROOT / path).exists()] == []


def test_no_product_module_over_500_lines() -> None:
    too_long = {
        str(path.relative_to(ROOT)): lines
        for path in product_files()
        if not str(path.relative_to(ROOT)).startswith(LINE_LIMIT_EXEMPT)
        and (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}


def test_repositories_never_import_the_facade() -> None:
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("memory.") and name != "memory.store":
            assert "memory.store" not in targets, name


def test_the_store_facade_keeps_its_public_names(engine) -> None:
    store = PostgresMemoryStore(engine)
    public = {name for name in dir(store) if not name.startswith("_")}
    assert public == FACADE_NAMES
