"""numba's compiled kernels, cached once per host and reused by every run and every copy.

Why: numba's own cache (``cache=True``) lives beside the source file, in its
``__pycache__``.  A cluster's executor imports migcheck from the archive it unpacked
into a new working directory for every application, so its cache started empty on
every run, and each executor compiled the record decoder and the hash loops again
before its first record (seconds per executor, docs/benchmarks.md).  A fresh
virtualenv's first run paid the same on the driver.

So migcheck's kernels are cached under one directory per host, chosen by what the
compiled code depends on, never by where the source happens to sit:
``<cache>/kernels/<module>-<key>``, where ``<cache>`` is migcheck's cache
(``$MIGCHECK_CACHE_DIR`` or the XDG cache, :func:`migcheck.files.cache_root`), or a
directory of this user's under the system's temporary directory where that is not
writable.  The key hashes the kernel module's source bytes, numba's, llvmlite's and
Python's versions and the CPU numba compiles for (its name and features): a changed
kernel, another numba or another CPU gets a directory of its own and compiles, and is
never served stale code.  numba checks the source's content again (its index is
stamped with the file's hash) and the CPU per entry, so two hosts that share a home
directory still load only code built for their own CPU.

numba has no public way to put a cache there (``NUMBA_CACHE_DIR`` mirrors the source's
path, so a fresh copy still starts empty): this module subclasses numba's private caching
classes (``numba.core.caching``) and sets the dispatcher's ``_cache``, the one use of
numba's private API in migcheck.  Any release may change it, so it is fenced, as
kafka-python's hooks are (``kafka/private_hooks.py``): :data:`TESTED_NUMBA` is the range it
is written for, the pin in ``pyproject.toml`` (a unit test holds the two together).  From
0.62 (0.60 and 0.61 name ``InTreeCacheLocator`` with an underscore) to 0.68 these classes
are unchanged (read in numba's source at each release); the unit tests run on the
installed numba.  The first kernel compiled checks numba's version; outside that range,
or where those names do not import, every kernel takes numba's public path,
``numba.njit(cache=True)``: numba's own cache, beside the source (correct, but compiled
again in every fresh copy), and one line on stderr says so, once per process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from packaging.specifiers import SpecifierSet

from migcheck.fence import VersionFence
from migcheck.files import cache_root

#: A kernel directory unused this long (no run loaded from it) is removed when another
#: key's directory of the same module is made: its source or numba has changed since.
STALE_AFTER_S = 30 * 24 * 3600

# --- the fence ---------------------------------------------------------------------

#: The numba releases whose private caching API :func:`_cache_class` is written for: the
#: same range as the pin ``numba>=0.62,<0.69`` in pyproject.toml (a unit test holds the
#: two together).
TESTED_NUMBA = SpecifierSet(">=0.62,<0.69")


def fence(version: str | None = None) -> VersionFence:
    """numba's fence: of ``version`` for a test, else of the installed numba, read at the
    first kernel compiled (importing this module never imports numba)."""
    return VersionFence(
        "numba", "numba", TESTED_NUMBA,
        "kernels are cached by numba's own default, beside their source (compiled again "
        "in every fresh copy)",
        given_version=version,
    )  # fmt: skip


#: The fence of this process's numba.
FENCE = fence()


@functools.cache
def _target() -> str:
    """The CPU numba compiles for: its name and features, as numba's codegen picks them
    (``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` override the host's)."""
    import llvmlite
    import numba
    from llvmlite import binding as ll

    # numba.config sets these from the environment at run time: mypy cannot see them.
    name = numba.config.CPU_NAME or ll.get_host_cpu_name()  # type: ignore[attr-defined]
    features = numba.config.CPU_FEATURES  # type: ignore[attr-defined]
    if features is None:
        features = ll.get_host_cpu_features().flatten()
    return (
        f"numba {numba.__version__}\nllvmlite {llvmlite.__version__}\n"
        f"python {sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}\n"
        f"triple {ll.get_process_triple()}\ncpu {name}\nfeatures {features}\n"
    )


def kernel_key(source: bytes, target: str) -> str:
    """The key of a kernel module's cache: its source bytes and the compile target
    (:func:`_target`).  Any change to either gives another key."""
    digest = hashlib.sha256()
    digest.update(target.encode())
    digest.update(b"\0")
    digest.update(source)
    return digest.hexdigest()[:16]


def _roots() -> list[Path]:
    """Where kernel caches may go, best first: migcheck's cache, then this user's
    directory under the system's temporary directory (a read-only home, a container)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return [cache_root() / "kernels", Path(tempfile.gettempdir()) / f"migcheck-{uid}" / "kernels"]


@functools.cache
def kernel_dir(py_file: str) -> Path | None:
    """The writable directory for ``py_file``'s compiled kernels on this host, made if
    needed; None when no root is writable (numba's own locators then decide)."""
    path = Path(py_file)
    key = kernel_key(path.read_bytes(), _target())
    for root in _roots():
        folder = root / f"{path.stem}-{key}"
        try:
            fresh = not folder.is_dir()
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()  # writable, as numba requires
        except OSError:
            continue
        with contextlib.suppress(OSError):
            os.utime(folder)  # in use: not stale
        if fresh:
            _remove_stale(root, path.stem, folder)
        return folder
    return None


def _remove_stale(root: Path, stem: str, keep: Path) -> None:
    """Delete the same module's directories of other keys that no run has used for
    :data:`STALE_AFTER_S`: old sources, old numba versions, a CPU long gone."""
    for old in root.glob(f"{stem}-*"):
        with contextlib.suppress(OSError):
            if old != keep and time.time() - old.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(old)


@functools.cache
def _cache_class() -> type | None:
    """numba's function cache with migcheck's locator first, or None where :data:`FENCE`
    is closed: numba's own cache then (built on first use, so that importing this module
    never imports numba)."""
    if FENCE.tested_version:
        try:
            return _private_cache_class()
        except (ImportError, AttributeError) as e:
            FENCE.close(f"{type(e).__name__}: {e}")
    FENCE.open()
    return None


def _private_cache_class() -> type:
    """numba's function cache with migcheck's locator first, from numba's private caching
    classes (:data:`TESTED_NUMBA`)."""
    from numba.core.caching import (
        CompileResultCacheImpl,
        FunctionCache,
        InTreeCacheLocator,
        _CacheLocator,
    )

    class KernelLocator(_CacheLocator):
        """Locates a kernel's cache in :func:`kernel_dir`, whatever path its source has."""

        def __init__(self, py_func: Callable[..., Any], py_file: str, folder: Path) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._folder = str(folder)

        def get_cache_path(self) -> str:
            return self._folder

        def get_source_stamp(self) -> bytes:
            # The source's content, as numba's own locators stamp it: the key already
            # holds it, this keeps numba's own freshness check meaningful.
            return hashlib.sha256(Path(self._py_file).read_bytes()).digest()

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Callable[..., Any], py_file: str) -> Any:
            try:
                folder = kernel_dir(py_file)
            except OSError:
                return None
            return None if folder is None else cls(py_func, py_file, folder)

    class KernelCacheImpl(CompileResultCacheImpl):
        # numba leaves it unannotated: mypy infers an instance variable of constructors of
        # two arguments, where numba calls only each locator's from_function.
        _locator_classes: ClassVar[list[type]] = [  # type: ignore[misc, assignment]
            KernelLocator,
            InTreeCacheLocator,
        ]

    class KernelCache(FunctionCache):
        _impl_class = KernelCacheImpl

    return KernelCache


def njit(fn: Callable[..., Any], **options: Any) -> Any:
    """``numba.njit(**options)(fn)``, its compiled code cached in :func:`kernel_dir`; where
    the fence is closed, ``numba.njit(cache=True, **options)(fn)`` (numba's own cache).

    Functions compiled from one source file must differ in ``__qualname__`` or in
    their first line: numba names a function's cache files by those two.
    """
    import numba

    cache = _cache_class()
    if cache is None:
        return numba.njit(**{**options, "cache": True})(fn)
    dispatcher = numba.njit(**{**options, "cache": False})(fn)
    dispatcher._cache = cache(dispatcher.py_func)
    return dispatcher


def cache_events(dispatcher: Any) -> tuple[int, int]:
    """(loads from the cache, compiles) of ``dispatcher`` in this process: what a test or
    a benchmark asks to tell a cached run from a compiling one."""
    stats = dispatcher.stats
    return sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
