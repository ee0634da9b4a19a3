"""Command blocks of README.md and docs/*.md that tests run verbatim.

A block is a ```bash fence between `<!-- name:begin -->` and `<!-- name:end -->`. A block
that is missing fails the test that reads it (an assertion here), never a skip.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def doc(name: str) -> Path:
    """docs/<name>.md."""
    return DOCS / f"{name}.md"


def block_commands(path: Path, name: str) -> list[str]:
    """The commands of the `name` block in `path`, one per line, continuations joined."""
    text = path.read_text()
    block = re.search(
        rf"<!-- {name}:begin -->\s*```bash\n(.*?)```\s*<!-- {name}:end -->",
        text,
        re.S,
    )
    assert block, f"{path.relative_to(ROOT)} lost its {name} block"
    joined = block.group(1).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]
