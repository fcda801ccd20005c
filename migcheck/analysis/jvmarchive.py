"""A class-data archive (Java's AppCDS) for the embedded Spark JVM: a faster start.

An embedded run starts a JVM that loads some 10,000 Spark classes before the
first job: seconds of every command.  Java 17 can dump the classes a run loaded into
an archive (``-XX:ArchiveClassesAtExit``) and map it in later runs
(``-XX:SharedArchiveFile``), which takes most of that load off every later start
(docs/benchmarks.md).

The first embedded run dumps the archive when its JVM exits; later runs map
it.  The archive is keyed on the Java binary and the pyspark build, since a JVM
maps only an archive that its own build dumped from the same class path.  It is
dumped under a private name and moved into place only after the JVM exited
cleanly, so concurrent runs never map a half-written file.  Whatever goes wrong
here only costs speed: a JVM that cannot map an archive starts without it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: How long the first run's exit waits for the JVM to write the archive.
_DUMP_WAIT_S = 60.0

_SAVING = "migcheck: saving Spark's classes to {} for faster starts (first run only)"


def _java() -> str | None:
    """The java binary Spark's launcher runs: ``$JAVA_HOME/bin/java``, else PATH's."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.isfile(found) else None


def archive_path(cache_root: Path) -> Path | None:
    """Where this Java and this pyspark keep their archive; None without a java binary."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    facts = [java, str(os.stat(java).st_mtime_ns), pyspark.__version__, str(jars)]
    with contextlib.suppress(OSError):
        facts.append(str(jars.stat().st_mtime_ns))
    digest = hashlib.sha256("\0".join(facts).encode()).hexdigest()[:16]
    return cache_root / f"spark-{pyspark.__version__}" / f"classes-{digest}.jsa"


def jvm_options(archive: Path | None) -> tuple[list[str], Path | None]:
    """The JVM options that map ``archive``, or dump it when it is missing.

    Returns the options and, when this run dumps, the private file the JVM writes
    (hand it to :func:`install_at_exit` once the JVM is started).
    """
    if archive is None:
        return [], None
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"], None
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return [], None  # a read-only cache: run without
    _remove_orphans(archive.parent)
    dump = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={dump}"], dump


def _remove_orphans(folder: Path) -> None:
    """Delete the dumps of runs that died before their exit (killed): each is
    tens of megabytes, named after its process, and never becomes an archive."""
    for tmp in folder.glob("*.jsa.*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
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
    """When Python exits, let the JVM exit and write ``dump``, then move it to ``archive``.

    ``stop`` ends Spark first (its Python-side servers would report the JVM's exit as
    errors).  pyspark's JVM exits when its standard input closes; the archive is
    written at that exit, so the first run waits for it (a few seconds, once).
    """

    def finish() -> None:
        try:
            if proc.poll() is None:
                with contextlib.suppress(Exception):
                    stop()
                if archive.is_file():  # another run saved it meanwhile: skip the dump
                    proc.kill()
                    return
                print(_SAVING.format(archive.parent), file=sys.stderr, flush=True)
                with contextlib.suppress(OSError):
                    proc.stdin.close()
                proc.wait(_DUMP_WAIT_S)
            if proc.returncode == 0 and dump.is_file() and dump.stat().st_size > 0:
                dump.replace(archive)
        except Exception:  # only speed is at stake: never fail an exit over it
            pass
        finally:
            with contextlib.suppress(OSError):
                dump.unlink()

    atexit.register(finish)
