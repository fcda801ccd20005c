"""Key histories: what the aggregation keeps of one key's records in one partition.

One row per (topic, partition, key): how many records, their bytes (key plus
value), the bytes' squares (for the variance of a sample's estimates), and what
the key's last record says (a tombstone? how big?), which is its live state in a
compacted topic.  The null key gets a row per partition too.

Each history also carries one placement column per scored (key layout,
partitioner) pair, :func:`placement_name`.  Kafka's records are grouped and hashed in
the read tasks that decode them, before they leave the task, and hashed with
:func:`~migcheck.hashing.partitioners.placement_values` as Spark's UDF hashes a key
export's: a sample has about as many keys as records, and shuffling them to group
them, then handing them to a UDF's Python worker, cost more than the read.

A sample's task holds whole windows of whole partitions, so its histories are whole
(:func:`partition_histories`).  A full scan's task holds a chunk of records at a time
(:func:`histories_by_chunk`): its memory is bounded by the chunk, not by a partition's
keys, and a partition may be read by several tasks.  Its histories are *partial*
(:data:`PARTIAL_SCHEMA`: the offset of each key's last record in the chunk too), and
Spark merges them (:func:`~migcheck.analysis.scan.chunks.merged_histories`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from migcheck.analysis.verdicts import KEY_SUFFIX
from migcheck.hashing.partitioners import AUTO_CANDIDATES, placement_values
from migcheck.hashing.sampling import sample_ranks
from migcheck.model.analyze import KeyLayout
from migcheck.model.partitioner import PartitionerChoice

#: A full scan's task groups at most this many records at a time: its memory's bound
#: (a million records' keys and sizes, some tens of MiB).  A larger partition is read in
#: chunks whose partial histories Spark merges, a shuffle of a row per key and chunk
#: that costs far more than reading the partition whole (docs/benchmarks.md).
CHUNK_RECORDS = 1_000_000

#: A (key layout, partitioner) pair that is scored: one placement column each.
Scored = tuple[KeyLayout, str]


def ordered_layouts(key_layouts: Sequence[KeyLayout]) -> tuple[KeyLayout, ...]:
    """The allowed key layouts once each, in preference order: plain keys first, then by
    the suffix they strip."""
    return tuple(sorted(set(key_layouts), key=KEY_SUFFIX.__getitem__))


def scored_pairs(partitioner: PartitionerChoice, key_layouts: Sequence[KeyLayout]) -> list[Scored]:
    """Every (key layout, partitioner) pair scored, in preference order: layouts as
    :func:`ordered_layouts`, then each partitioner in the order ``auto`` tries them."""
    names = list(AUTO_CANDIDATES) if partitioner == PartitionerChoice.AUTO else [partitioner]
    return [(layout, name) for layout in ordered_layouts(key_layouts) for name in names]


def placement_name(pair: Scored) -> str:
    """The column of a pair's placement values."""
    return f"v_{pair[0]}_{pair[1]}"


#: Spark's DDL names for the Arrow types of a history row.
_DDL_TYPES = {
    pa.string(): "string",
    pa.int32(): "int",
    pa.binary(): "binary",
    pa.int64(): "long",
    pa.float64(): "double",
    pa.bool_(): "boolean",
}


def history_schema(scored: Sequence[Scored], partial: bool = False) -> pa.Schema:
    """:data:`HISTORY_SCHEMA` (:data:`PARTIAL_SCHEMA` if ``partial``) with the placement
    columns of ``scored``: the rows a read task (or the driver's read) yields."""
    schema = PARTIAL_SCHEMA if partial else HISTORY_SCHEMA
    return pa.schema([*schema, *(pa.field(placement_name(p), pa.int64()) for p in scored)])


def history_ddl(scored: Sequence[Scored], partial: bool = False) -> str:
    """:func:`history_schema` in Spark's DDL (for ``mapInArrow``).  Every name is
    back-quoted: a partitioner's name may hold a ``-`` (``kafkajs-legacy``), which the
    DDL parser refuses unquoted."""
    fields = history_schema(scored, partial)
    return ", ".join(f"`{f.name}` {_DDL_TYPES[f.type]}" for f in fields)


#: A history row.  ``bytes`` and ``last_bytes`` are null for the null key (its records
#: have no key size); ``tombstoned``: the last record's value is null; ``rank``: the
#: key's stable sampling rank (:func:`~migcheck.hashing.sampling.sample_ranks`), hashed
#: here with the placements so that picking the moved keys to show needs no Python;
#: ``windows``: the sample's windows the key was read in (:data:`Windows`).
HISTORY_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("key", pa.binary()),
        ("n", pa.int64()),
        ("bytes", pa.int64()),
        ("bytes_sq", pa.float64()),
        ("tombstoned", pa.bool_()),
        ("last_bytes", pa.int64()),
        ("rank", pa.int64()),
        ("windows", pa.int64()),
    ]
)

#: A sample's windows, per (topic, partition): the first offset of each, in order.  A
#: history's ``windows`` is the set of them its key was read in, bit ``i`` for window
#: ``i`` (0 where no sample's windows were read: a full scan, a partition read whole).
Windows = Mapping[tuple[str, int], Sequence[int]]

#: The column a partial history adds: the offset of the key's last record in its chunk.
#: Merging a key's partials keeps the last record of the one with the highest.
LAST_OFFSET = "last_offset"

#: A partial history row: the figures of a chunk of a partition's records, in
#: :data:`HISTORY_SCHEMA`, plus :data:`LAST_OFFSET`.  The rank and the placements are
#: the key's own, so every partial of a key carries the same.
PARTIAL_SCHEMA = HISTORY_SCHEMA.append(pa.field(LAST_OFFSET, pa.int64()))


def partition_histories(
    records: pa.Table, scored: Sequence[Scored] = (), starts: Sequence[int] = ()
) -> pa.Table:
    """The histories of one topic-partition's records (``RECORD_SCHEMA``, in offset order),
    with each key's rank and its placement under each of ``scored``, and the sample's
    windows (first offsets ``starts``) it was read in.

    The same figures as Spark's grouping: a record's bytes are its key's size plus its
    value's (0 for a tombstone), null for the null key; "last" is the record of
    highest offset, which Arrow's ordered grouping (no threads) finds as the last seen.
    """
    return _histories(records, scored, partial=False, starts=starts)


def partial_histories(records: pa.Table, scored: Sequence[Scored] = ()) -> pa.Table:
    """:func:`partition_histories` of a chunk of one partition's records, with each key's
    :data:`LAST_OFFSET` (:data:`PARTIAL_SCHEMA`), so that its partials can be merged."""
    return _histories(records, scored, partial=True)


def _histories(
    records: pa.Table, scored: Sequence[Scored], partial: bool, starts: Sequence[int] = ()
) -> pa.Table:
    import pyarrow.compute as pc

    size = pc.add(records.column("key_size"), pc.fill_null(records.column("value_size"), 0))
    size = pc.cast(size, pa.int64())
    table = pa.table(
        {
            "key": records.column("key"),
            "offset": records.column("offset"),
            "size": size,
            "size_sq": pc.power(pc.cast(size, pa.float64()), 2),
            "tombstone": pc.is_null(records.column("value_size")),
            "window": _window_bits(records.column("offset"), starts),
        }
    )
    last = pc.ScalarAggregateOptions(skip_nulls=False)
    grouped = table.group_by("key", use_threads=False).aggregate(
        [
            ([], "count_all"),
            ("size", "sum"),
            ("size_sq", "sum"),
            ("tombstone", "last", last),
            ("size", "last", last),
            *([("offset", "last", last)] if partial else []),
            *([("window", "distinct")] if len(starts) > 1 else []),
        ]
    )
    n = grouped.num_rows
    keys = grouped.column("key").combine_chunks()
    columns = [
        pa.repeat(records.column("topic")[0], n).cast(pa.string()),
        pa.repeat(records.column("partition")[0], n).cast(pa.int32()),
        keys,
        grouped.column("count_all"),
        grouped.column("size_sum"),
        grouped.column("size_sq_sum"),
        grouped.column("tombstone_last"),
        grouped.column("size_last"),
        sample_ranks(keys),
        _windows_read(grouped, n),
        *([grouped.column("offset_last")] if partial else []),
    ]
    table = pa.table(columns, schema=PARTIAL_SCHEMA if partial else HISTORY_SCHEMA)
    for layout, name in scored:
        values = placement_values(keys, name, KEY_SUFFIX[layout])
        table = table.append_column(pa.field(placement_name((layout, name)), pa.int64()), values)
    return table


def _window_bits(offsets: pa.ChunkedArray, starts: Sequence[int]) -> pa.Array:
    """Each record's window as a bit (``1 << i`` for window ``i``), 0 for all when the
    partition was not read in a sample's windows."""
    if len(starts) <= 1:
        return pa.nulls(len(offsets), pa.int64()).fill_null(0)
    at = np.searchsorted(np.asarray(starts), offsets.to_numpy(), side="right") - 1
    return pa.array(np.left_shift(1, np.maximum(at, 0)).astype(np.int64))


def _windows_read(grouped: pa.Table, rows: int) -> pa.Array:
    """Each key's windows (:data:`Windows`): the sum of its distinct window bits."""
    if "window_distinct" not in grouped.column_names:
        return pa.nulls(rows, pa.int64()).fill_null(0)
    import pyarrow.compute as pc

    lists = grouped.column("window_distinct").combine_chunks()
    parents = pc.list_parent_indices(lists).to_numpy()
    bits = pc.list_flatten(lists).to_numpy(zero_copy_only=False)
    return pa.array(np.bincount(parents, weights=bits, minlength=rows).astype(np.int64))


def histories_by_partition(
    batches: Iterable[pa.RecordBatch], scored: Sequence[Scored], windows: Windows | None = None
) -> Iterator[pa.RecordBatch]:
    """Histories of record batches that come partition by partition (each partition's
    batches together, in offset order), one partition at a time: a sample's task, which
    holds whole windows of whole partitions (``windows``: where they start)."""
    for run in _runs(batches, None):
        starts = (windows or {}).get(_partition_of(run[0]), ())
        table = pa.Table.from_batches(run)
        yield from partition_histories(table, scored, starts).to_batches()


def histories_by_chunk(
    batches: Iterable[pa.RecordBatch], scored: Sequence[Scored], limit: int = CHUNK_RECORDS
) -> Iterator[pa.RecordBatch]:
    """Partial histories (:data:`PARTIAL_SCHEMA`) of record batches that come partition by
    partition, each partition's in offset order: a full scan's task.

    A chunk ends where the partition changes or once it holds ``limit`` records, so the
    task holds about ``limit`` records (and their keys) at a time, however many keys
    its partitions have; Spark merges the partials of a key
    (:func:`~migcheck.analysis.scan.chunks.merged_histories`)."""
    for run in _runs(batches, limit):
        yield from partial_histories(pa.Table.from_batches(run), scored).to_batches()


def _runs(batches: Iterable[pa.RecordBatch], limit: int | None) -> Iterator[list[pa.RecordBatch]]:
    """Consecutive non-empty batches of one partition, cut after ``limit`` records (if any)."""
    held: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        if held and _partition_of(batch) != _partition_of(held[0]):
            yield held
            held, rows = [], 0
        held.append(batch)
        rows += batch.num_rows
        if limit is not None and rows >= limit:
            yield held
            held, rows = [], 0
    if held:
        yield held


def _partition_of(batch: pa.RecordBatch) -> tuple[str, int]:
    return batch.column("topic")[0].as_py(), batch.column("partition")[0].as_py()
