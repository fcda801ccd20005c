"""A full scan's partial histories, merged, are the histories of the whole partition.

A full scan's read task groups chunks of a partition (``histories_by_chunk``) and Spark
merges the partials; a partition may also be read by several tasks (``pack_spans``).
The merge here is a plain-Python reference written for the test (not migcheck's Spark
merge): counts and bytes add up, the last record is that of the highest last offset.
It must give exactly what ``partition_histories`` gives for the whole partition, the
null key included.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pyarrow as pa
import pytest

from migcheck.analysis.histories import (
    HISTORY_SCHEMA,
    LAST_OFFSET,
    PARTIAL_SCHEMA,
    histories_by_chunk,
    histories_by_partition,
    partition_histories,
    placement_name,
)
from migcheck.kafka.fetch import RECORD_SCHEMA, WorkUnit, pack_spans
from migcheck.model.analyze import KeyLayout

SCORED = [(KeyLayout.PLAIN, "murmur2"), (KeyLayout.WINDOW, "murmur2")]
PLACEMENTS = [placement_name(pair) for pair in SCORED]


def _records(rng: random.Random, topic: str, partition: int, count: int) -> pa.Table:
    """``count`` records of one partition in offset order (with gaps, as compaction and
    transaction markers leave), keys from a small pool with the null and empty keys, some
    tombstones."""
    pool: list[bytes | None] = [None, b"", *(f"key-{i}".encode() for i in range(40))]
    keys = [rng.choice(pool) for _ in range(count)]
    offsets = list(itertools.accumulate(rng.choice((1, 1, 1, 2, 5)) for _ in range(count)))
    values = [None if rng.random() < 0.15 else rng.randrange(0, 300) for _ in range(count)]
    return pa.table(
        {
            "topic": [topic] * count,
            "partition": pa.array([partition] * count, pa.int32()),
            "offset": pa.array(offsets, pa.int64()),
            "key": pa.array(keys, pa.binary()),
            "key_size": pa.array([None if k is None else len(k) for k in keys], pa.int32()),
            "value_size": pa.array(values, pa.int32()),
            "timestamp": pa.array([0] * count, pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )


def _batches(rng: random.Random, table: pa.Table) -> list[pa.RecordBatch]:
    """The table cut at random, as fetches cut a partition (empty batches included)."""
    out, start = [], 0
    while start < table.num_rows:
        size = rng.choice((0, 1, 7, 30, 120))
        out.append(pa.RecordBatch.from_pylist(table.slice(start, size).to_pylist(), RECORD_SCHEMA))
        start += size
    return out


def _merge_reference(partials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Partials merged per (topic, partition, key), in plain Python."""
    merged: dict[tuple[str, int, bytes | None], dict[str, Any]] = {}
    for row in partials:
        ident = (row["topic"], row["partition"], row["key"])
        seen = merged.get(ident)
        if seen is None:
            merged[ident] = dict(row)
            continue
        for name in ("rank", *PLACEMENTS):
            assert seen[name] == row[name]  # the key's own, in every partial
        for name in ("n", "bytes", "bytes_sq"):
            seen[name] = None if seen[name] is None else seen[name] + row[name]
        if row[LAST_OFFSET] > seen[LAST_OFFSET]:
            for name in ("tombstoned", "last_bytes", LAST_OFFSET):
                seen[name] = row[name]
    for row in merged.values():
        del row[LAST_OFFSET]
    return _sorted(list(merged.values()))


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["key"] is not None, r["key"]))


def _rows(batches: list[pa.RecordBatch]) -> list[dict[str, Any]]:
    return pa.Table.from_batches(batches).to_pylist() if batches else []


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limit", [1, 50, 400, 10_000])
def test_partials_of_chunks_merge_into_the_whole_partitions_histories(
    seed: int, limit: int
) -> None:
    rng = random.Random(seed)
    tables = [_records(rng, "t", p, rng.randrange(1, 1500)) for p in (0, 3)]
    batches = [b for t in tables for b in _batches(rng, t)]
    partials = list(histories_by_chunk(batches, SCORED, limit))
    assert all(b.schema.names == [*PARTIAL_SCHEMA.names, *PLACEMENTS] for b in partials)
    whole = _sorted([row for t in tables for row in partition_histories(t, SCORED).to_pylist()])
    assert _merge_reference(_rows(partials)) == whole
    assert _sorted(_rows(list(histories_by_partition(batches, SCORED)))) == whole


def test_chunks_end_at_the_limit_and_at_each_partition() -> None:
    rng = random.Random(7)
    tables = [_records(rng, "t", p, 1000) for p in (0, 1)]
    batches = [b for t in tables for b in t.to_batches(max_chunksize=100)]
    partials = pa.Table.from_batches(list(histories_by_chunk(batches, SCORED, 300)))
    # 4 chunks a partition (300, 300, 300, 100 records), never two partitions in one
    records = sum(partials.column("n").to_pylist())
    assert records == 2000
    nulls = [r for r in partials.to_pylist() if r["key"] is None]
    assert [r["partition"] for r in nulls] == [0] * 4 + [1] * 4
    # the null key: a row per chunk, its bytes and placements null, its count whole
    assert all(r["bytes"] is None and r["last_bytes"] is None for r in nulls)
    assert all(r[name] is None for r in nulls for name in PLACEMENTS)
    whole = partition_histories(tables[0]).to_pylist()
    (null_row,) = [r for r in whole if r["key"] is None]
    assert null_row["n"] == sum(r["n"] for r in nulls if r["partition"] == 0)


def test_a_whole_partitions_histories_keep_their_schema() -> None:
    table = _records(random.Random(1), "t", 2, 50)
    assert partition_histories(table).schema == HISTORY_SCHEMA
    assert list(partition_histories(table, SCORED).schema.names) == [
        *HISTORY_SCHEMA.names,
        *PLACEMENTS,
    ]


def _offsets(units: list[WorkUnit]) -> list[tuple[str, int, int]]:
    return sorted((u.topic, u.partition, o) for u in units for o in range(u.start, u.end))


@pytest.mark.parametrize("tasks", [1, 2, 3, 4, 7, 16, 1000])
def test_pack_spans_cuts_every_offset_once_into_equal_ordered_tasks(tasks: int) -> None:
    sizes = [(0, 0, 450), (1, 100, 130), (2, 0, 1), (3, 5, 905)]
    units = [
        WorkUnit("t", p, s, min(s + 200, end))
        for p, start, end in sizes
        for s in range(start, end, 200)
    ]
    bins = pack_spans(list(reversed(units)), tasks)
    total = sum(u.end - u.start for u in units)
    assert len(bins) == min(tasks, total)
    assert _offsets([u for b in bins for u in b]) == _offsets(units)
    loads = [sum(u.end - u.start for u in b) for b in bins]
    assert max(loads) - min(loads) <= 1
    for b in bins:
        assert b == sorted(b)  # partition by partition, each in offset order
        parts = [(u.topic, u.partition) for u in b]
        assert len(parts) == len(set(parts))  # a partition's contiguous range joined


@pytest.mark.parametrize("tasks", [2, 3, 4, 7])
def test_pack_spans_cuts_a_partition_only_on_its_grain(tasks: int) -> None:
    """A copy's detection cuts its tasks on the copy's chunks (100 offsets here, from each
    partition's start), so each chunk is read whole by one task."""
    units = [WorkUnit("t", 0, 0, 1000), WorkUnit("t", 1, 7, 507)]
    bins = pack_spans(units, tasks, grain=100)
    assert _offsets([u for b in bins for u in b]) == _offsets(units)
    starts = {0: 0, 1: 7}
    for u in (u for b in bins for u in b):
        assert (u.start - starts[u.partition]) % 100 == 0
        assert u.end == (507 if u.partition else 1000) or (u.end - starts[u.partition]) % 100 == 0
    loads = [sum(u.end - u.start for u in b) for b in bins]
    assert max(loads) - min(loads) <= 200


def test_a_samples_histories_mark_the_windows_each_key_was_read_in() -> None:
    # windows start at offsets 0, 100 and 200: "a" at 1 and 105 (windows 0, 1), "b" at 2
    # and 3 (window 0), "c" at 201 (window 2), the null key at 106 (window 1)
    rows = [(1, b"a"), (2, b"b"), (3, b"b"), (105, b"a"), (106, None), (201, b"c")]
    table = pa.table(
        {
            "topic": ["t"] * 6,
            "partition": pa.array([0] * 6, pa.int32()),
            "offset": pa.array([o for o, _ in rows], pa.int64()),
            "key": pa.array([k for _, k in rows], pa.binary()),
            "key_size": pa.array([None if k is None else 1 for _, k in rows], pa.int32()),
            "value_size": pa.array([1] * 6, pa.int32()),
            "timestamp": pa.array([0] * 6, pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )
    windowed = partition_histories(table, (), [0, 100, 200])
    keys, marks = windowed.column("key").to_pylist(), windowed.column("windows").to_pylist()
    marks = dict(zip(keys, marks, strict=True))
    assert marks == {b"a": 0b011, b"b": 0b001, b"c": 0b100, None: 0b010}
    whole = partition_histories(table, ())  # no sample's windows: a full scan's partition
    assert set(whole.column("windows").to_pylist()) == {0}


def test_a_samples_units_name_their_windows_in_offset_order() -> None:
    from migcheck.kafka.fetch import plan_units, window_starts
    from migcheck.kafka.metadata import PartitionMeta, TopicMeta

    meta = TopicMeta("t", "delete", 2, (PartitionMeta(0, 0, 80_000), PartitionMeta(1, 0, 900)))
    units = plan_units([meta], 8_000)
    # partition 0: 8 windows of 1,000 from 0 to 80,000 (gap 79,000 / 7); 1 is read whole
    assert window_starts(units) == {("t", 0): [round(i * 79_000 / 7) for i in range(8)]}
    assert {u.window for u in units if u.partition == 1} == {-1}
