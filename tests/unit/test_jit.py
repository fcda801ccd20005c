"""The kernels' compile cache: one per host, found again from any copy of the source,
never serving code compiled from another source or for another CPU.

A cluster's executor imports migcheck from a fresh copy of the archive on every run;
numba's own cache (beside the source file) then starts empty each time.  These tests
compile a real kernel with numba in separate processes, as separate runs would, and
count what numba loaded and compiled (its own dispatcher statistics).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from migcheck import jit

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


def _run(folder: Path, cache: Path, tmpdir: Path | None = None) -> dict:
    env = {**os.environ, "MIGCHECK_CACHE_DIR": str(cache)}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    p = subprocess.run([sys.executable, "-c", RUN, str(folder)], capture_output=True,
                       text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


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
