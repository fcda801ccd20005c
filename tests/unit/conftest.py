"""The unit lane: no Kafka, no Spark, no JVM, in seconds.

Every test here, and every ``migcheck`` process one starts, finds a ``java``
that refuses to run: a unit test that would start a JVM (Spark, Kafka's tools)
fails loudly instead of quietly becoming an integration test.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

_REFUSE = (
    "#!/bin/sh\necho 'tests/unit start no JVM: move this test to tests/integration' >&2\nexit 97\n"
)


@pytest.fixture(scope="module", autouse=True)
def no_jvm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """JAVA_HOME and PATH lead to a ``java`` that exits 97 (Spark's launcher takes
    JAVA_HOME first, then PATH).  Per module, not per session: a pytest-xdist worker
    runs integration files after unit files, and they need the real ``java`` back."""
    home = tmp_path_factory.mktemp("no-jvm")
    java = home / "bin" / "java"
    java.parent.mkdir()
    java.write_text(_REFUSE)
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    saved = {k: os.environ.get(k) for k in ("JAVA_HOME", "PATH")}
    os.environ["JAVA_HOME"] = str(home)
    os.environ["PATH"] = f"{java.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A unit test asks for no broker and no Spark session."""
    for item in items:
        if Path(str(item.fspath)).parent.name != "unit":
            continue
        used = set(getattr(item, "fixturenames", ()))
        if used & {"kafka", "spark"}:
            raise pytest.UsageError(f"{item.nodeid} uses a broker or Spark: move it to integration")
