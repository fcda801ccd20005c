"""The fence around another library's private API: one class for every library migcheck
reaches into (kafka-python in ``kafka/private_hooks.py``, numba in ``jit.py``, pyspark in
``analysis/pyspark_private.py``).

Why one class: the three fences were near copies (a tested version range, a line said
once when the public path is taken, a way to close at run time), and a fix to one (the
version parse, the notice's thread safety) had to be made three times.  Each module keeps
its own range, its own words for what the public path costs, and its own uses; the
decision and the notice live here.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version


class OnceNotice:
    """Prints its first :meth:`say` on stderr and ignores the rest, however many threads
    reach it."""

    def __init__(self) -> None:
        self._told = False
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            if not self._told:
                print(line, file=sys.stderr, flush=True)
                self._told = True


def in_range(tested: SpecifierSet, version: str) -> bool:
    """Whether ``version`` is in ``tested``, pre-releases included as the pins in
    pyproject.toml include them; a version that does not parse is not."""
    try:
        return tested.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


@dataclass
class VersionFence:
    """Whether migcheck may use ``library``'s private API: open inside ``tested`` (the
    range of the pin in pyproject.toml, held together with it by a unit test), closed
    outside it, or when :meth:`close` says the private names did not load, or when
    ``off_switch`` (an environment variable) is ``off``.  Closed, the first :meth:`open`
    of the process says so on stderr, with ``public_path``: what the fallback costs.

    ``version`` is the library's own ``__version__``, read at the first use unless given
    (a test's fence), so that importing the fencing module never imports the library.
    """

    library: str  # the name a user knows it by: "kafka-python"
    module: str  # its import name: "kafka"
    tested: SpecifierSet
    public_path: str
    off_switch: str | None = None
    given_version: str | None = None
    missing: str = ""  # inside the range, why the private names did not load
    _notice: OnceNotice = field(default_factory=OnceNotice, repr=False)

    @property
    def version(self) -> str:
        if self.given_version is None:
            self.given_version = str(importlib.import_module(self.module).__version__)
        return self.given_version

    @property
    def tested_version(self) -> bool:
        """Whether the installed version is in the tested range, and its names loaded."""
        return not self.missing and in_range(self.tested, self.version)

    @property
    def line(self) -> str:
        """The one stderr line that says the public path is taken, and what it costs."""
        why = (
            f"lacks the private API migcheck uses ({self.missing})"
            if self.missing
            else f"is outside migcheck's tested range {self.tested}"
        )
        return f"migcheck: {self.library} {self.version} {why}: {self.public_path}"

    def close(self, why: str) -> None:
        """The private names failed to load (``why``): the public path from now on."""
        self.missing = why

    def open(self) -> bool:
        """Whether a private use may go ahead now; when the fence is closed by version or
        by :meth:`close`, the first call of the process prints :attr:`line` on stderr.
        The off switch refuses silently: a test comparing the two paths asked for it."""
        if self.off_switch and os.environ.get(self.off_switch) == "off":
            return False
        if not self.tested_version:
            self._notice.say(self.line)
            return False
        return True
