"""migcheck for a cluster's executors: one archive of its package and what the cluster lacks.

On a local master the workers run the driver's own interpreter and see its
packages.  A cluster's workers run their own Python, which has PySpark and its
requirements (pyarrow, pandas, numpy: PySpark's Arrow path needs them) but not
migcheck, numba or kafka-python.  So migcheck packs its own package and every
installed distribution of its runtime requirements that PySpark does not
already bring into one tar.gz, once per set of versions, and hands it to Spark
as ``spark.archives``: each executor unpacks it into its working directory and
finds it through ``spark.executorEnv.PYTHONPATH``.  Nothing has to be installed
on the workers beyond what PySpark needs.

The archive holds compiled code (numba, llvmlite, the codecs) for this
driver's Python and platform; :mod:`~migcheck.analysis.probe` checks that the
executors match before the first job.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import sys
import sysconfig
import tarfile
import time
from collections.abc import Iterable, Iterator, Mapping, Set
from importlib import metadata
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from migcheck.analysis.probe import KEY_FILE
from migcheck.errors import MigcheckError
from migcheck.files import atomic_binary, cache_root

#: The directory each executor unpacks the archive into (the URI fragment).
FRAGMENT = "migcheck-deps"
ARCHIVES = "spark.archives"
EXECUTOR_PYTHONPATH = "spark.executorEnv.PYTHONPATH"

#: Masters whose workers are this process's threads: they run the driver's interpreter.
_LOCAL = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?")


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: nothing to ship."""
    return _LOCAL.fullmatch(master.strip()) is not None


def embedded_local(master: str | None, conf: Mapping[str, str]) -> bool:
    """Whether migcheck will start the embedded session on a local master: not inside
    spark-submit (``PYSPARK_GATEWAY_PORT``), and no cluster's master given.  No pyspark
    import: a caller decides this before Spark loads."""
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return False
    return is_local(master or conf.get("spark.master") or "local[*]")


# --- what ships -----------------------------------------------------------------------


def _applies(req: Requirement, extras: Iterable[str]) -> bool:
    """Whether ``req`` is needed here, by an install of its parent with ``extras``."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def requirements_of(name: str, extras: Iterable[str] = ()) -> list[Requirement]:
    """The installed distribution ``name``'s requirements that apply to this
    interpreter, with ``extras`` (its optional groups the parent asked for)."""
    extras = tuple(extras)
    reqs = (Requirement(line) for line in metadata.requires(name) or [])
    return [r for r in reqs if _applies(r, extras)]


def closure(roots: Iterable[Requirement], stop: Set[str] = frozenset()) -> dict[str, str]:
    """Every installed distribution ``roots`` need, recursively, by canonical name: the
    value is its name as installed.  Names in ``stop`` are left out, and so is what
    only they need.  A requirement not installed here is skipped: it is not needed
    on this interpreter (a marker for another Python) or nothing can ship it."""
    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    pending = list(roots)
    while pending:
        req = pending.pop()
        name = canonicalize_name(req.name)
        if name in stop or (name, frozenset(req.extras)) in seen:
            continue
        seen.add((name, frozenset(req.extras)))
        try:
            installed = metadata.distribution(req.name).metadata["Name"]
        except metadata.PackageNotFoundError:
            continue
        found[name] = installed
        pending.extend(requirements_of(installed, req.extras))
    return found


#: The extras of pyspark a cluster's workers have (docs/cluster.md): ``[sql]``, not the
#: ``[connect]`` client's (grpcio, zstandard...), which migcheck asks for on the driver.
CLUSTER_EXTRAS = frozenset({"sql"})


def shipped_distributions() -> dict[str, str]:
    """migcheck's runtime requirements, recursively, less what a PySpark cluster has:
    pyspark and its own requirements with :data:`CLUSTER_EXTRAS` (``pyspark[sql]``:
    py4j, pandas, pyarrow, numpy and theirs).  What the driver's other extras bring and
    migcheck needs on the executors (kafka-python's zstandard) ships."""
    try:
        roots = requirements_of("migcheck")
    except metadata.PackageNotFoundError:
        raise MigcheckError(
            "migcheck's package metadata is not installed, so its dependencies cannot be "
            "shipped to the executors: install migcheck (pip install -e . in a checkout)"
        ) from None
    pyspark = [r for r in roots if canonicalize_name(r.name) == "pyspark"]
    for requirement in pyspark:
        requirement.extras = set(requirement.extras) & CLUSTER_EXTRAS
    return closure(roots, stop=set(closure(pyspark)))


def _skipped(path: PurePosixPath) -> bool:
    """Compiled bytecode: the executors' Python writes its own."""
    return "__pycache__" in path.parts or path.suffix == ".pyc"


def distribution_files(name: str) -> Iterator[tuple[Path, str]]:
    """An installed distribution's files (from its RECORD) as (path here, name in the
    archive); scripts installed outside site-packages are left out."""
    dist = metadata.distribution(name)
    listed = dist.files
    if listed is None:
        raise MigcheckError(
            f"cannot ship {name} to the executors: its installed files are not listed "
            f"(no RECORD); reinstall it with pip"
        )
    for entry in listed:
        relative = PurePosixPath(entry.as_posix())
        # typeshed's SimplePath lacks __fspath__; an installed distribution's is a Path.
        path = Path(dist.locate_file(entry))  # type: ignore[arg-type]
        if ".." not in relative.parts and not _skipped(relative) and path.is_file():
            yield path, str(relative)


def package_files(package_dir: Path) -> Iterator[tuple[Path, str]]:
    """migcheck's own files where it is imported from (a checkout or an install)."""
    for path in sorted(package_dir.rglob("*")):
        relative = PurePosixPath(path.relative_to(package_dir.parent).as_posix())
        if path.is_file() and not _skipped(relative):
            yield path, str(relative)


def archive_members(package_dir: Path, distributions: Iterable[str]) -> list[tuple[Path, str]]:
    """Every file the archive holds, as (path here, name in the archive)."""
    members = list(package_files(package_dir))
    for name in sorted(distributions):
        members += distribution_files(name)
    return members


# --- the cached archive ---------------------------------------------------------------


def source_digest(package_dir: Path) -> str:
    """A hash of migcheck's own files: any edit makes a new archive."""
    digest = hashlib.sha256()
    for path, name in package_files(package_dir):
        digest.update(f"{name}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_key(distributions: Mapping[str, str], sources: str) -> str:
    """What the archive's contents depend on: the Python and platform its compiled
    code is for, each shipped distribution's version, and migcheck's sources."""
    facts = [f"python {sys.version_info.major}.{sys.version_info.minor}"]
    facts.append(f"platform {sysconfig.get_platform()}")
    facts += [f"{name} {metadata.version(name)}" for name in sorted(distributions.values())]
    facts.append(f"migcheck {sources}")
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:16]


def build_archive(
    target: Path, package_dir: Path, distributions: Iterable[str], key: str = ""
) -> None:
    """Write the archive to ``target`` whole or not at all, so a concurrent or killed run
    never ships half of one; ``key`` goes in its ``KEY_FILE``
    (the probe reads it)."""
    members = archive_members(package_dir, distributions)
    with (
        atomic_binary(target) as f,
        tarfile.open(fileobj=f, mode="w:gz", compresslevel=6) as tar,
    ):
        for path, name in members:
            tar.add(path, arcname=name, recursive=False)
        add_bytes(tar, KEY_FILE, key.encode())


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    """A member of ``data`` named ``name``, readable by all (``mode``)."""
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, int(time.time())
    tar.addfile(info, io.BytesIO(data))


#: migcheck's package directory, where it is imported from (a checkout or an install).
PACKAGE_DIR = Path(__file__).parent.parent


@functools.cache
def archive_key() -> str:
    """The key of the archive of this migcheck and its dependencies (:func:`cache_key`):
    what the executors' :data:`KEY_FILE` must hold.  Once per process: the sources do not
    change under a running check."""
    return cache_key(shipped_distributions(), source_digest(PACKAGE_DIR))


def ensure_archive() -> Path:
    """The archive for this migcheck and these dependencies, built on the first run.

    A new archive's first run removes the stale ones (:func:`_remove_stale`).
    """
    folder = cache_root() / "executors"
    key = archive_key()
    target = folder / f"{FRAGMENT}-{key}.tar.gz"
    if target.is_file():
        with contextlib.suppress(OSError):
            os.utime(target)  # in use: not stale (see _remove_stale)
        return target
    print(
        f"migcheck: packing migcheck and its dependencies for the executors into {target} "
        f"(first run only)",
        file=sys.stderr,
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        build_archive(target, PACKAGE_DIR, shipped_distributions().values(), key)
    except OSError as e:
        raise MigcheckError(
            f"cannot write the executors' archive {target}: {e.strerror or e}; "
            f"set MIGCHECK_CACHE_DIR to a writable directory"
        ) from None
    _remove_stale(folder)
    return target


#: An archive unused this long is removed: no run still serves it to its executors.
STALE_AFTER_S = 24 * 3600


def _remove_stale(folder: Path) -> None:
    """Delete the archives of other migcheck or dependency versions (each is tens of
    megabytes) once a day has passed since a run last used them: a run that started
    earlier may still be serving one to executors that join late."""
    for old in folder.glob(f"{FRAGMENT}-*.tar.gz"):
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > STALE_AFTER_S:
                old.unlink()


# --- the settings ---------------------------------------------------------------------


def executor_settings(
    current: Mapping[str, str], archive: Path, sessions: bool = False
) -> dict[str, str]:
    """``spark.archives`` with the archive added and ``spark.executorEnv.PYTHONPATH``
    with its directory first, a user's own values kept after ours.  ``sessions``: for a
    Spark Connect server, whose Python workers run in a directory of each session's
    inside the executor's (measured on the suite's cluster), one level below the
    unpacked archive."""
    archives = [a.strip() for a in current.get(ARCHIVES, "").split(",") if a.strip()]
    paths = [p for p in current.get(EXECUTOR_PYTHONPATH, "").split(os.pathsep) if p]
    ours = [f"./{FRAGMENT}", *([f"../{FRAGMENT}"] if sessions else [])]
    return {
        ARCHIVES: ",".join([*archives, f"{archive.as_uri()}#{FRAGMENT}"]),
        EXECUTOR_PYTHONPATH: os.pathsep.join([*ours, *paths]),
    }
