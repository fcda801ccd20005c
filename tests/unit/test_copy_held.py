"""One read for the detection and the copy (migcheck.copy.held): the chunks the detection
reads are cut where the copy's rounds cut them, held whole on the task's disk, and taken
back as kafka-python reads the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from batches import Record, batch
from kafka import TopicPartition
from kafka.consumer.fetcher import Fetcher
from kafka.record.memory_records import MemoryRecords

from migcheck.copy import held
from migcheck.kafka.fetch import WorkUnit
from migcheck.kafka.recordbatch import decode, key_array


def test_units_are_cut_where_the_rounds_cut_chunks() -> None:
    grid = {0: (100, 350), 1: (0, 40)}
    units = [WorkUnit("t", 0, 100, 350), WorkUnit("t", 1, 0, 40)]
    cut = held.on_grid(units, grid, size=100)
    assert [(u.partition, u.start, u.end) for u in cut] == [
        (0, 100, 200),
        (0, 200, 300),
        (0, 300, 350),
        (1, 0, 40),
    ]
    assert all(held.is_chunk(u, grid, size=100) for u in cut)


def test_a_span_cut_off_the_grid_holds_only_its_whole_chunks() -> None:
    """A full scan's span of a large partition may begin or end inside a chunk: the
    pieces are read, but only whole chunks are held (a piece is not the copy's chunk)."""
    grid = {0: (0, 1000)}
    cut = held.on_grid([WorkUnit("t", 0, 150, 420)], grid, size=100)
    assert [(u.start, u.end) for u in cut] == [(150, 200), (200, 300), (300, 400), (400, 420)]
    assert [held.is_chunk(u, grid, size=100) for u in cut] == [False, True, True, False]
    assert not held.is_chunk(WorkUnit("t", 2, 0, 100), grid, size=100)  # not on the grid


RECORDS = [
    Record(1_700_000_000_000, b"k1", b"tab\there\nnewline"),
    Record(1_700_000_000_001, None, b"\x00\xff binary", headers=(("h", b"v"), ("n", None))),
    Record(1_700_000_000_002, b"k2", None, gap=3),  # a tombstone after a compaction gap
    Record(1_700_000_000_003, b"", b""),
]


def _decoded(first: int) -> tuple[list[tuple[object, ...]], object]:
    """kafka-python's records of one batch at ``first``, and our decoder's columns of it
    with bodies."""
    data = batch(first, RECORDS)
    theirs = Fetcher.PartitionRecords(first, TopicPartition("t", 0), MemoryRecords(data)).take()
    want = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in theirs]
    return want, decode(data, first, 2**62, [], "t-0", bodies=True).columns


def test_a_held_chunk_is_taken_back_as_kafka_python_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_LOCAL_DIRS", f"{tmp_path},/elsewhere")
    monkeypatch.setattr(held, "RESERVE_BYTES", 0)  # whatever this machine's disk holds
    want, columns = _decoded(10)
    unit = WorkUnit("t", 0, 10, 20)
    assert held.hold("run-a", unit, [columns])
    assert held.take("run-b", 0, 10, 20) is None  # another run's
    assert held.take("run-a", 0, 10, 19) is None  # other bounds
    got = held.take("run-a", 0, 10, 20)
    assert got is not None and [tuple(r) for r in got.records] == want
    # what the copy's write takes of them
    assert [(v, k, t, h or None) for _, t, k, v, h in want] == list(got.fields())
    assert [k for _, _, k, _, _ in want] == got.keys().to_pylist()
    assert [t for _, t, _, _, _ in want] == got.timestamps()
    assert sum(len(k or b"") + len(v or b"") for _, _, k, v, _ in want) == got.size()
    assert len(got) == len(want)
    held.release("run-a", 0, 10)
    assert held.take("run-a", 0, 10, 20) is None
    assert list(tmp_path.glob("*/*")) == []


def _two_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """Offsets [10, 20) and [20, 30) held as two of the grid's cells; kafka-python's
    records of each."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    monkeypatch.setattr(held, "RESERVE_BYTES", 0)
    first, columns = _decoded(10)
    second, later = _decoded(20)
    assert held.hold("r", WorkUnit("t", 0, 10, 20), [columns])
    assert held.hold("r", WorkUnit("t", 0, 20, 30), [later])
    return first, second


def test_a_range_of_held_cells_is_taken_back_whole_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A latest-per-key chunk spans several of the grid's cells: taken from the cells
    that tile it, or not at all."""
    first, second = _two_cells(tmp_path, monkeypatch)
    got = held.take("r", 0, 10, 30)
    assert got is not None and [tuple(r) for r in got.records] == first + second
    assert held.take("r", 0, 10, 40) is None  # [30, 40) is not held
    assert held.take("r", 0, 20, 30) is not None and held.take("r", 1, 10, 30) is None


def test_a_latest_pass_takes_the_keys_of_held_cells_without_their_bodies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every record of a range the detection held whole is read from the local disk (no
    client is reached: it is None), keys and offsets as kafka-python reads them."""
    first, second = _two_cells(tmp_path, monkeypatch)
    got = list(held.keys_of(None, "r", WorkUnit("t", 0, 10, 30)))  # type: ignore[arg-type]
    assert all(c.body_ends is None and c.body_data is None for c in got)
    read = [
        (int(o), k) for c in got for o, k in zip(c.offsets, key_array(c).to_pylist(), strict=True)
    ]
    assert read == [(o, k) for o, _, k, _, _ in first + second]


def test_cells_tile_a_range_end_to_end_or_not_at_all() -> None:
    cells = [(20, 30), (0, 10), (10, 20), (10, 15)]
    assert held.tiling(cells, 0, 30) == [(0, 10), (10, 20), (20, 30)]
    assert held.tiling(cells, 10, 15) == [(10, 15)]
    assert held.tiling(cells, 0, 25) is None  # (20, 30) passes the end
    assert held.tiling(cells, 5, 30) is None  # nothing starts at 5
    assert held.tiling([(0, 10), (20, 30)], 0, 30) is None  # a gap


def test_release_drops_a_chunk_held_with_other_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follow's rounds may cut a partition's last chunk at later ends than the
    detection read: settling the chunk drops the one held at the same start."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    monkeypatch.setattr(held, "RESERVE_BYTES", 0)
    _, first = _decoded(0)
    _, later = _decoded(50)
    assert held.hold("r", WorkUnit("t", 0, 0, 10), [first])
    assert held.hold("r", WorkUnit("t", 0, 50, 60), [later])
    held.release("r", 0, 0)
    assert held.take("r", 0, 0, 10) is None
    assert held.take("r", 0, 50, 60) is not None


def test_nothing_is_held_outside_a_task_or_without_bodies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    _, columns = _decoded(0)
    assert not held.hold("r", WorkUnit("t", 0, 0, 10), [columns])
    assert held.take("r", 0, 0, 10) is None
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    keys_only = decode(batch(0, RECORDS), 0, 2**62, [], "t-0").columns
    assert not held.hold("r", WorkUnit("t", 0, 0, 10), [keys_only])


def test_nothing_is_held_past_the_disks_free_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    monkeypatch.setattr(held, "RESERVE_BYTES", 2**62)  # no disk is ever that free
    _, columns = _decoded(0)
    assert not held.hold("r", WorkUnit("t", 0, 0, 10), [columns])
    assert held.take("r", 0, 0, 10) is None
