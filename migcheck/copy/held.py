"""One read for the partitioner's detection and the copy: the source's chunks held on
the reading task's local disk until the copy's task for each takes it.

``copy`` with ``--partitioner auto`` reads every key before it pins a partitioner, and
writes nothing before that; the copy then needs every record again.  So the detection's
read tasks read the records whole (keys, values, headers and timestamps), group the
keys as a full scan does, and on the way keep each of the copy's chunks they read, cut
where the copy's rounds will cut them (:func:`on_grid`), in a file under the task's
Spark local directory (``SPARK_LOCAL_DIRS``, the block manager's directory, which Spark
deletes with the executor).  The copy's task for the chunk takes it from there instead
of reading the source again, and deletes it once the chunk is settled.

The file is a cache of committed records, which never change: a task that does not find
it (on another executor, a file not written for lack of space, a chunk whose bounds the
rounds cut otherwise, such as a follow's last, or a resumed run) reads the chunk from
the source, as every retry may, and copies the same records.  Held chunks are written
atomically (a temporary file, then a rename), so a file is whole or absent.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from migcheck.copy.rounds import CHUNK
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, columns_batch, read_columns
from migcheck.kafka.recordbatch import Columns, WholeChunk

#: Per source partition: where the copy starts and where the detection read ends.
Grid = dict[int, tuple[int, int]]

#: The bytes a held chunk must leave free on the local disk: past it, chunks are not held,
#: and their copy reads them from the source again.  A fixed floor, not a share of the
#: disk: a shared filesystem's size says little of what is free for this task (CI's run K
#: had 15 GB free of 252 GB, and a tenth would have held nothing).
RESERVE_BYTES = 2 * 2**30


def new_run() -> str:
    """A name for one copy's held chunks: a later run never takes an earlier one's."""
    return uuid.uuid4().hex


def grid_of(units: Iterable[WorkUnit]) -> Grid:
    """The grid the copy's rounds cut each partition's range on, from the detection's
    units (one per partition, from where the copy starts)."""
    return {u.partition: (u.start, u.end) for u in units}


def on_grid(units: Iterable[WorkUnit], grid: Grid, size: int = CHUNK) -> list[WorkUnit]:
    """``units`` cut where the copy's chunks of ``size`` offsets begin."""
    out = []
    for u in units:
        first = grid.get(u.partition, (u.start, u.end))[0]
        start = u.start
        while start < u.end:
            end = min(u.end, first + ((start - first) // size + 1) * size)
            out.append(WorkUnit(u.topic, u.partition, start, end))
            start = end
    return out


def is_chunk(unit: WorkUnit, grid: Grid, size: int = CHUNK) -> bool:
    """Whether ``unit`` is one of the copy's chunks, whole: read through ``on_grid``, a unit
    that begins on the grid and ends at the next cut or at the copy's end."""
    if unit.partition not in grid:
        return False
    first, end = grid[unit.partition]
    whole = (unit.start - first) % size == 0 and unit.end == min(unit.start + size, end)
    return unit.start >= first and whole


def read_held(
    client: ClientConfig,
    units: Iterable[WorkUnit],
    every_record: bool = False,
    digest: bool = False,
    *,
    run: str,
    grid: Grid,
) -> Iterator[pa.RecordBatch]:
    """A detection task's read (a :data:`~migcheck.analysis.scan.tasks.Reader`): the
    records of ``units`` as :func:`~migcheck.kafka.fetch.read_units` gives them, each of
    the copy's chunks among them held whole on the way (:func:`hold`)."""
    if digest:
        raise ValueError("a held read gives no digests")
    unit: WorkUnit | None = None
    kept: list[Columns] = []
    for got, columns in read_columns(client, on_grid(units, grid), every_record=every_record,
                                     bodies=True):  # fmt: skip
        if got != unit:
            _hold_chunk(run, grid, unit, kept)
            unit, kept = got, []
        kept.append(columns)
        yield columns_batch(got, columns)
    _hold_chunk(run, grid, unit, kept)


def reader(run: str, units: Iterable[WorkUnit]) -> functools.partial[Iterator[pa.RecordBatch]]:
    """The detection's reader for a copy starting at ``units``' starts."""
    return functools.partial(read_held, run=run, grid=grid_of(units))


def _hold_chunk(run: str, grid: Grid, unit: WorkUnit | None, kept: list[Columns]) -> None:
    if unit is not None and is_chunk(unit, grid):
        hold(run, unit, kept)


def _local_dir(run: str) -> Path | None:
    """This run's directory under the task's Spark local directory; None outside a task."""
    dirs = os.environ.get("SPARK_LOCAL_DIRS", "")
    return Path(dirs.split(",")[0]) / f"migcheck-held-{run}" if dirs else None


def _file(run: str, partition: int, start: int, end: int) -> Path | None:
    where = _local_dir(run)
    return where / f"{partition}-{start}-{end}.npy" if where else None


#: The arrays of a chunk's columns, each stored as ``<index>.<name>``: a file holds the
#: list of those names, then each array, as ``numpy.save`` writes them one after another
#: (``numpy.savez``'s zip computed a CRC-32 of every byte both ways: a fifth of the
#: detection's read in a profile, docs/benchmarks.md).
_ARRAYS = [f.name for f in fields(Columns)]


def hold(run: str, unit: WorkUnit, chunks: list[Columns]) -> bool:
    """Keep ``unit``'s records (``chunks``, decoded with bodies) for the copy's task; False,
    and nothing kept, outside a task, without bodies, or where it would leave the disk
    with less than :data:`RESERVE_BYTES` free."""
    path = _file(run, unit.partition, unit.start, unit.end)
    if path is None or any(c.body_data is None for c in chunks):
        return False
    arrays = {
        f"{i}.{name}": getattr(c, name)
        for i, c in enumerate(chunks)
        for name in _ARRAYS
        if getattr(c, name) is not None
    }
    path.parent.mkdir(exist_ok=True)
    if shutil.disk_usage(path.parent).free - sum(a.nbytes for a in arrays.values()) < RESERVE_BYTES:
        return False
    part = path.with_suffix(f".{uuid.uuid4().hex}.part")
    with open(part, "wb") as f:
        np.save(f, np.array(list(arrays)), allow_pickle=False)
        for array in arrays.values():
            np.save(f, array, allow_pickle=False)
    os.replace(part, path)
    return True


def take(run: str | None, partition: int, start: int, end: int) -> WholeChunk | None:
    """The held records of ``[start, end)`` of ``partition``, in offset order, from the
    held chunks that tile it (one, or several cells of a latest-per-key chunk,
    :func:`~migcheck.copy.latest.chunk_end`); None when this task's disk does not hold
    them all."""
    cells = tiling(_held_ranges(run, partition), start, end)
    chunks: list[Columns] = []
    for a, b in cells or []:
        got = _load(run, partition, a, b)
        if got is None:
            return None
        chunks += got
    return WholeChunk(chunks) if cells else None


def tiling(held: Iterable[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]] | None:
    """The ranges of ``held`` that tile ``[start, end)`` end to end, from ``start`` on;
    None where they leave a gap or pass ``end``."""
    ends: dict[int, list[int]] = {}
    for a, b in held:
        ends.setdefault(a, []).append(b)
    cells, at = [], start
    while at < end:
        fitting = [b for b in ends.get(at, []) if at < b <= end]
        if not fitting:
            return None
        cells.append((at, max(fitting)))
        at = cells[-1][1]
    return cells


def _held_ranges(run: str | None, partition: int) -> list[tuple[int, int]]:
    """The ranges of ``partition``'s chunks this task's disk holds for ``run``, ascending
    (whole files only: a file being written has another suffix)."""
    where = _local_dir(run) if run else None
    if where is None or not where.is_dir():
        return []
    ranges = []
    for path in where.glob(f"{partition}-*-*.npy"):
        with contextlib.suppress(ValueError):
            _, a, b = path.stem.split("-")
            ranges.append((int(a), int(b)))
    return sorted(ranges)


def keys_of(client: ClientConfig, run: str | None, unit: WorkUnit) -> Iterator[Columns]:
    """Every record of ``unit`` as columns without bodies (keys, offsets, value sizes), in
    no set order: the cells this task's disk holds whole within it, then the rest read
    from the source in one read.  A latest-per-key pass over a partition the detection
    held takes it from the local disk instead of the broker."""
    gaps, at = [], unit.start
    for a, b in _held_ranges(run, unit.partition):
        if a < at or b > unit.end:
            continue
        got = _load(run, unit.partition, a, b, _BODIES)
        if got is None:
            continue
        gaps += [WorkUnit(unit.topic, unit.partition, at, a)] if a > at else []
        yield from got
        at = b
    gaps += [WorkUnit(unit.topic, unit.partition, at, unit.end)] if at < unit.end else []
    if gaps:
        yield from (c for _, c in read_columns(client, gaps, every_record=True))


#: The arrays a read of keys skips in a held chunk.
_BODIES = frozenset({"body_ends", "body_data", "digests"})


def _load(
    run: str | None, partition: int, start: int, end: int, skip: frozenset[str] = frozenset()
) -> list[Columns] | None:
    """The columns of ``partition``'s chunk ``[start, end)`` held for ``run`` (without the
    arrays named in ``skip``, which are passed over unread), in offset order; None if it
    is gone or not that chunk's."""
    path = _file(run, partition, start, end) if run else None
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            names = [str(name) for name in np.load(f, allow_pickle=False)]
            stored = {}
            for name in names:
                if name.split(".")[1] in skip:
                    _skip(f)
                else:
                    stored[name] = np.load(f, allow_pickle=False)
    except OSError:
        return None
    count = 1 + max((int(k.split(".")[0]) for k in names), default=-1)
    chunks = [
        Columns(**{n: stored[f"{i}.{n}"] for n in _ARRAYS if f"{i}.{n}" in stored})
        for i in range(count)
    ]
    offsets = np.concatenate([c.offsets for c in chunks]) if chunks else np.zeros(0, np.int64)
    in_order = bool(np.all(offsets[1:] > offsets[:-1]))
    if not in_order or (offsets.size and not start <= offsets[0] <= offsets[-1] < end):
        return None  # not this chunk's: read it from the source
    return chunks


def _skip(f: BinaryIO) -> None:
    """Pass over the array ``numpy.save`` wrote at ``f``'s position, unread."""
    version = np.lib.format.read_magic(f)
    fmt = np.lib.format
    header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, _, dtype = header(f)
    f.seek(int(np.prod(shape)) * dtype.itemsize, os.SEEK_CUR)


def release(run: str | None, partition: int, start: int) -> None:
    """Delete what is held of ``partition`` up to the chunk settled at ``start``: nothing
    takes it again, neither the chunk's records nor a chunk held with other bounds than
    the rounds cut (a follow's last one of the history, cut at the ends of that time)."""
    where = _local_dir(run) if run else None
    if where is None or not where.is_dir():
        return
    for path in where.glob(f"{partition}-*.npy"):
        if int(path.name.split("-")[1]) <= start:
            with contextlib.suppress(OSError):
                path.unlink()
