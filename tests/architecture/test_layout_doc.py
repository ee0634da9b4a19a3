"""docs/architecture.md's Layout section names every product module, with what its
docstring says it is for, and no module that is gone: it is generated from the code
(tests/support/layout_doc.py) and must be regenerated when a module comes, goes or
changes its first sentence."""

from __future__ import annotations

import re

from tests.architecture.test_structure import ROOT, product_files
from tests.support.layout_doc import ARCHITECTURE, SUMMARISED, rewritten


def test_the_layout_section_is_up_to_date() -> None:
    text = ARCHITECTURE.read_text()
    assert rewritten(text) == text, "regenerate it: python -m tests.support.layout_doc"


def test_every_product_module_is_named_and_every_named_path_exists() -> None:
    text = ARCHITECTURE.read_text()
    named = set(re.findall(r"`([\w/.-]+\.py)`", text))
    modules = {
        str(path.relative_to(ROOT))
        for path in product_files()
        if path.name != "__init__.py" and not str(path.relative_to(ROOT)).startswith(SUMMARISED)
    }
    assert modules - named == set()
    assert {path for path in named if not (ROOT / path).exists()} == set()
