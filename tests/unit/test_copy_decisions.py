"""The copy's decisions without a broker: where null keys go, when a dead run's chunk
counts as committed, what a checkpoint may be.  tests/integration/test_copy.py runs
the same decisions against a real broker, with kills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from oracles import crc_partition, java_partition

from migcheck.copy.checkpoint import (
    Checkpoint,
    check_destination,
    load_checkpoint,
    read_progress,
    save_checkpoint,
)
from migcheck.copy.errors import CheckpointError, RecoveryError
from migcheck.copy.identity import digest
from migcheck.copy.placement import targets, unhashed_share
from migcheck.copy.task import check_placed_as_recorded, chunks, holds_in_order, settled
from migcheck.errors import UsageError

A, B, C, X = ["a", 1, "d1"], ["b", 2, "d2"], ["c", 3, "d3"], ["x", 9, "d9"]


def test_unhashed_shares_never_overlap_when_the_destination_is_wider() -> None:
    shares = [unhashed_share(p, 4, 10) for p in range(4)]
    assert shares == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]
    flat = [q for s in shares for q in s]
    assert sorted(flat) == list(range(10))  # every partition, each once


def test_a_narrower_destination_gives_each_task_one_shared_partition() -> None:
    assert [unhashed_share(p, 6, 4) for p in range(6)] == [[0], [1], [2], [3], [0], [1]]


def test_targets_hash_keys_and_round_robin_null_keys_from_the_saved_position() -> None:
    keys = [b"k1", None, b"k2", None, None]
    placed, rr, nulls = targets(keys, "murmur2", [1, 5, 9], 12, rr=1)
    assert placed == [java_partition(b"k1", 12), 5, java_partition(b"k2", 12), 9, 1]
    assert (rr, nulls) == (4, 3)
    crc, _, _ = targets([b"k1"], "consistent", [0], 12, rr=0)
    assert crc == [crc_partition(b"k1", 12)]


def test_a_chunk_is_committed_only_if_all_of_it_appears_in_order() -> None:
    wanted = [A, B, C]
    assert holds_in_order([X, A, X, B, C], wanted)  # other records in between
    assert not holds_in_order([A, C, B], wanted)  # out of order: not this chunk
    assert not holds_in_order([A, B], wanted)  # the transaction was aborted midway
    assert not holds_in_order([], wanted)


def test_settling_moves_past_a_committed_chunk_or_back_to_its_start() -> None:
    pending = {"from": 100, "to": 150, "ends": {"3": 7}}
    assert settled(pending, rr=4, next_rr=9, committed=True) == {
        "next": 150,
        "round_robin": 9,
        "pending": None,
    }
    assert settled(pending, rr=4, next_rr=9, committed=False) == {
        "next": 100,
        "round_robin": 4,
        "pending": None,
    }


def test_a_chunk_placed_where_the_dead_run_recorded_nothing_is_refused() -> None:
    check_placed_as_recorded("p.json", [3, 5], {"3": 10, "5": 0})
    with pytest.raises(RecoveryError, match="placed otherwise than this migcheck places it"):
        check_placed_as_recorded("p.json", [3, 6], {"3": 10, "5": 0})


def test_chunks_split_a_partition_into_transactions() -> None:
    assert [len(c) for c in chunks(range(12), 5)] == [5, 5, 2]
    assert list(chunks([], 5)) == []


def test_digest_tells_a_null_value_from_an_empty_one_and_headers_apart() -> None:
    assert digest(None, None) != digest(b"", None)
    assert digest(b"v", [("h", b"1")]) != digest(b"v", [("h1", b"")])
    assert digest(b"v", [("h", None)]) == digest(b"v", [("h", b"")])


def test_a_checkpoint_round_trips_and_pins_the_pair(tmp_path: Path) -> None:
    path = str(tmp_path / "copy.json")
    assert load_checkpoint(path, "t", "u") is None  # no earlier run
    save_checkpoint(path, "t", "u", "murmur2", 12, {1: 50, 0: 7})
    assert json.loads(Path(path).read_text())["next"] == {"0": 7, "1": 50}
    assert load_checkpoint(path, "t", "u") == Checkpoint({0: 7, 1: 50}, "murmur2", 12)
    with pytest.raises(CheckpointError, match="records a copy of t into u, not of t into v"):
        load_checkpoint(path, "t", "v")
    assert issubclass(CheckpointError, UsageError)  # one line, exit 2


@pytest.mark.parametrize(
    "text",
    ['{"topic": "t"}', "not json", '{"topic": "t", "into": "u", "next": {"0": "x"}}', "[]"],
)
def test_a_damaged_checkpoint_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "copy.json"
    path.write_text(text)
    with pytest.raises(CheckpointError, match="not a migcheck copy checkpoint"):
        load_checkpoint(str(path), "t", "u")


def test_an_unknown_partitioner_in_a_checkpoint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "copy.json"
    path.write_text(json.dumps({"topic": "t", "into": "u", "next": {}, "partitioner": "md5"}))
    with pytest.raises(CheckpointError, match="unknown partitioner 'md5'"):
        load_checkpoint(str(path), "t", "u")


def test_a_destination_whose_count_changed_since_the_checkpoint_is_refused() -> None:
    saved = Checkpoint({0: 1}, "murmur2", 12)
    check_destination("c.json", saved, "u", 12)
    check_destination("c.json", Checkpoint({}, None, None), "u", 16)  # an old checkpoint
    with pytest.raises(CheckpointError, match="copied into 12 partitions and u now has 16"):
        check_destination("c.json", saved, "u", 16)


def test_a_missing_progress_file_is_a_fresh_start(tmp_path: Path) -> None:
    assert read_progress(str(tmp_path / "0.json")) == {}
