"""The kernels' compile cache: one per host, found again from any copy of the source,
never serving code compiled from another source or for another CPU.

A cluster's executor imports migcheck from a fresh copy of the archive on every run;
numba's own cache (beside the source file) then starts empty each time.  These tests
compile a real kernel with numba in separate processes, as separate runs would, and
count what numba loaded and compiled (its own dispatcher statistics).

That cache reaches into numba's private API, fenced by numba's version: the fence admits
what the pin in pyproject.toml admits, and outside it a kernel is cached as numba's own
``cache=True`` caches it, in ``__pycache__`` beside its source.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from migcheck import jit

REPO = Path(__file__).resolve().parents[2]

KERNEL = """
import numpy as np
from migcheck import jit


def _total(values):
    s = 0
    for v in values:
        s += v * FACTOR
    return s


FACTOR = 3
total = jit.njit(_total)
"""

RUN = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kern
from migcheck.jit import cache_events
result = int(kern.total(np.arange(10, dtype=np.int64)))
hits, misses = cache_events(kern.total)
print(json.dumps({"result": result, "loaded": hits, "compiled": misses,
                  "path": kern.total.stats.cache_path}))
"""


def _run(
    folder: Path, cache: Path, tmpdir: Path | None = None, numba_version: str | None = None
) -> dict:
    """A run of ``folder``'s kernel in a fresh process; with ``numba_version``, its fence is
    made for that version (numba itself untouched).  Its stderr is the result's "stderr"."""
    env = {**os.environ, "MIGCHECK_CACHE_DIR": str(cache)}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    script = RUN
    if numba_version is not None:
        script = f"from migcheck import jit\njit.FENCE = jit.fence({numba_version!r})\n{RUN}"
    p = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True,
                       text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return {**json.loads(p.stdout.strip().splitlines()[-1]), "stderr": p.stderr}


def test_a_changed_source_or_cpu_changes_the_key() -> None:
    source = KERNEL.encode()
    target = "numba 0.61\ncpu skylake\nfeatures +avx2\n"
    key = jit.kernel_key(source, target)
    assert jit.kernel_key(source, target) == key
    assert jit.kernel_key(source.replace(b"* FACTOR", b"+ FACTOR"), target) != key
    assert jit.kernel_key(source, target.replace("skylake", "znver3")) != key
    assert jit.kernel_key(source, target.replace("+avx2", "-avx2")) != key
    assert jit.kernel_key(source, target.replace("0.61", "0.62")) != key


def test_the_cache_serves_any_copy_and_recompiles_a_changed_source(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, second = tmp_path / "app-1" / "deps", tmp_path / "app-2" / "deps"
    first.mkdir(parents=True)
    (first / "kern.py").write_text(KERNEL, encoding="utf-8")

    run = _run(first, cache)
    assert (run["result"], run["loaded"], run["compiled"]) == (135, 0, 1)
    assert Path(run["path"]).parent == cache / "kernels", run["path"]

    # A second run, from another copy of the same source at another path (an executor's
    # next application unpacks the archive afresh), with a copy's own mtime: loaded.
    shutil.copytree(first, second)
    os.utime(second / "kern.py", (1, 1))
    run = _run(second, cache)
    assert (run["result"], run["loaded"], run["compiled"]) == (135, 1, 0)
    assert not (second / "__pycache__").exists() or not any((second / "__pycache__").glob("*.nb*"))

    # A changed kernel is compiled again, into a directory of its own key.
    (second / "kern.py").write_text(KERNEL.replace("FACTOR = 3", "FACTOR = 4"), "utf-8")
    changed = _run(second, cache)
    assert (changed["result"], changed["loaded"], changed["compiled"]) == (180, 0, 1)
    assert changed["path"] != run["path"]
    assert len(list((cache / "kernels").glob("kern-*"))) == 2


def test_an_unwritable_cache_falls_back_to_the_temporary_directory(tmp_path: Path) -> None:
    """A home that cannot be written (a read-only container) still caches, elsewhere."""
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("", encoding="utf-8")
    folder = tmp_path / "deps"
    folder.mkdir()
    (folder / "kern.py").write_text(KERNEL, encoding="utf-8")
    run = _run(folder, blocked, tmp_path)
    assert run["result"] == 135 and run["compiled"] == 1
    assert Path(run["path"]).parent.parent == tmp_path / f"migcheck-{os.getuid()}", run["path"]


# --- the fence of numba's private caching API -----------------------------------------------


def _pin() -> Requirement:
    """The numba requirement in pyproject.toml."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in deps if Requirement(d).name == "numba"]
    return pin


@pytest.mark.parametrize(
    ("version", "inside"),
    [
        ("0.60.0", False),  # InTreeCacheLocator is still _InTreeCacheLocator
        ("0.61.2", False),
        ("0.62.0rc1", False),
        ("0.62.0", True),
        ("0.65.1", True),
        ("0.68.1", True),
        ("0.68.2rc1", True),
        ("0.69.0.dev0", False),
        ("0.69.0rc1", False),
        ("0.69.0", False),
        ("1.0.0", False),
    ],
)
def test_the_fence_admits_what_the_pin_admits(version: str, inside: bool) -> None:
    assert jit.fence(version).tested_version is inside
    assert _pin().specifier.contains(version, prereleases=True) is inside


def test_a_version_that_does_not_parse_is_outside() -> None:
    assert not jit.fence("0.68-custom build").tested_version


def test_the_installed_numba_is_in_the_range() -> None:
    """The pinned install takes migcheck's cache (the tests above show it in use)."""
    assert jit.fence(importlib.metadata.version("numba")).tested_version


def test_outside_the_range_the_fence_is_closed_and_says_so_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fence = jit.fence("0.69.0")
    assert [fence.open() for _ in range(3)] == [False, False, False]
    assert capsys.readouterr().err == (
        "migcheck: numba 0.69.0 is outside migcheck's tested range <0.69,>=0.62: kernels "
        "are cached by numba's own default, beside their source (compiled again in every "
        "fresh copy)\n"
    )


def test_in_the_range_without_the_private_names_the_fence_closes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fence = jit.fence("0.68.1")
    assert fence.open() and capsys.readouterr().err == ""
    fence.close("ImportError: cannot import name '_CacheLocator'")
    assert [fence.open(), fence.open()] == [False, False]
    assert capsys.readouterr().err == (
        "migcheck: numba 0.68.1 lacks the private API migcheck uses (ImportError: cannot "
        "import name '_CacheLocator'): kernels are cached by numba's own default, beside "
        "their source (compiled again in every fresh copy)\n"
    )


def test_outside_the_range_a_kernel_is_cached_by_numbas_own_default(tmp_path: Path) -> None:
    """numba's documented ``cache=True``: the cache goes in ``__pycache__`` beside the
    source, and the next run of the same file loads it; nothing in migcheck's cache."""
    cache = tmp_path / "cache"
    folder = tmp_path / "deps"
    folder.mkdir()
    (folder / "kern.py").write_text(KERNEL, encoding="utf-8")
    line = jit.fence("0.69.0").line

    run = _run(folder, cache, numba_version="0.69.0")
    assert (run["result"], run["loaded"], run["compiled"]) == (135, 0, 1)
    assert Path(run["path"]) == folder / "__pycache__", run["path"]
    assert any((folder / "__pycache__").glob("kern._total-*.nbi"))
    assert not (cache / "kernels").exists()
    assert run["stderr"].splitlines() == [line]

    run = _run(folder, cache, numba_version="0.69.0")
    assert (run["result"], run["loaded"], run["compiled"]) == (135, 1, 0)
    assert run["stderr"].splitlines() == [line]
