"""One look at a cluster's executor before the first job, and what it means.

A cluster whose executors cannot run migcheck otherwise fails in the middle of
a job, as a JVM stack trace around a Python one.  :func:`probe` runs as one
tiny task first and reports what an executor's Python is and can reach;
:func:`verdict`, on the driver, turns that into the one line that names the
cause and the fix.

:func:`probe` runs where migcheck may not be importable (that is one of the
things it checks): this module imports nothing of migcheck and only the
standard library, and is pickled by value (``cloudpickle.register_pickle_by_value``).
"""

from __future__ import annotations

import contextlib
import importlib
import socket
import sys
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

#: What an executor must import: PySpark's own requirements first, then what the
#: archive ships, then migcheck itself (which imports the others).
PYSPARK_NEEDS = ("pyarrow", "pandas", "numpy")
SHIPPED = ("numba", "kafka", "confluent_kafka", "mmh3", "migcheck")

#: The file beside the ``migcheck`` package in a shipped archive that names the archive
#: (``shipping.KEY_FILE`` writes it): the build the workers import.
KEY_FILE = "migcheck-archive"

#: How long one connection to a broker may take.
CONNECT_TIMEOUT_S = 3.0


def probe(brokers: Sequence[str], timeout_s: float = CONNECT_TIMEOUT_S) -> dict[str, Any]:
    """What this Python is and can do: its version, platform and executable, each
    module's import error (None: it imports) and each broker's connection error."""
    return {
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "platform": sysconfig.get_platform(),
        "executable": sys.executable,
        "imports": {name: _import_error(name) for name in (*PYSPARK_NEEDS, *SHIPPED)},
        "migcheck": _migcheck_build(),
        "brokers": {broker: _connect_error(broker, timeout_s) for broker in brokers},
    }


def _migcheck_build() -> dict[str, str | None]:
    """The migcheck this Python imports: its version, and the archive it came from (None:
    an installed one).  Both None where it does not import."""
    try:
        module = importlib.import_module("migcheck")
    except Exception:
        return {"version": None, "archive": None}
    key = None
    with contextlib.suppress(OSError, TypeError):  # TypeError: a namespace package, no file
        key = (Path(module.__file__).parent.parent / KEY_FILE).read_text().strip()  # type: ignore[arg-type]
    return {"version": getattr(module, "__version__", None), "archive": key}


def _import_error(name: str) -> str | None:
    try:
        importlib.import_module(name)
    except Exception as e:  # a broken compiled module raises OSError, not ImportError
        return f"{type(e).__name__}: {e}"
    return None


def _connect_error(broker: str, timeout_s: float) -> str | None:
    """Why a TCP connection to ``host:port`` (``[v6]:port``) failed; None if it opened."""
    host, _, port = broker.strip().rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return None
    except (OSError, ValueError) as e:
        return str(e) or type(e).__name__


# --- the verdict, on the driver ----------------------------------------------------------


class Build(NamedTuple):
    """The migcheck the executors must run: this driver's version, and the key of the
    archive made of this driver's sources (``shipping.archive_key``)."""

    version: str
    archive: str


#: The fix for a shipped module that does not import, where the archive goes by
#: ``spark.archives`` (a cluster's master).
ARCHIVES_FIX = "check that spark.archives and spark.executorEnv.PYTHONPATH reach them unchanged"


class Driver(NamedTuple):
    """What the executors must match: this driver's Python and platform, the pyspark
    version whose requirements they need, the migcheck build they must import (None: not
    checked), and ``fix``: what to check where a shipped module does not import."""

    python: str
    platform: str
    spark: str
    build: Build | None = None
    fix: str = ARCHIVES_FIX


def python_mismatch(executors: str, driver: str) -> str:
    """The one line for executors that run another Python minor version than the driver."""
    return (
        f"the executors run Python {executors} and this driver {driver}: PySpark needs the "
        f"same minor version; point spark.pyspark.python (or PYSPARK_PYTHON) at a Python "
        f"{driver} on the workers"
    )


def verdict(found: Mapping[str, Any], driver: Driver) -> str | None:
    """What cannot work on the executors :func:`probe` described, as one line with the
    fix; None when nothing was found.  The first cause is named: each hides the next."""
    for check in _CHECKS:
        problem = check(found, driver)
        if problem:
            return problem
    return None


def _python(found: Mapping[str, Any], driver: Driver) -> str | None:
    return (
        None
        if found["python"] == driver.python
        else python_mismatch(found["python"], driver.python)
    )


def _platform(found: Mapping[str, Any], driver: Driver) -> str | None:
    if found["platform"] == driver.platform:
        return None
    return (
        f"the executors run on {found['platform']} and this driver on {driver.platform}: the "
        f"archive migcheck ships to them holds compiled code (numba, llvmlite) for "
        f"{driver.platform}; run migcheck from a {found['platform']} machine"
    )


def _pyspark_needs(found: Mapping[str, Any], driver: Driver) -> str | None:
    missing = [name for name in PYSPARK_NEEDS if found["imports"].get(name)]
    if not missing:
        return None
    first = found["imports"][missing[0]]
    return (
        f"the executors' Python ({found['executable']}) lacks PySpark's own requirements "
        f"({', '.join(missing)}; {first}): install them on the workers with "
        f"pip install 'pyspark[sql]=={driver.spark}'"
    )


def _shipped(found: Mapping[str, Any], driver: Driver) -> str | None:
    broken = [name for name in SHIPPED if found["imports"].get(name)]
    if not broken:
        return None
    return (
        f"the executors cannot import {broken[0]} from the archive migcheck ships them "
        f"({found['imports'][broken[0]]}): {driver.fix}"
    )


def _same_build(found: Mapping[str, Any], driver: Driver) -> str | None:
    """The executors import this driver's migcheck: the same archive where theirs came
    from one, else (an installed migcheck) the same version."""
    if driver.build is None:
        return None
    theirs = found.get("migcheck") or {}
    if theirs.get("archive"):
        same = theirs["archive"] == driver.build.archive
    else:
        same = theirs.get("version") == driver.build.version
    if same:
        return None
    return (
        f"the executors import another migcheck than this driver's (version "
        f"{theirs.get('version')}, archive {theirs.get('archive')}; this driver's "
        f"{driver.build.version}, archive {driver.build.archive}): {driver.fix}"
    )


def needs_archive(found: Mapping[str, Any], driver: Driver) -> bool:
    """Whether shipping this driver's archive is what the executors lack: their Python,
    platform and PySpark's requirements fit, but migcheck or what it ships is missing,
    or is another build."""
    if any(check(found, driver) for check in (_python, _platform, _pyspark_needs)):
        return False
    return bool(_shipped(found, driver) or _same_build(found, driver))


def _brokers(found: Mapping[str, Any], driver: Driver) -> str | None:
    """Only when no bootstrap server answers: one is enough for a client to start."""
    errors = found["brokers"]
    if not errors or not all(errors.values()):
        return None
    reasons = "; ".join(f"{broker}: {error}" for broker, error in errors.items())
    return (
        f"the executors cannot reach the Kafka brokers ({reasons}): the executors, not only "
        f"this driver, must reach the bootstrap servers; use addresses the workers can "
        f"connect to"
    )


_CHECKS: tuple[Callable[[Mapping[str, Any], Driver], str | None], ...] = (
    _python,
    _platform,
    _pyspark_needs,
    _shipped,
    _same_build,
    _brokers,
)
