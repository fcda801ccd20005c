"""Spark's failures as one line: the one translation ``analyze``, ``app`` and ``copy`` use.

A failure inside a Spark task reaches the driver only as the text of a Py4J
error wrapping the executor's error: a JVM stack trace, often around a Python
traceback.  Its first line names a Py4J object (``An error occurred while
calling o382.collectToPython.``) or says only that the Python worker failed.
A user must see the cause instead: a migcheck error raised in the task, a
missing data source, a known misconfiguration of the workers' Python, or else
the root cause (the Python traceback's exception, Java's deepest cause), and
where Spark's log is.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from migcheck.analysis.probe import python_mismatch
from migcheck.errors import MigcheckError, all_error_classes

_TRACEBACK = "Traceback (most recent call last):"

#: Lines that only wrap the cause: Py4J's call (it names a JVM object), PySpark's
#: header for a Python worker's traceback, the JVM trace's heading.
_WRAPPERS = re.compile(
    r"An error occurred while calling \S+|.*thrown from the Python worker.*|JVM stacktrace:"
)


def spark_log_path() -> str:
    """Where the embedded Spark's JVM output goes: its banner, its log, the executors'
    stack traces.  None of it belongs on an operator's terminal unless asked for
    (``migcheck --verbose``); an error names this file instead."""
    return os.environ.get("MIGCHECK_SPARK_LOG") or os.path.join(
        tempfile.gettempdir(), f"migcheck-spark-{os.getuid()}.log"
    )


def spark_error_message(e: Exception) -> str:
    """The useful line of a Spark error: a migcheck error's message raised inside a task
    (found by its class's qualified name in the worker's traceback), a known cause with
    its fix, or Spark's root cause and its log."""
    text = str(e)
    raised = _migcheck_error(text)
    if raised:
        return raised
    cause = root_cause(text) or type(e).__name__
    answers = (recognise(text, cause) for recognise in KNOWN_CAUSES)
    line = next(filter(None, answers), None) or f"Spark failed: {cause}"
    return f"{line} (Spark's log: {spark_log_path()})"


def _migcheck_error(text: str) -> str | None:
    names = "|".join(
        re.escape(f"{cls.__module__}.{cls.__qualname__}") for cls in all_error_classes()
    )
    matches = re.findall(rf"^\s*(?:{names}): (.*)$", text, re.M)
    return matches[-1].strip() if matches else None


def _worker_python_version(text: str, cause: str) -> str | None:
    """The workers' Python is another minor version than the driver's."""
    version = re.search(
        r"Python in worker has different version:?\s*\(?(\d+)\D+?(\d+)\)?"
        r" than that in driver:?\s*(\d+\.\d+)",
        text,
    )
    return python_mismatch(f"{version[1]}.{version[2]}", version[3]) if version else None


def _worker_python_missing(text: str, cause: str) -> str | None:
    """The workers' Python is not there at all."""
    program = re.search(r'Cannot run program "([^"]*)"(?:[^:\n]*): (.*)', text)
    if not program:
        return None
    return (
        f"the executors cannot run Python {program[1]} ({program[2].strip()}): point "
        f"spark.pyspark.python (or PYSPARK_PYTHON) at a Python the workers have"
    )


_OUT_OF_MEMORY = re.compile(r"OutOfMemoryError|UNABLE_TO_ACQUIRE_MEMORY")


def _out_of_memory(text: str, cause: str) -> str | None:
    """Spark's memory exhausted (the JVM's heap, or execution memory that could not be
    freed): the fix is a setting, and which one depends on where the tasks ran."""
    if not _OUT_OF_MEMORY.search(cause):
        return None
    return (
        f"Spark ran out of memory ({cause}): give it more with --conf "
        f"spark.driver.memory=4g on a local master, or spark.executor.memory on a cluster"
    )


#: Spark failures whose fix is known, each a recogniser of (the error's text, its root
#: cause) that returns the line naming the cause and the fix, or None; the first that
#: answers wins.  A new one is an entry here, with a test on the failure's real text.
KNOWN_CAUSES: tuple[Callable[[str, str], str | None], ...] = (
    _worker_python_version,
    _worker_python_missing,
    _out_of_memory,
)


def root_cause(text: str) -> str | None:
    """The line that says what went wrong: the exception of the last Python traceback,
    else Java's deepest ``Caused by``, else the first line that is not a wrapper."""
    return _python_exception(text) or _java_cause(text) or _first_line(text)


def _python_exception(text: str) -> str | None:
    """A traceback ends with its exception, the first line after it that is not indented
    (its frames are); a JVM trace may follow it."""
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return None
    for line in text[start + len(_TRACEBACK) :].splitlines():
        if line.strip() and not line[0].isspace():
            return line.strip()
    return None


def _java_cause(text: str) -> str | None:
    """Java's deepest cause: the last ``Caused by:``, else the failed task's exception."""
    causes = re.findall(r"^Caused by: (.+)$", text, re.M)
    if causes:
        return causes[-1].strip()
    lost = re.findall(r"most recent failure: Lost task .*? executor [^)]*\): (.+)$", text, re.M)
    return lost[-1].strip() if lost else None


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().removeprefix(": ").strip()
        if line and not _WRAPPERS.fullmatch(line):
            return line
    return None


@contextmanager
def spark_errors() -> Iterator[None]:
    """Run Spark work; any error but a migcheck one leaves as one :class:`MigcheckError`.

    Spark wraps a task's error (a broker gone mid-read, a fenced producer) in its
    own exception, so it can only be recognised from the text.
    """
    try:
        yield
    except MigcheckError:
        raise
    except Exception as e:
        raise MigcheckError(spark_error_message(e)) from None
