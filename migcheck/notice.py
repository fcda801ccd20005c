"""A line said once per process on stderr: the fences of other libraries' private APIs
(``kafka/private_hooks.py`` for kafka-python, ``jit.py`` for numba) each say once that
they took the public path, however many threads reach them."""

from __future__ import annotations

import sys
import threading


class OnceNotice:
    """Prints its first :meth:`say` on stderr and ignores the rest."""

    def __init__(self) -> None:
        self._told = False
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            if not self._told:
                print(line, file=sys.stderr, flush=True)
                self._told = True
