"""pyarrow without pandas, where nothing in the process needs pandas.

pyarrow works without pandas (it is an optional dependency), but when pandas is
installed, pyarrow's first call that could meet a pandas object (``pa.scalar``,
``pa.array``, ``to_numpy``) imports it to check: 0.2 to 0.5 s, a fifth of a
1,000-record topic's whole command, for a read that never holds a pandas object.

:func:`hide_pandas` answers that first check "not installed", as in an environment
without pandas.  pyarrow asks once per process: its later checks for a pandas object
(``pa.array(series)``) then say no, while any call that needs pandas
(``Table.to_pandas``) imports it after all.  pyspark imports pandas itself where its
driver needs it.  So it is called only where the process reads with Arrow alone:
the driver's whole read of a small topic (``analysis/scan/driver.py``).
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class _Absent(importlib.abc.MetaPathFinder):
    """A finder that says pandas is not installed (for pyarrow's one check only)."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas hidden from pyarrow's first check", name=name)
        return None


def hide_pandas() -> None:
    """Let pyarrow take pandas for absent, if it has not looked for it yet and pandas is
    not imported already (then there is nothing left to save)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _Absent()
    sys.meta_path.insert(0, finder)
    try:
        pa.scalar(0)  # pyarrow's first look for pandas (a no-op once it has looked)
    finally:
        sys.meta_path.remove(finder)
