"""``copy --latest-per-key``'s pure parts (migcheck.copy.latest): which offsets a partition
keeps, the slice a chunk's task gets, the records a chunk and the check keep, and the
refusals of a run that would keep other records than the one that began the copy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from migcheck.copy.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from migcheck.copy.latest import (
    Latest,
    chunk_end,
    chunk_slice,
    kept_offsets,
    kept_rows,
    last_records,
    merged,
    pinned_until,
)
from migcheck.errors import UsageError
from migcheck.kafka.recordbatch import Columns, WholeChunk, WholeRecord, whole_records


def _keys(*keys: bytes) -> pa.Array:
    return pa.array(list(keys), pa.binary())


def test_each_keys_last_record_is_kept_and_a_key_whose_last_is_a_tombstone_is_not() -> None:
    keys = _keys(b"a", b"b", b"a", b"c", b"b", b"c", b"")
    offsets = np.array([10, 11, 12, 13, 14, 15, 16])
    tombstones = np.array([False, False, False, False, True, False, False])
    # a: 10, 12 -> 12; b: 11, 14 (a tombstone) -> none; c: 13, 15 -> 15; the empty key: 16
    assert kept_offsets(last_records(keys, offsets, tombstones)).tolist() == [12, 15, 16]
    # a tombstone that is not a key's last record does not hide the key's latest value
    again = last_records(_keys(b"k", b"k"), np.array([3, 4]), np.array([True, False]))
    assert kept_offsets(again).tolist() == [4]


def test_a_partition_read_in_chunks_keeps_what_it_keeps_read_whole() -> None:
    first = last_records(_keys(b"a", b"b", b"c"), np.array([0, 1, 2]),
                         np.array([False, False, False]))  # fmt: skip
    second = last_records(_keys(b"b", b"a", b"b"), np.array([3, 4, 5]),
                          np.array([False, True, False]))  # fmt: skip
    # a: deleted at 4; b: 5; c: 2
    assert kept_offsets(merged([first, second])).tolist() == [2, 5]
    assert kept_offsets(merged([first])).tolist() == [0, 1, 2]
    assert kept_offsets(None).tolist() == []


def test_a_chunks_task_gets_its_chunks_offsets_only() -> None:
    keep = {0: np.array([3, 7, 9, 12, 40], np.int64)}
    assert chunk_slice(keep, 0, 7, 12).tolist() == [7, 9]
    assert chunk_slice(keep, 0, 0, 3).tolist() == []
    assert chunk_slice(keep, 0, 12, 50).tolist() == [12, 40]
    assert chunk_slice(keep, 1, 0, 100).tolist() == []  # a partition that keeps nothing


def test_a_chunk_spans_the_cells_that_keep_at_most_a_chunks_records() -> None:
    """Cells of 10 offsets from ``first``; a chunk keeps at most 10 records, spans 1 to 4
    cells and ends on a cell's cut (counted by hand)."""
    every_other = np.arange(0, 100, 2)  # 5 kept a cell
    assert chunk_end(every_other, 0, 0, 10, cells=4) == 20  # 10 kept; a third cell: 15
    assert chunk_end(np.arange(100), 0, 0, 10, cells=4) == 10  # every record: one cell
    assert chunk_end(np.array([3, 95]), 0, 0, 10, cells=4) == 40  # sparse: the most cells
    assert chunk_end(np.zeros(0, np.int64), 0, 0, 10, cells=4) == 40
    # cells from 5; the chunk from 25 keeps 2 a cell: 4 cells, [25, 65), 8 records
    assert chunk_end(np.arange(5, 200, 5), 5, 25, 10, cells=4) == 65
    assert Latest({0: every_other}).cut({0: 0}, 10)(0, 20) == 40


def test_the_check_reads_only_the_kept_records_of_each_partition() -> None:
    keep = {0: np.array([1, 5], np.int64), 1: np.array([2], np.int64)}
    partitions = np.array([0, 0, 0, 1, 1, 2], np.int32)
    offsets = np.array([1, 2, 5, 1, 2, 1], np.int64)
    assert kept_rows(partitions, offsets, keep).tolist() == [True, False, True, False, True, False]


def _columns() -> Columns:
    """Three records: offset 3 (key a, value xy), 4 (null key, null value), 5 (key bc,
    value z, a header h=1), their bytes laid out as a decoded batch holds them."""
    header = b"\x02\x02h\x021"  # one header: key "h", value "1" (zigzag varints)
    bodies = b"xy\x00" + b"\x00" + b"z" + header
    return Columns(
        offsets=np.array([3, 4, 5], np.int64),
        timestamps=np.array([100, 200, 300], np.int64),
        key_ends=np.array([1, 1, 3], np.int32),
        key_null=np.array([False, True, False]),
        value_sizes=np.array([2, -1, 1], np.int32),
        key_data=np.frombuffer(b"abc", np.uint8),
        body_ends=np.array([3, 4, 5 + len(header)], np.int64),
        body_data=np.frombuffer(bodies, np.uint8),
    )


def test_a_chunk_keeps_the_kept_records_whole_with_timestamps_and_headers() -> None:
    chunk = WholeChunk([_columns()])
    kept = chunk.only(np.array([3, 5], np.int64))
    assert whole_records(kept.columns[0]) == [
        WholeRecord(3, 100, b"a", b"xy", []),
        WholeRecord(5, 300, b"bc", b"z", [("h", b"1")]),
    ]
    assert kept.keys().to_pylist() == [b"a", b"bc"]
    assert len(chunk.only(np.zeros(0, np.int64))) == 0
    # kafka-python's own records (the hooks fenced off) are kept alike
    given = WholeChunk([], list(whole_records(_columns())))
    assert [r.offset for r in given.only(np.array([4, 5], np.int64)).records] == [4, 5]


def test_a_null_key_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError) as e:
        Latest({0: np.array([1], np.int64)}, null_keys=2).checked("orders")
    assert "\n" not in str(e.value) and "null key" in str(e.value)
    assert Latest({0: np.array([4, 9], np.int64)}).records_from({0: 5}) == 1


def test_a_run_that_would_keep_other_records_than_the_first_is_refused() -> None:
    began = Checkpoint({0: 10}, "murmur2", 6, until={0: 20})
    pinned_until("c.json", began, {0: 20}, True)  # a killed copy resumed: the same ends
    pinned_until("c.json", None, {0: 20}, False)  # a first run
    pinned_until("c.json", Checkpoint({0: 0}, "murmur2", 6), {0: 20}, False)  # migrate's pin
    refused = [
        (began, {0: 25}, True),  # the source grew since
        (began, None, True),  # a copy of every record resuming it
        (Checkpoint({0: 10}, "murmur2", 6), {0: 20}, True),  # it resuming a whole copy
    ]
    for saved, until, has_records in refused:
        with pytest.raises(UsageError) as e:
            pinned_until("c.json", saved, until, has_records)
        assert "\n" not in str(e.value) and "c.json" in str(e.value)


def test_the_checkpoint_records_the_ends_of_a_latest_per_key_copy_only(tmp_path: Path) -> None:
    path = str(tmp_path / "c.json")
    save_checkpoint(path, "a", "b", Checkpoint({0: 1}, "murmur2", 6))
    assert "until" not in json.loads(Path(path).read_text())  # as before
    save_checkpoint(path, "a", "b", Checkpoint({0: 1}, "murmur2", 6, until={0: 7, 1: 3}))
    assert json.loads(Path(path).read_text())["until"] == {"0": 7, "1": 3}
    loaded = load_checkpoint(path, "a", "b")
    assert loaded is not None and loaded.until == {0: 7, 1: 3}
