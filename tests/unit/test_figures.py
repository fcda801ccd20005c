"""Figures of key histories: each sum worked out by hand on a few rows whose placements
are written in (not hashed here), and the sums of two halves equal to the whole's."""

from __future__ import annotations

import pyarrow as pa
import pytest

from migcheck.analysis.aggregate import aggregate
from migcheck.analysis.figures import (
    FIGURES_SCHEMA,
    Spec,
    distinct_keys,
    figure_spec,
    figures_of_batches,
    from_rows,
    history_figures,
    merge_all,
)
from migcheck.analysis.histories import HISTORY_SCHEMA
from migcheck.analysis.scan.driver import DriverFigures
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout

A = (KeyLayout.PLAIN, "murmur2")
B = (KeyLayout.PLAIN, "fnv1a")
#: (partition, key, n, bytes, bytes_sq, tombstoned, last_bytes, rank, windows, placement A, B)
ROWS = [
    (0, b"k1", 1, 10, 100.0, False, 10, 5, 0, 4, 4),  # A and B: p0, fits (4 % 2 = 0)
    (1, b"k2", 2, 30, 500.0, False, 20, 3, 0, 7, 2),  # A fits (7 % 2 = 1), B does not
    (0, b"k3", 3, 9, 27.0, True, 3, 9, 0, 5, 6),  # B fits, A does not; its last is a tombstone
    (1, None, 4, None, None, False, None, None, 0, None, None),  # four null-key records
]


def _table(rows: list[tuple] = ROWS, topic: str = "t") -> pa.Table:  # type: ignore[type-arg]
    names = [*HISTORY_SCHEMA.names[1:], "v_plain_murmur2", "v_plain_fnv1a"]
    columns = list(zip(*rows, strict=True))
    schema = pa.schema([*HISTORY_SCHEMA][1:] + [pa.field(n, pa.int64()) for n in names[-2:]])
    data = {
        name: pa.array(col, schema.field(name).type)
        for name, col in zip(names, columns, strict=True)
    }
    return pa.table({"topic": pa.array([topic] * len(rows), pa.string()), **data})


def _spec(compacted: bool = False, sample: int = 10) -> Spec:
    return Spec((A, B), (4,), sample, {"t": (2, compacted)})


def test_every_sum_of_a_delete_policy_topic() -> None:
    f = history_figures(_table(), _spec())["t"]
    assert f.scanned == {0: 4, 1: 6}
    assert {type(p) for p in f.scanned} == {int}  # numpy's integers are no JSON
    assert (f.null_keys, f.rows) == (4, 3)
    assert (f.freq, f.masks, f.spread) == ({}, {}, {})  # no sample's windows: no such figure
    assert f.scores == {A: [3, 2, 0], B: [3, 2, 0]}
    assert f.nonconforming == {A: [1, 3], B: [1, 2]}
    # state keys move from their partition to placement % 4
    assert f.cells[A, 4] == {(0, 0): [1, 1, 10, 100.0], (1, 3): [1, 2, 30, 500.0]}
    assert f.cells[B, 4] == {(0, 0): [1, 1, 10, 100.0], (0, 2): [1, 3, 9, 27.0]}
    assert f.lowest[A, 4] == [(3, b"k2", 1, 3)]
    assert f.lowest[B, 4] == [(9, b"k3", 0, 2)]
    assert f.either == {(A, B): 3}
    assert f.splits == {(A, B, 4): 2}  # k2 (3 against 2) and k3 (1 against 2)
    assert not f.unique_keys()  # neither placed every key


def test_a_compacted_topic_counts_live_state_once_per_key() -> None:
    f = history_figures(_table(), _spec(compacted=True))["t"]
    assert f.cells[A, 4] == {(0, 0): [1, 1, 10, 100.0], (1, 3): [1, 1, 20, 400.0]}
    assert f.cells[B, 4] == {(0, 0): [1, 1, 10, 100.0]}  # k3's last record is a tombstone
    assert f.lowest[B, 4] == []
    assert f.nonconforming == {A: [1, 3], B: [1, 2]}  # tombstoned or not


def test_two_halves_add_up_to_the_whole() -> None:
    whole = history_figures(_table(), _spec(sample=1))
    halves = [history_figures(_table(ROWS[:2]), _spec(sample=1)),
              history_figures(_table(ROWS[2:]), _spec(sample=1))]  # fmt: skip
    assert merge_all(halves, 1) == whole


def test_the_lowest_moved_keys_are_the_lowest_ranks_then_keys() -> None:
    rows = [(1, f"k{i}".encode(), 1, 5, 25.0, False, 5, 7 - i % 3, 0, 3, 3) for i in range(9)]
    f = history_figures(_table(rows), _spec(sample=4))["t"]
    assert [r[:2] for r in f.lowest[A, 4]] == [(5, b"k2"), (5, b"k5"), (5, b"k8"), (6, b"k1")]


def test_a_tasks_rows_are_its_keys_then_its_figures() -> None:
    batches = _table().to_batches(max_chunksize=2)
    rows = pa.Table.from_batches(list(figures_of_batches(batches, _spec(), keys=True)))
    assert rows.schema == FIGURES_SCHEMA
    assert rows.column("key").to_pylist() == [b"k1", b"k2", b"k3", None]
    blobs = [b for b in rows.column("figures").to_pylist() if b is not None]
    assert from_rows(blobs, 10) == history_figures(_table(), _spec())


def test_a_key_on_two_partitions_is_one_distinct_key() -> None:
    stray = (1, b"k1", 1, 10, 100.0, False, 10, 5, 0, 4, 4)  # k1 again, where 4 % 2 is not
    table = _table([*ROWS, stray])
    assert history_figures(table, _spec())["t"].rows == 4
    assert distinct_keys(table, ["t"]) == {"t": 3}


@pytest.mark.parametrize(("compacted", "records", "moved"), [(False, 3, 1), (True, 2, 1)])
def test_aggregate_reads_the_figures_of_the_driver(
    compacted: bool, records: int, moved: int
) -> None:
    meta = TopicMeta("t", "compact" if compacted else "delete", 2)
    spec = figure_spec([meta], [A], [4], 10)
    aggs, moved_keys = aggregate(DriverFigures(_table(), spec), "murmur2")
    t = aggs["t"]
    assert moved_keys is None  # the driver's figures keep no row per key
    assert (t.partitioner, t.null_keys, t.scanned) == ("murmur2", 4, {0: 4, 1: 6})
    assert (t.non_conforming_keys, t.non_conforming_records) == (1, 3)
    assert t.key_stats is not None and t.key_stats.distinct_keys == 3
    assert sum(c.records for c in t.cells) == records
    assert sum(c.keys for c in t.cells if c.moved) == moved
    assert [(s.key, s.partition, s.new, s.rank) for s in t.samples] == [(b"k2", 1, 3, 1)]


def test_a_samples_windowed_rows_give_read_counts_window_sets_and_spread() -> None:
    # windows: bit i for window i.  k1 read once (window 0); k2 twice, both in window 1;
    # k3 three times over windows 0 and 2; k4 twice over windows 1 and 2; p1's k5 twice,
    # read whole (windows 0: not a sample's windows, so in none of the three figures).
    rows = [
        (0, b"k1", 1, 10, 100.0, False, 10, 5, 0b001, 4, 4),
        (0, b"k2", 2, 10, 50.0, False, 5, 6, 0b010, 4, 4),
        (0, b"k3", 3, 9, 27.0, False, 3, 7, 0b101, 4, 4),
        (0, b"k4", 2, 10, 50.0, False, 5, 8, 0b110, 4, 4),
        (1, b"k5", 2, 10, 50.0, False, 5, 9, 0, 5, 5),
    ]
    f = history_figures(_table(rows), _spec())["t"]
    assert f.freq == {(0, 1): 1, (0, 2): 2, (0, 3): 1}
    assert f.masks == {0b001: 1, 0b010: 1, 0b101: 1, 0b110: 1}
    assert f.spread == {2: [2, 1], 3: [1, 0]}  # read twice: 2 keys, 1 in one window
