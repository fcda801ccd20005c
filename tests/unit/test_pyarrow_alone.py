"""pyarrow told that pandas is absent (migcheck/pyarrow_alone.py), in a fresh interpreter:
the test process may have imported pandas already, which makes the call a no-op."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("pandas")

SCRIPT = """
import sys
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
{hide}
a = pa.array(np.arange(5), pa.int64())
t = pa.table({{"a": a, "b": pc.add(a, 1)}})
kept = (t.column("b").to_numpy().tolist(), pa.scalar("x").as_py())
before = "pandas" in sys.modules
frame = t.to_pandas()  # needs pandas: imported now
print(before, kept, list(frame["b"]), type(frame).__module__.split(".")[0])
"""


def _run(hide: bool) -> str:
    line = "from migcheck.pyarrow_alone import hide_pandas; hide_pandas()" if hide else ""
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(hide=line)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def test_pyarrow_reads_and_computes_without_importing_pandas_and_imports_it_when_asked() -> None:
    # without the call pyarrow imports pandas at its first conversion (the check's reason)
    assert _run(hide=False) == "True ([1, 2, 3, 4, 5], 'x') [1, 2, 3, 4, 5] pandas"
    assert _run(hide=True) == "False ([1, 2, 3, 4, 5], 'x') [1, 2, 3, 4, 5] pandas"
