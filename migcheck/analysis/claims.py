"""Claims: partitions that the driver and the local read tasks share out as they go.

A read on the embedded session (a sample, or a full scan of whole partitions) spends
its first seconds starting Spark's JVM and Python workers, and leaves most of a core
idle meanwhile.  The driver reads
partitions then (:class:`~migcheck.analysis.sources.DriverShare`), and the read tasks
read the rest once they start.  Neither side can know beforehand how far the other
gets, so every reader walks the same list of partitions and reads a partition only
once it has claimed it.  A claim is a file created with ``O_EXCL`` in a directory of
this machine: the filesystem makes the claim atomic across processes, with no server
and no lock.  Local tasks only: a cluster's executors would not see the directory.

A claim file holds its owner's name.  A retried or recomputed task has its first
attempt's name, and reclaims that attempt's partitions: Spark discarded their output,
so they must be read again, by it.

Topic names are file names already: Kafka allows letters, digits, ``.``, ``_`` and
``-`` only, and neither ``.`` nor ``..``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migcheck.kafka.reader import WorkUnit


@dataclass(frozen=True)
class Claims:
    """A directory of claims, one file per claimed partition (picklable: a path)."""

    path: str

    @classmethod
    def create(cls, path: Path) -> Claims:
        """A new, empty directory of claims at ``path``."""
        path.mkdir(mode=0o700)
        return cls(str(path))

    def claim(self, topic: str, partition: int, owner: str) -> bool:
        """Whether ``owner`` reads ``topic``-``partition``: it claimed it now, or an
        earlier attempt of the same owner had (see the module's docstring)."""
        name = Path(self.path, f"{topic}-{partition}")
        try:
            fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return name.read_text(encoding="utf-8") == owner
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(owner)
        return True

    def claimed(
        self, units: Iterable[WorkUnit], owner: str, lost: Callable[[], None] | None = None
    ) -> Iterator[WorkUnit]:
        """The units of each partition of ``units`` that ``owner`` claims, in their order;
        ``lost`` is called for each partition another reader had claimed.

        Lazy: a partition is claimed only when the reader asks for its first unit, that
        is, once it has read the partitions before it (``read_units`` takes its units
        one at a time)."""
        for (topic, partition), group in itertools.groupby(units, _partition):
            if self.claim(topic, partition, owner):
                yield from group
            elif lost is not None:
                lost()


def _partition(unit: WorkUnit) -> tuple[str, int]:
    return unit.topic, unit.partition


def largest_first(units: Iterable[WorkUnit]) -> list[WorkUnit]:
    """``units`` grouped by partition, the partitions in descending order of records (so
    that the last partitions claimed are the smallest, and the readers end together),
    each partition's units in offset order."""
    groups: dict[tuple[str, int], list[WorkUnit]] = {}
    for unit in sorted(units):
        groups.setdefault(_partition(unit), []).append(unit)
    ordered = sorted(groups.values(), key=lambda g: -sum(u.end - u.start for u in g))
    return [unit for group in ordered for unit in group]
