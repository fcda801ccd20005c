"""Spark's class archive (AppCDS): saved by ``migcheck warm`` in the foreground, mapped by
every later embedded run; a check without one dumps nothing and leaves nothing running.

The proof that a JVM uses the archive comes from the kernel, not from migcheck: the
archive file appears in the JVM's ``/proc/<pid>/maps``; that no process outlives its
command, from ``/proc`` too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Starts an embedded session, runs one job, and prints the JVM's pid and the archive
#: files it has mapped.
_RUN = """
from pyspark import SparkContext
from migcheck.analysis.spark import get_session
spark = get_session("local[1]", {"spark.jars": ""})
assert spark.range(5).count() == 5
pid = SparkContext._gateway.proc.pid
maps = open(f"/proc/{pid}/maps").read()
print(pid)
print(sorted({line.split()[-1] for line in maps.splitlines() if line.endswith(".jsa")}))
"""


Run = subprocess.CompletedProcess[str]


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "MIGCHECK_CACHE_DIR": str(cache)}


def _run(cache: Path) -> Run:
    return subprocess.run([sys.executable, "-c", _RUN], env=_env(cache), capture_output=True,
                          text=True, timeout=180, check=False)  # fmt: skip


def _warm(cache: Path) -> Run:
    return subprocess.run([sys.executable, "-m", "migcheck", "warm"], env=_env(cache),
                          capture_output=True, text=True, timeout=400, check=False)  # fmt: skip


def _archives(cache: Path) -> list[Path]:
    return sorted(cache.glob("spark-*/*.jsa"))


def _ended(pid: int, timeout_s: float = 30.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``timeout_s``: the JVM
    exits as its command's pipe closes, a moment after the command itself."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.2)
    return False


def _naming(text: str) -> list[str]:
    """The running processes whose command line names ``text``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(cmdline.parent.name)
        except OSError:
            pass
    return found


@dataclass(frozen=True)
class Leftovers:
    """Files planted in the archive's folder before the module's one warm-up (a warm-up
    takes a minute: one serves every test here)."""

    orphan: Path  # a dump whose process was killed long ago
    recent: Path  # a dump whose run ended a moment ago
    gone: Path  # the archive of a deleted virtualenv, unused for two hours


def _plant(folder: Path, name: str) -> Leftovers:
    folder.mkdir(parents=True)
    orphan = folder / f"{name}.999999999.tmp"  # no such process: killed long ago
    orphan.write_bytes(b"half a dump")
    os.utime(orphan, (time.time() - 600, time.time() - 600))
    recent = folder / f"{name}.999999998.tmp"  # its run gone a moment ago
    recent.write_bytes(b"a dump being written")
    gone = folder / "classes-0000000000000000.jsa"
    gone.write_bytes(b"an archive of a deleted virtualenv")
    gone.with_name(gone.name + ".src").write_text("/no/java\n4.2.0\n/no/venv/pyspark/jars\n")
    two_hours_ago = time.time() - 2 * 3600
    os.utime(gone, (two_hours_ago, two_hours_ago))
    return Leftovers(orphan, recent, gone)


@pytest.fixture(scope="module")
def warmed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run, Leftovers]:
    """An empty cache but for a killed warm-up's leftovers, warmed once.  The archive's
    folder and file name come from migcheck: where a killed dump would have been left."""
    from migcheck.analysis import jvmarchive

    cache = tmp_path_factory.mktemp("cache")
    path = jvmarchive.archive_path(cache)
    assert path is not None
    planted = _plant(path.parent, path.name)
    return cache, _warm(cache), planted


def test_a_check_without_an_archive_dumps_nothing_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    pid, mapped = run.stdout.splitlines()
    assert str(tmp_path) not in mapped  # the JDK's own base archive may be mapped, no other
    assert _ended(int(pid)), "the check's JVM outlived it"
    assert not _naming(str(tmp_path)), "a process of the check outlived it"
    assert not list(tmp_path.glob("spark-*/*")), "a check dumped or saved an archive"
    assert "saving" not in run.stderr


def test_warm_saves_the_archive_in_the_foreground_and_says_so(warmed) -> None:
    cache, warm, planted = warmed
    assert warm.returncode == 0, warm.stderr
    archives = _archives(cache)  # there when the command returns: nothing left to wait for
    assert len(archives) == 1 and archives[0].stat().st_size > 1_000_000
    left = list(cache.glob("spark-*/*.tmp"))
    assert left == [planted.recent], "the private dump file was left behind"
    assert f"migcheck warm: saving Spark's classes to {archives[0]}" in warm.stderr
    assert "class archive:  saved" in warm.stdout
    assert "hash kernels:" in warm.stdout
    assert any((cache / "kernels").iterdir()), "no kernel compiled into the cache"
    assert not _naming(str(cache)), "a process of the warm-up outlived it"


def test_a_later_run_maps_it_and_a_second_warm_up_changes_nothing(warmed) -> None:
    cache, _, _ = warmed
    (archive,) = _archives(cache)
    before = archive.stat()
    later = _run(cache)
    assert later.returncode == 0, later.stderr
    assert str(archive) in later.stdout  # the kernel's word: the JVM mapped the file
    again = _warm(cache)
    assert again.returncode == 0, again.stderr
    assert "class archive:  already saved" in again.stdout
    assert "saving" not in again.stderr
    after = archive.stat()
    # The same file (a new save would be a new inode), touched as used so the cache's
    # pruning keeps it.
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    assert after.st_mtime_ns >= before.st_mtime_ns


def test_a_damaged_archive_only_costs_speed(tmp_path: Path, warmed) -> None:
    cache, _, _ = warmed
    (archive,) = _archives(cache)
    damaged = tmp_path / archive.relative_to(cache)
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not an archive" * 1000)
    run = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    assert str(damaged) not in run.stdout  # not mapped, and the job still ran


def test_a_killed_warm_ups_dump_is_removed_by_the_next_one(warmed) -> None:
    cache, warm, planted = warmed
    assert warm.returncode == 0, warm.stderr
    (archive,) = _archives(cache)  # this run saved a whole one
    assert not planted.orphan.exists()
    assert planted.recent.exists()  # younger than a dump may take: left alone
    assert archive.with_name(archive.name + ".src").is_file()  # naming what it came from
    assert not planted.gone.exists()  # and pruned what nothing installed can map
