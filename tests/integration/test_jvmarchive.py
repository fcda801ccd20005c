"""Spark's class archive (AppCDS): dumped by the first embedded run, mapped by the next.

The proof that a JVM uses the archive comes from the kernel, not from migcheck:
the archive file appears in the JVM's ``/proc/<pid>/maps``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Starts an embedded session, runs one job, and prints the archive files the JVM has
#: mapped.
_RUN = """
from pyspark import SparkContext
from migcheck.analysis.spark import get_session
spark = get_session("local[1]", {"spark.jars": ""})
assert spark.range(5).count() == 5
maps = open(f"/proc/{SparkContext._gateway.proc.pid}/maps").read()
print(sorted({line.split()[-1] for line in maps.splitlines() if line.endswith(".jsa")}))
"""


Run = subprocess.CompletedProcess[str]


def _run(cache: Path) -> Run:
    env = {**os.environ, "MIGCHECK_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, timeout=180
    )


def _archives(cache: Path) -> list[Path]:
    return sorted(cache.glob("spark-*/*.jsa"))


def _settled(cache: Path, name: str = "", timeout_s: float = 180.0) -> list[Path]:
    """The archives once the detached process that saves a run's dump is done (the
    archive ``name``, or any, is there and no dump file is left), or at ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        there = [a for a in _archives(cache) if a.name == name or not name]
        if there and not list(cache.glob("spark-*/*.tmp")):
            break
        time.sleep(0.5)
    return _archives(cache)


@pytest.fixture(scope="module")
def dumped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    cache = tmp_path_factory.mktemp("cache")
    first = _run(cache)
    _settled(cache)
    return cache, first


def test_the_first_run_saves_the_archive_and_says_so(dumped) -> None:
    cache, first = dumped
    assert first.returncode == 0, first.stderr
    assert "saving Spark's classes to" in first.stderr
    assert "in the background" in first.stderr
    archives = _archives(cache)
    assert len(archives) == 1 and archives[0].stat().st_size > 1_000_000
    assert not list(cache.glob("spark-*/*.tmp")), "the private dump file was left behind"


def test_a_later_run_maps_it_and_saves_nothing(dumped) -> None:
    cache, _ = dumped
    (archive,) = _archives(cache)
    before = archive.stat()
    later = _run(cache)
    assert later.returncode == 0, later.stderr
    assert str(archive) in later.stdout  # the kernel's word: the JVM mapped the file
    assert "saving" not in later.stderr
    after = archive.stat()
    # The same file (a new save would be a new inode), touched as used so the cache's
    # pruning keeps it.
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    assert after.st_mtime_ns >= before.st_mtime_ns


def test_a_damaged_archive_only_costs_speed(tmp_path: Path, dumped) -> None:
    cache, _ = dumped
    (archive,) = _archives(cache)
    damaged = tmp_path / archive.relative_to(cache)
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not an archive" * 1000)
    run = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    assert str(damaged) not in run.stdout  # not mapped, and the job still ran


def test_a_killed_runs_dump_is_removed_by_the_next_dumping_run(tmp_path: Path, dumped) -> None:
    cache, _ = dumped
    (archive,) = _archives(cache)
    folder = tmp_path / archive.parent.name
    folder.mkdir()
    orphan = folder / f"{archive.name}.999999999.tmp"  # no such process: killed long ago
    orphan.write_bytes(b"half a dump")
    os.utime(orphan, (time.time() - 600, time.time() - 600))
    handed = folder / f"{archive.name}.999999998.tmp"  # its run gone, a JVM still writing
    handed.write_bytes(b"a dump being written")
    # A deleted virtualenv's archive, last used two hours ago: nothing can map it.
    gone = folder / "classes-0000000000000000.jsa"
    gone.write_bytes(b"an archive of a deleted virtualenv")
    gone.with_name(gone.name + ".src").write_text("/no/java\n4.2.0\n/no/venv/pyspark/jars\n")
    two_hours_ago = time.time() - 2 * 3600
    os.utime(gone, (two_hours_ago, two_hours_ago))
    run = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    assert not orphan.exists()
    assert handed.exists()  # younger than a dump may take: left to its detached process
    handed.unlink()
    _settled(tmp_path, archive.name)
    assert (folder / archive.name).is_file()  # and this run saved a whole one
    assert (folder / (archive.name + ".src")).is_file()  # naming what it was dumped from
    assert not gone.exists()  # and pruned what nothing installed can map
