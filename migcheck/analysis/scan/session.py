"""The Spark session the planned reads run on, and their jobs run together on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, TypeVar

from migcheck.analysis.scan.plan import JvmProfile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from migcheck.analysis.remote import Remote

T = TypeVar("T")


@contextmanager
def read_session(
    profile: JvmProfile,
    master: str | None,
    conf: Mapping[str, str],
    bootstrap: str | None,
    remote: Remote | None = None,
) -> Iterator[SparkSession]:
    """Spark's session, started (in this thread: it owns Ctrl-C) and tuned for
    ``profile``: a short run's small-data settings hold while the reads run.  With
    ``remote``, a session on that Spark Connect server."""
    from migcheck.analysis.spark import get_session, small_data

    spark = get_session(master, dict(conf), short_run=profile.short, bootstrap=bootstrap,
                        warm=profile.workers, remote=remote)  # fmt: skip
    with small_data(spark, dict(conf), profile.tiny) if profile.short else nullcontext():
        yield spark


def concurrently(*jobs: Callable[[], T]) -> list[T]:
    """Run independent Spark jobs from threads at once; their results in order.

    Each of the report's small jobs leaves the cores idle while the driver plans it
    and while its last single task runs; submitted together, Spark fills those gaps
    with the others' tasks.  An error in any is raised here; so is Ctrl-C, without
    waiting for the others (the CLI then stops Spark, which ends them).  A lone job runs
    in this thread."""
    if len(jobs) == 1:
        return [jobs[0]()]
    pool = ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="migcheck-job")
    try:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
