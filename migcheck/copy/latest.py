"""``copy --latest-per-key``: only each key's latest record, for a key-value store's changelog.

Why: a key-value store restores from its changelog by keeping each key's last record, so
the records before it are history a state move need not carry (a count app's changelog
with its cache off holds every update: 1 M records for 100,000 keys).  A versioned store,
or one that keeps duplicates, needs every record: its caller decides
(:mod:`migcheck.runbook.actions`, ``move_changelogs``).

How: before the rounds, one Spark job reads every source partition's keys up to the
copy's ends, a task per partition (where the placement is proven, a key lives in one
partition, so its latest is its partition's), and returns each partition's offsets of
its keys' last records, ascending, without those whose last record is a tombstone: that
key is absent from the store, so nothing of it is written.  The copy's tasks keep only
those offsets of their chunk (each is shipped its chunk's slice, :func:`chunk_slice`),
and the check compares the destination with the source's records at those offsets.

A resumed run keeps the same records only if the source still ends where the first run
read it: the checkpoint pins those ends (:func:`pinned_until`), and a source that grew
since is refused, as is a destination an earlier copy of every record wrote into.  A
null key has no latest record in a store: refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from migcheck.copy.checkpoint import Checkpoint
from migcheck.copy.held import keys_of
from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit
from migcheck.kafka.metadata import TopicMeta
from migcheck.kafka.recordbatch import Columns, in_sorted, key_array

#: Per source partition: the offsets of its keys' latest records, ascending (int64).
Keep = Mapping[int, np.ndarray]

_NONE = np.zeros(0, np.int64)


@dataclass(frozen=True)
class Latest:
    """What a latest-per-key copy keeps of each source partition (``keep``), and how many
    records with a null key it found (refused: :meth:`checked`)."""

    keep: dict[int, np.ndarray]
    null_keys: int = 0

    def checked(self, topic: str) -> Latest:
        """This, unless a record has a null key, which no store holds: refused in one line."""
        if self.null_keys:
            raise UsageError(
                f"--latest-per-key: {topic} holds {self.null_keys:,} records with a null key, "
                "which have no latest record per key; copy it without --latest-per-key"
            )
        return self

    def cut(self, first: Mapping[int, int], size: int) -> Callable[[int, int], int]:
        """The rounds' :func:`chunk_end` for each partition, on the grid from ``first``."""
        return lambda p, start: chunk_end(self.keep.get(p, _NONE), first.get(p, 0), start, size)

    def records_from(self, nexts: Mapping[int, int]) -> int:
        """The records kept at or after each partition's next offset: what is left to copy."""
        return sum(int(np.count_nonzero(k >= nexts.get(p, 0))) for p, k in self.keep.items())


# --- the pure decisions ------------------------------------------------------------


def last_records(keys: pa.Array, offsets: np.ndarray, tombstones: np.ndarray) -> pa.Table:
    """Each key's last record among these (the highest offset; offsets are a partition's,
    so unique) as rows of key, offset and whether it is a tombstone."""
    import pyarrow.compute as pc

    rows = pa.table({"key": keys, "offset": pa.array(offsets, pa.int64()),
                     "tombstone": pa.array(tombstones, pa.bool_())})  # fmt: skip
    last = rows.group_by("key", use_threads=False).aggregate([("offset", "max")])
    return rows.filter(pc.is_in(rows["offset"], value_set=last["offset_max"]))


def merged(tables: list[pa.Table]) -> pa.Table:
    """Each key's last record of runs of one partition's records (tables of
    :func:`last_records`, one or more)."""
    if len(tables) == 1:
        return tables[0]
    both = pa.concat_tables(tables)
    return last_records(both["key"].combine_chunks(), both["offset"].to_numpy(),
                        both["tombstone"].to_numpy())  # fmt: skip


def kept_offsets(last: pa.Table | None) -> np.ndarray:
    """The offsets to copy of a partition's last records: those that are not tombstones,
    ascending."""
    if last is None or last.num_rows == 0:
        return _NONE
    offsets = last["offset"].to_numpy()
    return np.sort(offsets[~last["tombstone"].to_numpy(zero_copy_only=False)]).astype(np.int64)


def chunk_slice(keep: Keep, partition: int, start: int, end: int) -> np.ndarray:
    """``partition``'s kept offsets within ``[start, end)``: all a chunk's task needs of
    ``keep``."""
    kept = keep.get(partition, _NONE)
    return kept[np.searchsorted(kept, start) : np.searchsorted(kept, end)]


#: The most cells of the copy's grid (:data:`~migcheck.copy.rounds.CHUNK` offsets each) a
#: latest-per-key chunk spans: its task holds them whole before it keeps the latest
#: records, so this bounds its memory where few records are kept.
SPAN_CELLS = 8


def chunk_end(kept: np.ndarray, first: int, start: int, size: int, cells: int = SPAN_CELLS) -> int:
    """Where a latest-per-key chunk from ``start`` ends: on the grid of ``size`` offsets
    from ``first`` (the detection held its read in those cells, :mod:`migcheck.copy.held`),
    after as many cells as hold at most ``size`` of the ``kept`` offsets (ascending), at
    least one and at most ``cells``.

    Why: a round costs a Spark job and, per task, a transaction; cut by offsets, a chunk
    of a changelog that keeps a fifth of its records carries a fifth of a transaction
    (34 rounds for 1 M kept records of 5 M: 12.5 s of a 46 s move, docs/benchmarks.md)."""
    cell = first + ((start - first) // size + 1) * size  # the first cut after start
    most = cell + (cells - 1) * size
    over = int(np.searchsorted(kept, start)) + size  # the first kept record past size
    if over >= kept.size:
        return most
    fits = first + ((int(kept[over]) - first) // size) * size  # the last cut before it
    return max(cell, min(fits, most))


def kept_rows(partitions: np.ndarray, offsets: np.ndarray, keep: Keep) -> np.ndarray:
    """Whether each record (its partition and offset) is one ``keep`` keeps."""
    mask = np.zeros(offsets.shape, np.bool_)
    for p in np.unique(partitions).tolist():
        rows = partitions == p
        mask[rows] = in_sorted(offsets[rows], keep.get(p, _NONE))
    return mask


def pinned_until(
    path: str | None, saved: Checkpoint | None, until: dict[int, int] | None, into_has_records: bool
) -> None:
    """Refuse a run that would keep other records than the run that began the copy: a
    latest-per-key run (``until``: the source's ends now) where the source grew since (a
    key's latest may then be one that was not copied, and a record copied then is no
    longer its key's latest) or where an earlier copy of every record wrote into the
    destination, and a copy of every record (``until`` None) resuming a latest-per-key
    one."""
    began = saved.until if saved else None
    if began is not None and until is None:
        raise UsageError(
            f"--checkpoint {path} records a copy with --latest-per-key: finish it with "
            "--latest-per-key, or copy again into a fresh topic"
        )
    if began is not None and until != began:
        raise UsageError(
            f"--latest-per-key: --checkpoint {path} began a copy of the source up to other "
            "offsets than it ends at now, so each key's latest record may have changed; "
            "copy again into a fresh topic"
        )
    if saved is not None and began is None and until is not None and into_has_records:
        raise UsageError(
            f"--latest-per-key: --checkpoint {path} records a copy of every record; "
            "finish it without --latest-per-key, or copy again into a fresh topic"
        )


# --- the Spark job -------------------------------------------------------------------

_DDL = "partition int, keep binary, null_keys long"


def latest_offsets(
    spark: Any,
    client: ClientConfig,
    source: TopicMeta,
    done: dict[int, int],
    held: str | None = None,
) -> Latest:
    """Each partition's kept offsets from its log's start up to ``done``, one Spark task per
    partition (a ``mapInArrow`` job over a row per partition, as the copy's rounds), its
    keys taken from the cells the detection ``held`` on the task's disk where it did
    (:func:`~migcheck.copy.held.keys_of`); a null key refused before anything is written."""
    ranges = {p.partition: (p.log_start_offset, done[p.partition]) for p in source.partitions}
    units = [WorkUnit(source.name, p, a, b) for p, (a, b) in ranges.items() if a < b]

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column("id").to_pylist():
                p, keep, nulls = _partition_latest(client, units[i], held)
                yield pa.RecordBatch.from_arrays(
                    [pa.array([p], pa.int32()), pa.array([keep.tobytes()], pa.binary()),
                     pa.array([nulls], pa.int64())],
                    ["partition", "keep", "null_keys"],
                )  # fmt: skip

    keep = {p: _NONE for p in ranges}
    nulls = 0
    if units:
        rows = spark.range(0, len(units), 1, len(units)).mapInArrow(run, _DDL).collect()
        for row in rows:
            keep[row["partition"]] = np.frombuffer(row["keep"], np.int64)
            nulls += row["null_keys"]
    return Latest(keep, nulls).checked(source.name)


#: The rows of batches' last records gathered before they are merged with the keys seen
#: so far, at least: merging each batch into every key seen took a pass over all keys per
#: batch (17 s of a 1.7 M-record partition whose read took 4 s); merging once the rows
#: gathered outnumber the keys merged keeps it linear, and the memory within twice the
#: keys.
MERGE_ROWS = 1_000_000


def _partition_latest(
    client: ClientConfig, unit: WorkUnit, held: str | None
) -> tuple[int, np.ndarray, int]:
    """A task's partition: its kept offsets and its records with a null key (the last
    records are each key's highest offset, so the columns come in any order)."""
    gathered: list[pa.Table] = []  # the keys merged so far first, then batches since
    keys = rows = nulls = 0
    for c in keys_of(client, held, unit):
        nulls += int(c.key_null.sum())
        gathered.append(_last_of(c))
        rows += gathered[-1].num_rows
        if rows > max(MERGE_ROWS, keys):
            gathered = [merged(gathered)]
            keys, rows = gathered[0].num_rows, 0
    return unit.partition, kept_offsets(merged(gathered) if gathered else None), nulls


def _last_of(c: Columns) -> pa.Table:
    return last_records(key_array(c), c.offsets, c.value_sizes < 0)
