"""The lint step's import-linter contracts hold today and catch a layering violation.

The contracts live in pyproject.toml.  Each test runs ``lint-imports`` on a copy
of the package, so a broken copy never touches the real tree.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
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
    assert "6 kept, 0 broken" in r.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken", "chain"),
    [
        (  # a layer imported upward (the engine reaching for the CLI)
            "analysis/entries.py",
            "import migcheck.cli",
            "layers point down",
            "migcheck.analysis.entries -> migcheck.cli",
        ),
        (  # the bottom layer reaching one layer up: the schemas must not need the engine
            "model/analyze.py",
            "import migcheck.analysis.statistics",
            "layers point down",
            "migcheck.model.analyze -> migcheck.analysis.statistics",
        ),
        (
            "hashing/keys.py",
            "import click",
            "nothing below the CLI imports Click",
            "migcheck.hashing.keys -> click",
        ),
        (  # read-only access borrowing the copy's transactional producer
            "kafka/fetch.py",
            "import migcheck.copy.producer",
            "kafka/ is read-only: it never imports the copy's producer",
            "migcheck.kafka.fetch -> migcheck.copy.producer",
        ),
        (  # what the figures mean reaching back for the read (sources.py's old closure)
            "analysis/aggregate.py",
            "import migcheck.analysis.scan.plan",
            "analysis/: the scan on top, the figures' meaning below it",
            "migcheck.analysis.aggregate -> migcheck.analysis.scan.plan",
        ),
        (  # a pure module importing Spark (entries once took dataclasses from Spark's side)
            "analysis/entries.py",
            "import pyspark.sql",
            "analysis/: what the figures mean is pure (no Spark)",
            "migcheck.analysis.entries -> pyspark",
        ),
        (  # a module importing one that imports it back (as copier and copyverify did)
            "copy/identity.py",
            "import migcheck.copy.task",
            "no cycles between sibling modules",
            "- .task -> .identity",
        ),
        (  # the same inside kafka/: the fetch builds on the client's configuration
            "kafka/config.py",
            "import migcheck.kafka.fetch",
            "no cycles between sibling modules",
            "- .config -> .fetch",
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


#: What would let kafka/ write: kafka-python's producer, under any of its import paths.
#: import-linter forbids only whole external packages, and kafka/ needs kafka-python.
_PRODUCER = re.compile(r"\bKafkaProducer\b|\bkafka\.producer\b|\bconfluent_kafka\b")


def _producer_imports(package: Path) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [getattr(node, "module", None) or "", *(a.name for a in node.names)]
                if any(_PRODUCER.search(n) for n in names):
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_kafka_package_imports_no_producer() -> None:
    assert _producer_imports(REPO / "migcheck" / "kafka") == []


def test_the_producer_check_sees_kafka_pythons_producer(tree: Path) -> None:
    reader = tree / "migcheck" / "kafka" / "fetch.py"
    reader.write_text(reader.read_text() + "\nfrom kafka import KafkaProducer  # noqa\n")
    assert _producer_imports(tree / "migcheck" / "kafka") == [
        "fetch.py:" + str(len(reader.read_text().splitlines()))
    ]
