"""Spark's class archive is dumped by ``migcheck warm`` alone (jvmarchive.finish_dump): it
ends the JVM, waits for it, and keeps a dump only if its header was written; a check maps
an archive that is there and dumps nothing when it is not.

No JVM here: a short-lived process reading its standard input stands for it (pyspark's JVM
exits when its input closes), and the dumps are files written the way a JVM leaves them
(regions first, the header at offset 0 last; a killed JVM leaves zeros there)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from migcheck.analysis import jvmarchive

MAGIC = bytes.fromhex("a8ab0bf0")  # Java 17's dynamic archive, as its dumps begin


def _archive(folder: Path) -> Path:
    archive = folder / "spark-4.2.0" / "classes-0123456789abcdef.jsa"
    archive.parent.mkdir(parents=True, exist_ok=True)
    return archive


def _jvm(dump: Path, head: bytes, code: int = 0) -> subprocess.Popen[bytes]:
    """A process that, once its input closes, writes ``dump`` (``head`` first) and exits
    with ``code``, as pyspark's JVM does with ``-XX:ArchiveClassesAtExit``."""
    script = (
        "import sys; sys.stdin.read(); "
        f"open({str(dump)!r}, 'wb').write({head!r} + bytes(64 * 1024)); sys.exit({code})"
    )
    return subprocess.Popen(["python3", "-c", script], stdin=subprocess.PIPE)


def test_a_whole_dump_is_saved_once_the_jvm_has_exited(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    options, dump = jvmarchive.dump_options(archive) or ([], tmp_path)
    assert options == [f"-XX:ArchiveClassesAtExit={dump}"]
    proc = _jvm(dump, MAGIC)
    assert jvmarchive.finish_dump(proc, dump, archive, wait_s=30)
    assert proc.returncode == 0  # it ended the process and waited for it
    assert archive.read_bytes()[:4] == MAGIC
    assert not dump.exists()
    assert archive.with_name(archive.name + ".src").is_file()


def test_a_dump_without_its_header_is_thrown_away(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    dump = archive.with_name(archive.name + ".4242.tmp")
    assert not jvmarchive.finish_dump(_jvm(dump, bytes(4)), dump, archive, wait_s=30)
    assert not archive.exists()
    assert not dump.exists()


def test_a_jvm_that_failed_leaves_no_archive(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    dump = archive.with_name(archive.name + ".4242.tmp")
    assert not jvmarchive.finish_dump(_jvm(dump, MAGIC, code=1), dump, archive, wait_s=30)
    assert not archive.exists() and not dump.exists()


def test_a_check_maps_an_archive_that_is_there_and_dumps_none_that_is_not(
    tmp_path: Path,
) -> None:
    archive = _archive(tmp_path)
    assert jvmarchive.jvm_options(archive) == []
    assert not list(archive.parent.iterdir())  # nothing dumped, nothing started
    archive.write_bytes(MAGIC + bytes(8192))
    old = time.time() - 3600
    os.utime(archive, (old, old))
    assert jvmarchive.jvm_options(archive) == [f"-XX:SharedArchiveFile={archive}"]
    assert archive.stat().st_mtime == pytest.approx(old)  # asking changes nothing
    jvmarchive.mark_used(archive)
    assert archive.stat().st_mtime > old + 60  # touched as used: the pruning keeps it


def test_a_dump_from_a_run_that_is_gone_is_left_while_it_may_still_be_written(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "spark-4.2.0"
    folder.mkdir()
    fresh = folder / "classes-0123456789abcdef.jsa.999999998.tmp"
    stale = folder / "classes-0123456789abcdef.jsa.999999999.tmp"
    for tmp in (fresh, stale):
        tmp.write_bytes(b"part of a dump")
    old = time.time() - jvmarchive.DUMP_WAIT_S - 60
    os.utime(stale, (old, old))
    jvmarchive._remove_orphans(folder)
    assert fresh.exists()
    assert not stale.exists()
