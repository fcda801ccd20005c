"""Claims: partitions that the driver and the local read tasks share out as they go.

A read on the embedded session (a sample, or a full scan of whole partitions) spends
its first seconds starting Spark's JVM and Python workers, and leaves most of a core
idle meanwhile.  The driver reads
partitions then (:class:`~migcheck.analysis.scan.share.DriverShare`), and the read tasks
read the rest once they start.  Neither side can know beforehand how far the other
gets, so every reader walks the same list of partitions and reads a partition only
once it has claimed it.  A claim is a file holding its owner's name, linked into a
directory of this machine: the filesystem makes the link atomic across processes, with
no server and no lock, and a claim never exists without its owner (the name is written
to a temporary file first, so an attempt that dies before the link claims nothing).
Local tasks only: a cluster's executors would not see the directory.

A retried or recomputed task has its first attempt's name, and reclaims that attempt's
partitions: Spark discarded their output, so they must be read again, by it.

Topic names are file names already: Kafka allows letters, digits, ``.``, ``_`` and
``-`` only, and neither ``.`` nor ``..``.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migcheck.kafka.fetch import WorkUnit, records_in


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
        return _link(name, owner) or name.read_text(encoding="utf-8") == owner

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


def _link(name: Path, owner: str) -> bool:
    """Whether a file holding ``owner`` was linked into place as ``name`` (False: a
    claim was there).  Written, then linked: a reader never sees a claim without its
    owner, which a create-then-write would show it if the writer died in between."""
    fd, pending = tempfile.mkstemp(dir=name.parent, prefix=".pending-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(owner)
        os.link(pending, name)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(pending)


def _partition(unit: WorkUnit) -> tuple[str, int]:
    return unit.topic, unit.partition


def largest_first(units: Iterable[WorkUnit]) -> list[WorkUnit]:
    """``units`` grouped by partition, the partitions in descending order of records (so
    that the last partitions claimed are the smallest, and the readers end together),
    each partition's units in offset order."""
    groups: dict[tuple[str, int], list[WorkUnit]] = {}
    for unit in sorted(units):
        groups.setdefault(_partition(unit), []).append(unit)
    ordered = sorted(groups.values(), key=lambda g: -records_in(g))
    return [unit for group in ordered for unit in group]
