"""The lint step's import-linter contracts hold today and catch a layering violation.

The contracts live in pyproject.toml.  Each test runs ``lint-imports`` on a copy
of the package, so a broken copy never touches the real tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and its contracts, to break on purpose."""
    shutil.copytree(
        REPO / "migcheck", tmp_path / "migcheck", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_package_keeps_its_layers(tree: Path) -> None:
    r = _lint(tree)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 kept, 0 broken" in r.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken", "chain"),
    [
        (
            "analysis/entries.py",
            "import migcheck.cli",
            "layers: cli -> streams | report -> analysis -> kafka | hashing -> errors",
            "migcheck.analysis.entries -> migcheck.cli",
        ),
        (
            "hashing/keys.py",
            "import click",
            "nothing below the CLI imports Click",
            "migcheck.hashing.keys -> click",
        ),
    ],
)
def test_a_violation_breaks_its_contract(
    tree: Path, module: str, line: str, broken: str, chain: str
) -> None:
    path = tree / "migcheck" / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    r = _lint(tree)
    assert r.returncode != 0
    assert f"{broken} BROKEN" in r.stdout
    assert chain in r.stdout
