"""The Layout section of docs/architecture.md, generated from the code: every product
module with the first sentence of its docstring, folder by folder.

    python -m tests.support.layout_doc          # rewrite the section
    python -m tests.support.layout_doc --check  # exit 1 when it is out of date

tests/architecture/test_layout_doc.py runs the check, so the section names every module
there is and no module that is gone. A module's docstring is its entry: a module without
one fails the generation (say what it is for in its first sentence).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- layout:begin -->", "<!-- layout:end -->"
# In this order; worker.py first. Migrations are one entry: their folder.
PACKAGES = ("memory", "schemas", "workflows", "activities", "runtime", "api", "memoryctl")
SUMMARISED = ("memory/migrations",)
# A sentence ends at ". " before a capital or a backquote, or at the paragraph's end.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def first_sentence(path: Path) -> str:
    docstring = ast.get_docstring(ast.parse(path.read_text(), str(path)))
    if not docstring:
        raise SystemExit(f"{path.relative_to(ROOT)} has no docstring: say what it is for")
    paragraph = " ".join(docstring.split("\n\n", 1)[0].split())
    return _SENTENCE_END.split(paragraph, 1)[0]


def _entry(path: Path) -> str:
    return f"- `{path.relative_to(ROOT)}`: {first_sentence(path)}"


def _folder(folder: Path, depth: int) -> list[str]:
    relative = str(folder.relative_to(ROOT))
    heading = "#" * min(depth + 3, 6)
    init = folder / "__init__.py"
    lines = [f"{heading} `{relative}/`", "", first_sentence(init), ""]
    if relative in SUMMARISED:
        return lines
    modules = sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")
    lines += [_entry(module) for module in modules]
    if modules:
        lines.append("")
    for sub in sorted(p for p in folder.iterdir() if (p / "__init__.py").exists()):
        lines += _folder(sub, depth + 1)
    return lines


def section() -> str:
    lines = [
        BEGIN,
        "Generated from each module's docstring (`python -m tests.support.layout_doc`);",
        "`tests/architecture/test_layout_doc.py` fails when it is out of date. Outside the",
        "product: `benchmarks/` (performance runs that print ratios to same-run baselines),",
        "`chaos/` (the chaos run), `tests/` (pytest against real PostgreSQL and Temporal;",
        "`tests/support/` holds the fixtures' helpers, `tests/histories/` recorded histories).",
        "",
        _entry(ROOT / "worker.py"),
        "",
    ]
    for package in PACKAGES:
        lines += _folder(ROOT / package, 0)
    lines.append(END)
    return "\n".join(lines)


def rewritten(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + section() + text[end:]


def main(argv: list[str]) -> int:
    text = ARCHITECTURE.read_text()
    fresh = rewritten(text)
    if "--check" in argv:
        if fresh != text:
            print(
                "docs/architecture.md's layout is out of date: python -m tests.support.layout_doc"
            )
            return 1
        return 0
    ARCHITECTURE.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
