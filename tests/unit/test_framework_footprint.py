"""A stream processor is its module under migcheck/frameworks/ plus its registry entry
(issue 54), shown with Faust: no other module's code names it, but for its reader kind,
the one enum every layer shares.

Code means identifiers and string literals; docstrings and comments may name any
framework (they explain).  The test fails when a new place starts to name Faust.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Where Faust's name may appear in code outside its own module, and why.
ALLOWED = {
    "migcheck/frameworks/faust.py": "its own module",
    "migcheck/frameworks/registry.py": "its registry entry and its place in the evidence order",
    # ReaderKind is the model every layer shares (a reader's kind, framework or not): the
    # one enum member a new framework adds outside its module and registry entry.
    "migcheck/model/readers.py": "its ReaderKind member",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _names_faust(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.alias):
            text = node.name
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = "" if id(node) in skip else node.value
        else:
            continue
        if "faust" in text.lower():
            return True
    return False


def test_only_its_module_and_registry_name_faust_in_code() -> None:
    naming = {
        str(p.relative_to(REPO))
        for p in sorted((REPO / "migcheck").rglob("*.py"))
        if _names_faust(p)
    }
    assert naming == set(ALLOWED)


def test_the_check_sees_a_name_in_code_and_not_in_a_docstring(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.py"
    quiet.write_text('"""Faust is explained here."""\n# and Faust here\nx = 1\n')
    loud = tmp_path / "loud.py"
    loud.write_text('"""Nothing."""\nfrom migcheck.frameworks.faust import FAUST\n')
    text = tmp_path / "text.py"
    text.write_text('HELP = "Faust: the datadir"\n')
    assert not _names_faust(quiet)
    assert _names_faust(loud) and _names_faust(text)
