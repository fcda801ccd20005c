"""The suite's own layout: pytest imports test modules by their base name (the test
directories are not packages), so two files of one name in tests/unit and
tests/integration stop the whole run with "import file mismatch" when both are collected.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, count in names.items() if count > 1] == []
