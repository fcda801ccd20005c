"""migcheck for a Spark Connect server's workers, as the session's own artifacts.

A server migcheck did not start (a team's, on its cluster) has workers with PySpark and
its requirements but not migcheck, numba or kafka-python.  Spark Connect gives each
session artifacts of its own (``SparkSession.addArtifacts``): an archive added to a
session is unpacked in the session's directory, which is its Python workers' working
directory.  But nothing puts that directory on their ``sys.path``, and a session cannot
set a worker's ``PYTHONPATH``.  It can set the interpreter its workers run
(``spark.sql.execution.pyspark.python``, a runtime setting since Spark 3.5, and Spark's
own documented way to ship a virtualenv to a session).

So a session gets two archives: migcheck's (:mod:`shipping`, the one a cluster's
executors get) and a launcher of a few bytes, which puts the first on ``PYTHONPATH`` and
runs the Python the server's workers already run (the probe's ``executable``).  Each
archive's directory is named by its content, so a new build never meets an old one's
files.  A pooled session (:mod:`remote_sessions`) records what it was given, and the
next check on it uploads nothing (measured: docs/benchmarks.md, issue 73).

What Spark itself adds: each ``cache()`` clones the session on the server, and a clone
copies the session's artifacts and unpacks them again (about 3 s with migcheck's archive
on a local server, whatever the settings).  A server migcheck starts ships the archive
once for every session instead (``spark.archives``), and its sessions carry none.
"""

from __future__ import annotations

import hashlib
import shlex
import tarfile
from pathlib import Path
from typing import Any

from migcheck.analysis import remote_sessions, shipping
from migcheck.analysis.remote_sessions import Slot
from migcheck.errors import MigcheckError
from migcheck.files import atomic_binary
from migcheck.untrusted import visible

#: The runtime setting naming the Python a session's workers run.
PYTHON_CONF = "spark.sql.execution.pyspark.python"
#: The launcher's name, in its archive and in the session's directory.
LAUNCHER = "migcheck-python"
#: What to check where the shipped archive does not reach the workers (the probe's fix).
FIX = (
    f"check that the server lets a session set {PYTHON_CONF} and keeps its archives, or "
    f"start the server with migcheck server start"
)


def ship(spark: Any, slot: Slot, executable: str) -> None:
    """Give the session migcheck's archive and a launcher of ``executable`` (the server
    workers' Python), unless ``slot`` says it has them, and make its workers run it."""
    if not executable.startswith("/"):
        raise MigcheckError(
            f"the Spark Connect server's workers run a Python whose path they do not report "
            f"({visible(executable)}), so migcheck cannot ship itself to them: start the "
            f"server with migcheck server start, or install migcheck on its workers"
        )
    deps = shipping.ensure_archive()
    launcher = launcher_archive(deps.parent, _unpacked(deps), executable)
    for path in (deps, launcher):
        _add(spark, slot, path)
    spark.conf.set(PYTHON_CONF, f"{_unpacked(launcher)}/{LAUNCHER}")


def _unpacked(archive: Path) -> str:
    """The directory the session unpacks ``archive`` into: its name without suffix."""
    return archive.name.removesuffix(".tar.gz")


def _add(spark: Any, slot: Slot, archive: Path) -> None:
    """``archive`` added to the session, unpacked under its own name, unless it was."""
    name = archive.name
    if name in slot.artifacts:
        return
    try:
        spark.addArtifacts(f"{archive}#{_unpacked(archive)}", archive=True)
    except Exception as e:  # pyspark's message may quote the address, token and all
        raise MigcheckError(
            f"the Spark Connect server refused migcheck's archive {archive.name} "
            f"({type(e).__name__}; read its log): install migcheck on its workers, or start "
            f"the server with migcheck server start"
        ) from None
    slot.artifacts.append(name)
    remote_sessions.save(slot)


def launcher_script(deps_dir: str, executable: str) -> str:
    """A shell script that runs ``executable`` with the session's ``deps_dir`` first on
    ``PYTHONPATH``; it sits one directory below the session's (its archive's)."""
    return (
        "#!/bin/sh\n"
        "# written by migcheck: the Python of this Spark Connect session's workers\n"
        'session=$(cd "$(dirname "$0")/.." && pwd)\n'
        f'PYTHONPATH="$session/{deps_dir}${{PYTHONPATH:+:$PYTHONPATH}}" '
        f'exec {shlex.quote(executable)} "$@"\n'
    )


def launcher_archive(folder: Path, deps_dir: str, executable: str) -> Path:
    """The launcher's archive in ``folder``, written once per archive and Python."""
    script = launcher_script(deps_dir, executable).encode()
    target = folder / f"{LAUNCHER}-{hashlib.sha256(script).hexdigest()[:16]}.tar.gz"
    if not target.is_file():
        with atomic_binary(target) as f, tarfile.open(fileobj=f, mode="w:gz") as tar:
            shipping.add_bytes(tar, LAUNCHER, script, mode=0o755)
    return target
