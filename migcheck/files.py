"""Files: the one atomic writer every command uses, and where migcheck caches things.

A report or a copy's checkpoint must never be seen half written (a full disk,
Ctrl-C, a killed driver): a reader either finds the old file or the new one.  So
each is written into a temporary file beside the target, flushed to disk, and
renamed over it.  A target that exists and is no regular file (``/dev/null``, a FIFO, a
terminal) is written in place instead: renaming over it would replace the device or the
pipe with a plain file (as root, ``--output /dev/null`` would leave every later writer's
output in a file anyone reads), and such a target holds nothing to see half written.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_binary(path: str | Path) -> Iterator[BinaryIO]:
    """A file to write ``path`` through: a temporary file beside it, flushed to disk and
    renamed over ``path`` when the block ends, removed when it raises (``OSError`` and
    Ctrl-C alike), so the caller names the cause in its own words.  A ``path`` that is no
    regular file is written in place (the module's docstring says why)."""
    if _special(path):
        with open(path, "wb") as f:
            yield f
        return
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _special(path: str | Path) -> bool:
    """Whether ``path`` exists and is no regular file (a device, a FIFO, a socket);
    a symbolic link counts as what it points to."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # absent (or unreadable: the open or the rename says why)
        return False


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all."""
    with atomic_binary(path) as f:
        f.write(text.encode("utf-8"))


def cache_root() -> Path:
    """migcheck's cache (the JVM's class archive, the executors' archive):
    ``$MIGCHECK_CACHE_DIR``, or ``migcheck`` in the XDG cache."""
    return Path(
        os.environ.get("MIGCHECK_CACHE_DIR")
        or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "migcheck"
        )
    )
