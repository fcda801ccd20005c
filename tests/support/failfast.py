"""What both lanes' fail-fast tests check of a bad input: migcheck run as a user runs it,
timed, and its stderr one line with no traceback and no exception class name."""

from __future__ import annotations

import re
import subprocess
import sys
import time

#: Issue 43's bound for a refused connection or a name that does not resolve.
BOUND_S = 5.0

#: What a kafka-python or Python exception's class name looks like in a line.
CLASS_NAME = re.compile(r"\b[A-Z]\w*(Error|Exception)\b")


def timed_cli(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], float]:
    """``migcheck ARGS`` as a separate process, and how long it took."""
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    return r, time.monotonic() - start


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    """stderr's only line, with no traceback and no exception class name in it."""
    assert r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and not CLASS_NAME.search(r.stderr), r.stderr
    return r.stderr.strip()
