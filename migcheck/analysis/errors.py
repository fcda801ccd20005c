"""Spark's failures as one line: the one translation ``analyze``, ``app`` and ``copy`` use.

A failure inside a Spark task reaches the driver only as the text of a Py4J
error wrapping the worker's traceback.  A user must see the cause (a migcheck
error raised in the task, a missing data source) or Spark's first line and
where its log is, never a Py4J object name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from migcheck.errors import MigcheckError, all_error_classes


def spark_error_message(e: Exception) -> str:
    """The useful line of a Spark error: a migcheck error's message raised inside a task,
    found by its class's qualified name in the Python worker's traceback, or Spark's
    own first line."""
    text = str(e)
    names = "|".join(
        re.escape(f"{cls.__module__}.{cls.__qualname__}") for cls in all_error_classes()
    )
    matches = re.findall(rf"^\s*(?:{names}): (.*)$", text, re.M)
    if matches:
        return matches[-1].strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    from migcheck.analysis.kafkasource import missing_source_message
    from migcheck.analysis.spark import spark_log_path

    if re.search(r"DATA_SOURCE_NOT_FOUND|Failed to find (the )?data source: kafka", text):
        return missing_source_message()

    first = lines[0] if lines else type(e).__name__
    return f"Spark failed: {first} (Spark's log: {spark_log_path()})"


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
