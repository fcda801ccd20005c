"""Writing a file whole or not at all: the one atomic writer every command uses.

A report or a copy's checkpoint must never be seen half written (a full disk,
Ctrl-C, a killed driver): a reader either finds the old file or the new one.  So
each is written into a temporary file beside the target, flushed to disk, and
renamed over it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, then rename.

    Raises the ``OSError`` of a failed write after removing the temporary file,
    so the caller names the cause in its own words.
    """
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
