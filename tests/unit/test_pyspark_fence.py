"""pyspark's private API is fenced in one module (analysis/pyspark_private.py), for the
pyspark releases the pin admits; outside them each use takes a public path and says so
once.  No JVM: the fence is checked in a fresh interpreter that never starts Spark."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from migcheck.analysis.pyspark_private import TESTED_PYSPARK, fence

REPO = Path(__file__).resolve().parents[2]


def test_the_fence_admits_what_the_pin_admits_and_no_other_series() -> None:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in deps if Requirement(d).name == "pyspark"]
    (pinned,) = [s.version for s in pin.specifier]
    assert TESTED_PYSPARK.contains(pinned)
    assert not TESTED_PYSPARK.contains("4.1.1") and not TESTED_PYSPARK.contains("4.3.0")


def test_inside_the_range_the_fence_opens_silently(capsys: pytest.CaptureFixture[str]) -> None:
    assert fence("4.2.0").open() and fence("4.2.3").open()
    assert capsys.readouterr().err == ""


def test_outside_the_range_every_use_takes_the_public_path_and_says_so_once() -> None:
    script = """
from migcheck.analysis import pyspark_private as p
p.FENCE = p.fence("4.3.0")
assert p.has_context() is False  # SparkSession.getActiveSession(): no JVM started
assert p.jvm_process() is None and not p.jvm_reachable()
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=REPO, timeout=120, check=False)  # fmt: skip
    assert r.stdout == "ok\n", r.stderr
    assert r.stderr.splitlines() == [fence("4.3.0").line]


def test_no_other_module_reaches_into_pyspark() -> None:
    private = re.compile(r"SparkContext\._|\._gateway\b|java_gateway|_ensure_initialized")
    users = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "migcheck").rglob("*.py"))
        if private.search(path.read_text(encoding="utf-8"))
    ]
    assert users == ["migcheck/analysis/pyspark_private.py"]
