"""The detached process that saves a first run's class archive (jvmarchive.finish_detached):
it waits for the JVM to exit, and keeps a dump only if its header was written.

No JVM here: a short-lived process stands for it, and the dumps are files written the way
a JVM leaves them (regions first, the header at offset 0 last; a killed JVM leaves zeros
there)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from migcheck.analysis import jvmarchive

MAGIC = bytes.fromhex("a8ab0bf0")  # Java 17's dynamic archive, as its dumps begin


def _dump(folder: Path, head: bytes) -> tuple[Path, Path]:
    archive = folder / "spark-4.2.0" / "classes-0123456789abcdef.jsa"
    archive.parent.mkdir(parents=True)
    dump = archive.with_name(archive.name + ".4242.tmp")
    dump.write_bytes(head + bytes(64 * 1024))
    return dump, archive


def _jvm(seconds: float) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(["sleep", str(seconds)])
    started = jvmarchive._start_time(proc.pid)
    assert started is not None
    return proc, started


def test_a_whole_dump_is_saved_once_the_jvm_has_exited(tmp_path: Path) -> None:
    dump, archive = _dump(tmp_path, MAGIC)
    proc, started = _jvm(1.0)
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped, as an init would
    begun = time.monotonic()
    jvmarchive.finish_detached(proc.pid, started, dump, archive)
    assert time.monotonic() - begun >= 0.5  # it waited for the exit
    assert archive.read_bytes()[:4] == MAGIC
    assert not dump.exists()
    assert archive.with_name(archive.name + ".src").is_file()


def test_an_unreaped_jvm_counts_as_exited(tmp_path: Path) -> None:
    """An orphan's parent may be an init that never reaps: a zombie has exited."""
    dump, archive = _dump(tmp_path, MAGIC)
    proc, started = _jvm(0.1)
    time.sleep(0.5)  # exited, not waited for: a zombie
    assert jvmarchive._start_time(proc.pid) is None
    jvmarchive.finish_detached(proc.pid, started, dump, archive)
    assert archive.is_file()
    proc.wait()


def test_a_dump_without_its_header_is_thrown_away(tmp_path: Path) -> None:
    dump, archive = _dump(tmp_path, bytes(4))  # killed before the header was written
    proc, started = _jvm(0.1)
    proc.wait()
    jvmarchive.finish_detached(proc.pid, started, dump, archive)
    assert not archive.exists()
    assert not dump.exists()


def test_a_dump_from_a_run_that_is_gone_is_left_while_it_may_still_be_written(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "spark-4.2.0"
    folder.mkdir()
    fresh = folder / "classes-0123456789abcdef.jsa.999999998.tmp"
    stale = folder / "classes-0123456789abcdef.jsa.999999999.tmp"
    for tmp in (fresh, stale):
        tmp.write_bytes(b"part of a dump")
    old = time.time() - jvmarchive._DUMP_WAIT_S - 60
    os.utime(stale, (old, old))
    jvmarchive._remove_orphans(folder)
    assert fresh.exists()
    assert not stale.exists()


def test_a_run_that_starts_while_an_archive_is_being_saved_dumps_nothing(tmp_path: Path) -> None:
    """The detached process is named beside the archive: while it lives, a new run maps
    nothing and dumps nothing; once it is gone (or says nothing), a run dumps again."""
    archive = tmp_path / "spark-4.2.0" / "classes-0123456789abcdef.jsa"
    archive.parent.mkdir(parents=True)
    saving = archive.with_name(archive.name + ".saving")
    helper = subprocess.Popen(["sleep", "30"])
    try:
        saving.write_text(str(helper.pid))
        assert jvmarchive.jvm_options(archive) == ([], None)
    finally:
        helper.kill()
        helper.wait()
    options, dump = jvmarchive.jvm_options(archive)
    assert dump is not None and options == [f"-XX:ArchiveClassesAtExit={dump}"]


def test_the_detached_process_clears_its_own_name_when_done(tmp_path: Path) -> None:
    dump, archive = _dump(tmp_path, MAGIC)
    saving = archive.with_name(archive.name + ".saving")
    saving.write_text(str(os.getpid()))  # this process stands for the detached one
    proc, started = _jvm(0.1)
    proc.wait()
    jvmarchive.finish_detached(proc.pid, started, dump, archive)
    assert archive.is_file() and not saving.exists()
