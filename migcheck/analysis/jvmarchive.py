"""A class-data archive (Java's AppCDS) for the embedded Spark JVM: a faster start.

An embedded run starts a JVM that loads some 10,000 Spark classes before the
first job: seconds of every command.  Java 17 can dump the classes a run loaded into
an archive (``-XX:ArchiveClassesAtExit``) and map it in later runs
(``-XX:SharedArchiveFile``), which takes most of that load off every later start
(docs/benchmarks.md).

The first embedded run dumps the archive when its JVM exits; later runs map
it.  The archive is keyed on the Java binary and the pyspark build, since a JVM
maps only an archive that its own build dumped from the same class path.  It is
dumped under a private name and moved into place only once whole, so concurrent
runs never map a half-written file.  Whatever goes wrong here only costs speed: a
JVM that cannot map an archive starts without it.

The dump is not waited for.  A JVM writes it as it exits, after the report is out:
5 to 17 s on two cores for a 105 to 155 MB archive, which the first run used to add
to its own time (docs/benchmarks.md).  The run hands it over instead to a detached
process (:func:`finish_detached`, this module run as a script), which waits for the
JVM to exit and moves the dump into place if it is whole.  Whole means that its
header is written: the JVM writes the regions first and the header, at offset 0,
last (watched on Java 17: the file's first bytes stay zero while 147 MB of
regions are written, then the magic number appears), so a JVM killed mid-dump
leaves zeros there.

Each archive is 105 to 155 MB (measured with pyspark 4.2.0 and Java 17: 105.6 MB after a
first ``analyze``, 153.8 MB when the first run loaded more of Spark's classes), and
every virtualenv's pyspark is another class path, so another archive.  The cache
therefore keeps only what the installed versions use, within a bound
(:func:`to_remove`, run each time a new archive is saved):

- an archive that no installed Java and pyspark can map any more is removed: beside
  each archive a small ``.src`` file records the java binary and pyspark's jars folder
  it was dumped from, and when those are gone (a deleted virtualenv) or changed (an
  upgraded pyspark or Java), its key no longer names anything installed;
- of the rest, at most :data:`MAX_ARCHIVES` (3) and :data:`MAX_BYTES` (600 MB) are kept,
  the most recently used first (each run that maps an archive touches it);
- an archive used within :data:`IN_USE_S` (1 hour) is never removed, whatever the
  rule says: another process may be about to start a JVM on it.  (A JVM that already
  mapped a file keeps it when it is unlinked; the hour covers the runs between choosing
  the file and starting the JVM.)  So the bound can be exceeded only by archives that
  were all used in the last hour.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: How long the detached process waits for the JVM to write the archive and exit.
_DUMP_WAIT_S = 300.0

_SAVING = (
    "migcheck: saving Spark's classes to {} in the background, for faster starts (first run only)"
)


def _java() -> str | None:
    """The java binary Spark's launcher runs: ``$JAVA_HOME/bin/java``, else PATH's."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.isfile(found) else None


#: At most this many archives stay in the cache (beyond those used within IN_USE_S).
MAX_ARCHIVES = 3
#: And at most this many bytes of them (3 of the largest archives measured, 154 MB, fit).
MAX_BYTES = 600 * 10**6
#: An archive used this recently is never removed: a run may be starting a JVM on it.
IN_USE_S = 3600.0


def archive_path(cache_root: Path) -> Path | None:
    """Where this Java and this pyspark keep their archive; None without a java binary."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    digest = _digest(java, pyspark.__version__, str(jars))
    return cache_root / f"spark-{pyspark.__version__}" / f"classes-{digest}.jsa"


def _digest(java: str, version: str, jars: str) -> str:
    """The archive's key: the java binary and pyspark's jars folder, with their mtimes,
    since a JVM maps only what its own build dumped from the same class path."""
    facts = [java, str(os.stat(java).st_mtime_ns), version, jars]
    with contextlib.suppress(OSError):
        facts.append(str(Path(jars).stat().st_mtime_ns))
    return hashlib.sha256("\0".join(facts).encode()).hexdigest()[:16]


def jvm_options(archive: Path | None) -> tuple[list[str], Path | None]:
    """The JVM options that map ``archive``, or dump it when it is missing.

    Returns the options and, when this run dumps, the private file the JVM writes
    (hand it to :func:`install_at_exit` once the JVM is started).
    """
    if archive is None:
        return [], None
    if archive.is_file():
        with contextlib.suppress(OSError):
            os.utime(archive)  # in use: the pruning keeps it (see to_remove)
        return [f"-XX:SharedArchiveFile={archive}"], None
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return [], None  # a read-only cache: run without
    if _being_saved(archive):
        return [], None  # an earlier run's dump is on its way: run without, dump nothing
    _remove_orphans(archive.parent)
    dump = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={dump}"], dump


def _remove_orphans(folder: Path) -> None:
    """Delete the dumps of runs that died before their exit (killed): each is
    tens of megabytes, named after its process, and never becomes an archive.  A dump
    younger than :data:`_DUMP_WAIT_S` is left: its run may have handed it over."""
    for tmp in folder.glob("*.jsa.*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        with contextlib.suppress(OSError):
            recent = time.time() - tmp.stat().st_mtime < _DUMP_WAIT_S
            if pid.isdigit() and not _alive(int(pid)) and not recent:
                tmp.unlink()


def _alive(pid: int) -> bool:
    """Signal 0 checks that ``pid`` exists; a process of another user answers
    PermissionError, and is alive too."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def install_at_exit(proc: Any, dump: Path, archive: Path, stop: Callable[[], None]) -> None:
    """When Python exits, let the JVM exit and write ``dump``, and have it moved to
    ``archive`` by a detached process, so that no command waits for the dump.

    ``stop`` ends Spark first (its Python-side servers would report the JVM's exit as
    errors).  pyspark's JVM exits when its standard input closes; the archive is
    written at that exit.
    """

    def finish() -> None:
        handed = False
        try:
            if proc.poll() is None:
                with contextlib.suppress(Exception):
                    stop()
                if archive.is_file():  # another run saved it meanwhile: skip the dump
                    proc.kill()
                    return
                handed = _hand_over(proc.pid, dump, archive)
                if handed:
                    print(_SAVING.format(archive.parent), file=sys.stderr, flush=True)
                with contextlib.suppress(OSError):
                    proc.stdin.close()
                if handed:
                    return
                proc.wait(_DUMP_WAIT_S)
            if proc.returncode == 0 and _whole(dump):
                _install(dump, archive)
        except Exception:  # only speed is at stake: never fail an exit over it
            pass
        finally:
            if not handed:
                with contextlib.suppress(OSError):
                    dump.unlink()

    atexit.register(finish)


def _hand_over(pid: int, dump: Path, archive: Path) -> bool:
    """Start :func:`finish_detached` for the JVM ``pid`` in a session of its own, its
    output nowhere (a caller that reads this run's output must not wait for it);
    False if it could not start."""
    import subprocess

    started = _start_time(pid)
    if started is None:
        return False
    argv = [sys.executable, "-m", __name__, str(pid), started, str(dump), str(archive)]
    try:
        helper = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    except OSError:
        return False
    with contextlib.suppress(OSError):
        _saving(archive).write_text(str(helper.pid))
    return True


def _saving(archive: Path) -> Path:
    """The file that names the detached process saving ``archive`` (its pid)."""
    return archive.with_name(archive.name + ".saving")


def _being_saved(archive: Path) -> bool:
    """Whether a detached process is saving ``archive`` now: a run that starts meanwhile
    runs without it rather than dump the same classes again."""
    try:
        pid = int(_saving(archive).read_text())
    except (OSError, ValueError):
        return False
    return _start_time(pid) is not None


def finish_detached(pid: int, started: str, dump: Path, archive: Path) -> None:
    """Wait (at most :data:`_DUMP_WAIT_S`) for the JVM ``pid`` that began at ``started``
    to exit, then move ``dump`` to ``archive`` if it is whole; the dump never stays."""
    deadline = time.monotonic() + _DUMP_WAIT_S
    while _start_time(pid) == started and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        if _start_time(pid) != started and _whole(dump):
            _install(dump, archive)
    finally:
        with contextlib.suppress(OSError):
            dump.unlink()
        with contextlib.suppress(OSError, ValueError):
            if int(_saving(archive).read_text()) == os.getpid():
                _saving(archive).unlink()


def _start_time(pid: int) -> str | None:
    """When the running process ``pid`` began (``/proc/<pid>/stat``'s starttime, which
    tells it from a later process given the same pid); None once it has exited (gone,
    or a zombie nobody reaps: an orphan's parent may be an init that does not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def _whole(dump: Path) -> bool:
    """Whether the JVM finished writing ``dump``: its header, written last, is there."""
    try:
        with dump.open("rb") as f:
            return f.read(4) not in (b"", b"\0\0\0\0") and dump.stat().st_size > 4096
    except OSError:
        return False


def _install(dump: Path, archive: Path) -> None:
    """Put a whole dump in place as ``archive``, say what it was dumped from, prune."""
    _record_sources(archive)
    dump.replace(archive)
    prune(archive.parent.parent)


# --- keeping the cache within its bound ---------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One archive in the cache, as the pruning sees it."""

    name: str
    mtime: float  # its last use (each run that maps it touches it)
    size: int
    usable: bool  # some installed Java and pyspark can still map it


def to_remove(entries: Iterable[Entry], now: float) -> list[str]:
    """The names of the archives to delete: every unusable one, then the least recently
    used past MAX_ARCHIVES or MAX_BYTES; never one used within IN_USE_S of ``now``."""
    kept: list[Entry] = []
    remove: list[str] = []
    for entry in sorted(entries, key=lambda e: e.mtime, reverse=True):
        busy = now - entry.mtime < IN_USE_S
        over = len(kept) >= MAX_ARCHIVES or sum(e.size for e in kept) + entry.size > MAX_BYTES
        if busy or (entry.usable and not over):
            kept.append(entry)
        else:
            remove.append(entry.name)
    return remove


def _sources(archive: Path) -> Path:
    return archive.with_name(archive.name + ".src")


def _record_sources(archive: Path) -> None:
    """Write what ``archive`` is dumped from beside it, so a later run can tell whether
    anything installed can still map it."""
    import pyspark

    java = _java()
    if java is None:
        return
    jars = Path(pyspark.__file__).parent / "jars"
    with contextlib.suppress(OSError):
        _sources(archive).write_text(f"{java}\n{pyspark.__version__}\n{jars}\n")


def _usable(archive: Path) -> bool:
    """Whether the Java and the jars ``archive`` was dumped from still exist unchanged
    (its name's key still comes out of them).  Without its ``.src`` file (written by an
    older migcheck) nothing says, and the count and size bounds alone decide."""
    try:
        java, version, jars = _sources(archive).read_text().splitlines()[:3]
        return os.path.isfile(java) and archive.stem == f"classes-{_digest(java, version, jars)}"
    except (OSError, ValueError):
        return not _sources(archive).exists()


def _entries(root: Path) -> dict[str, tuple[Path, Entry]]:
    found: dict[str, tuple[Path, Entry]] = {}
    for archive in root.glob("spark-*/classes-*.jsa"):
        with contextlib.suppress(OSError):
            st = archive.stat()
            name = str(archive.relative_to(root))
            found[name] = (archive, Entry(name, st.st_mtime, st.st_size, _usable(archive)))
    return found


def prune(root: Path) -> list[Path]:
    """Delete the archives under ``root`` that :func:`to_remove` names, with their
    ``.src`` files; returns what was deleted.  Errors only leave a file behind."""
    found = _entries(root)
    removed = []
    for name in to_remove((entry for _, entry in found.values()), time.time()):
        archive = found[name][0]
        with contextlib.suppress(OSError):
            archive.unlink()
            removed.append(archive)
            _sources(archive).unlink(missing_ok=True)
    return removed


if __name__ == "__main__":  # the detached process of :func:`_hand_over`
    with contextlib.suppress(Exception):
        finish_detached(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
