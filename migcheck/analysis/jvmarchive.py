"""A class-data archive (Java's AppCDS) for the embedded Spark JVM: a faster start.

An embedded run starts a JVM that loads some 10,000 Spark classes before the
first job: seconds of every command.  Java 17 can dump the classes a run loaded into
an archive (``-XX:ArchiveClassesAtExit``) and map it in later runs
(``-XX:SharedArchiveFile``), which takes most of that load off every later start
(docs/benchmarks.md).

``migcheck warm`` dumps the archive, in the foreground, when its JVM exits; every later
run maps it (:func:`jvm_options`), and a run without one starts without it, dumps
nothing and leaves nothing behind.  The archive is keyed on the Java binary and the
pyspark build, since a JVM maps only an archive that its own build dumped from the same
class path.  It is dumped under a private name and moved into place only once whole, so
concurrent runs never map a half-written file.  Whatever goes wrong here only costs
speed: a JVM that cannot map an archive starts without it.

Why a step of its own: a JVM writes the archive as it exits, 5 to 17 s on two cores for a
105 to 155 MB archive (docs/benchmarks.md).  A command that waited for it would take that
much longer; one that left a detached process to wait (as migcheck once did) outlived its
command and slowed the next one, which competed with the save.  (:func:`finish_dump`)
moves the dump into place if it is whole.  Whole means that its header is written: the
JVM writes the regions first and the header, at offset 0, last (watched on Java 17: the
file's first bytes stay zero while 147 MB of regions are written, then the magic number
appears), so a JVM killed mid-dump leaves zeros there.

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

import contextlib
import hashlib
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: How long :func:`finish_dump` waits for the JVM to write the archive and exit.
DUMP_WAIT_S = 300.0


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


def jvm_options(archive: Path | None) -> list[str]:
    """The JVM options that map ``archive`` if it is there; none when it is missing: only
    ``migcheck warm`` dumps one.  Changes nothing: a run that maps it calls
    :func:`mark_used`."""
    if archive is None or not archive.is_file():
        return []
    return [f"-XX:SharedArchiveFile={archive}"]


def mark_used(archive: Path) -> None:
    """Touch ``archive``: in use, so the pruning keeps it (see :func:`to_remove`).  Best
    effort: a read-only cache only loses the pruning's hint."""
    with contextlib.suppress(OSError):
        os.utime(archive)


def dump_options(archive: Path) -> tuple[list[str], Path] | None:
    """The JVM options that dump this JVM's classes for ``archive`` at its exit, and the
    private file it writes (:func:`finish_dump` moves it into place); None where the
    cache cannot be written."""
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    _remove_orphans(archive.parent)
    dump = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={dump}"], dump


def _remove_orphans(folder: Path) -> None:
    """Delete the dumps of runs that died before their exit (killed): each is
    tens of megabytes, named after its process, and never becomes an archive.  A dump
    younger than :data:`DUMP_WAIT_S` is left: its run may still be waiting for it."""
    for tmp in folder.glob("*.jsa.*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        with contextlib.suppress(OSError):
            recent = time.time() - tmp.stat().st_mtime < DUMP_WAIT_S
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


def finish_dump(proc: Any, dump: Path, archive: Path, wait_s: float = DUMP_WAIT_S) -> bool:
    """End the JVM ``proc`` (Spark already stopped): pyspark's JVM exits when its
    standard input closes, and writes ``dump`` as it exits.  Then move the dump into
    place as ``archive`` if it is whole; whether it was.  The dump never stays."""
    try:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        proc.wait(wait_s)
        if proc.returncode == 0 and _whole(dump):
            _install(dump, archive)
            return True
        return False
    finally:
        with contextlib.suppress(OSError):
            dump.unlink()


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
