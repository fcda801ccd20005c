"""The copy's decisions without a broker: where null keys go, which chunks a round copies,
what the driver records before and after it, how a killed run's round is resumed, when
a chunk counts as committed, what a checkpoint may be.  tests/integration/test_copy.py
runs the same decisions against a real broker, with kills."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from oracles import crc_partition, java_partition

from migcheck.analysis.aggregate import KeyStats
from migcheck.analysis.verdicts import PartitionerScore
from migcheck.copy.checkpoint import (
    Checkpoint,
    Chunk,
    Round,
    check_destination,
    load_checkpoint,
    save_checkpoint,
)
from migcheck.copy.errors import CheckpointError, PlacementError, RecoveryError
from migcheck.copy.identity import digest
from migcheck.copy.placement import placed_every_key, targets, unhashed_share
from migcheck.copy.rounds import (
    ChunkResult,
    RoundIO,
    copied_this_run,
    pick_chunks,
    run_rounds,
    settled,
    starting_state,
    with_round,
)
from migcheck.copy.task import (
    ChunkJob,
    CopySpec,
    _may_have_run,
    check_placed_as_recorded,
    chunk_jobs,
    holds_in_order,
    shares,
    wanted_by_partition,
    written_since,
)
from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout

A, B, C, X = ["a", 1, "d1"], ["b", 2, "d2"], ["c", 3, "d3"], ["x", 9, "d9"]


# --- placement ------------------------------------------------------------------------


def test_unhashed_shares_never_overlap_when_the_destination_is_wider() -> None:
    shares = [unhashed_share(p, 4, 10) for p in range(4)]
    assert shares == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]
    flat = [q for s in shares for q in s]
    assert sorted(flat) == list(range(10))  # every partition, each once


def test_a_narrower_destination_gives_each_task_one_shared_partition() -> None:
    assert [unhashed_share(p, 6, 4) for p in range(6)] == [[0], [1], [2], [3], [0], [1]]


def test_targets_hash_keys_and_round_robin_null_keys_from_the_saved_position() -> None:
    keys = [b"k1", None, b"k2", None, None]
    want = [java_partition(b"k1", 12), 5, java_partition(b"k2", 12), 9, 1]
    assert targets(keys, "murmur2", [1, 5, 9], 12, rr=1) == (want, 4, 3)
    # as a chunk's keys come: an Arrow array over the decoded columns' buffers
    assert targets(pa.array(keys, pa.binary()), "murmur2", [1, 5, 9], 12, rr=1) == (want, 4, 3)
    crc, _, _ = targets([b"k1"], "consistent", [0], 12, rr=0)
    assert crc == [crc_partition(b"k1", 12)]


def _tied(splits: dict[int, int]) -> KeyStats:
    """Keys that FNV-1a masked and unsigned both placed (a power-of-two count), CRC-32 not,
    with the keys the two would place apart at the destination's count."""
    fits, misses = PartitionerScore(40, 40, 0), PartitionerScore(40, 31, 0)
    scores = {"consistent_random": misses, "sarama-reference": fits, "franz-sarama-fnv1a": fits}
    return KeyStats(40, {KeyLayout.PLAIN: scores}, splits=splits)


def test_a_tie_that_places_every_key_alike_at_the_destination_is_copied() -> None:
    source = TopicMeta("t", "delete", 4)
    assert placed_every_key(source, _tied({8: 0}), None) == "sarama-reference"


def test_a_tie_that_places_keys_apart_at_the_destination_is_refused_in_one_line() -> None:
    with pytest.raises(PlacementError) as e:
        placed_every_key(TopicMeta("t", "delete", 4), _tied({6: 17}), None)
    message = str(e.value)
    assert "sarama-reference and franz-sarama-fnv1a" in message and "17 keys" in message
    assert "at 6 partitions" in message and "--partitioner" in message
    assert "\n" not in message


def test_a_one_partition_source_is_refused_as_one_partition() -> None:
    with pytest.raises(PlacementError) as e:
        placed_every_key(TopicMeta("t", "delete", 1), _tied({6: 17}), None)
    assert "t has one partition" in str(e.value) and "--partitioner" in str(e.value)


# --- picking a round's chunks -----------------------------------------------------------


def test_each_unfinished_partition_gets_its_next_offset_range() -> None:
    nexts = {0: 0, 1: 95, 2: 40, 3: 7}
    ends = {0: 250, 1: 100, 2: 40, 3: 7, 4: 3}  # 2 and 3 are done; 4 was never copied
    assert pick_chunks(nexts, ends, 100) == {
        0: Chunk(0, 100),
        1: Chunk(95, 100),  # the last chunk is shorter
        4: Chunk(0, 3),
    }
    assert pick_chunks({0: 250, 1: 100}, {0: 250, 1: 100}, 100) == {}  # the copy is done


def test_a_cut_ends_each_chunk_where_it_says_within_its_target() -> None:
    def cut(partition: int, start: int) -> int:
        return start + 30 * (partition + 1)

    assert pick_chunks({0: 0, 1: 10}, {0: 250, 1: 40}, 100, cut) == {
        0: Chunk(0, 30),
        1: Chunk(10, 40),  # 10 + 60, within the target
    }


def test_a_run_starts_where_the_checkpoint_left_off_and_never_before_the_log() -> None:
    saved = Checkpoint({0: 10, 1: 500}, None, None, {0: 3})
    state = starting_state(saved, "murmur2", 12, {0: 40, 1: 0, 2: 5})
    assert state.next == {0: 40, 1: 500, 2: 5}  # 0: retention passed the checkpoint
    assert (state.partitioner, state.partitions, state.round_robin) == ("murmur2", 12, {0: 3})
    fresh = starting_state(None, "consistent", 6, {0: 0, 1: 2})
    assert fresh == Checkpoint({0: 0, 1: 2}, "consistent", 6, {}, None)


# --- recording a round, and settling it -------------------------------------------------


def test_a_round_is_recorded_with_its_chunks_positions_and_every_destination_end(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "copy.json")
    state = Checkpoint({0: 100, 1: 0}, "murmur2", 3, {0: 7})
    pending = with_round(state, {0: Chunk(100, 200), 1: Chunk(0, 50)}, {0: 11, 1: 0, 2: 4})
    save_checkpoint(path, "t", "u", pending)
    data = json.loads(Path(path).read_text())
    assert data["pending"] == {
        "chunks": {"0": {"from": 100, "to": 200}, "1": {"from": 0, "to": 50}},
        "ends": {"0": 11, "1": 0, "2": 4},
    }
    assert (data["next"], data["round_robin"]) == ({"0": 100, "1": 0}, {"0": 7})
    assert load_checkpoint(path, "t", "u") == pending


def test_settling_a_round_moves_every_partition_past_its_chunk() -> None:
    state = Checkpoint({0: 100, 1: 0, 2: 9}, "murmur2", 3, {0: 7})
    state = with_round(state, {0: Chunk(100, 200), 1: Chunk(0, 50)}, {0: 11, 1: 0, 2: 4})
    results = [ChunkResult(1, 48, 2, 3, False), ChunkResult(0, 100, 0, 7, True)]
    assert settled(state, results) == Checkpoint(
        {0: 200, 1: 50, 2: 9}, "murmur2", 3, {0: 7, 1: 3}, None
    )
    with pytest.raises(ValueError, match=r"partitions \[0, 1\] returned \[0\]"):
        settled(state, results[1:])


def test_a_chunk_found_committed_counts_for_the_run_that_wrote_it() -> None:
    found = ChunkResult(0, 100, 4, 9, committed=True)
    assert copied_this_run(found, resumed=False) == (100, 4)  # a Spark retry: this run wrote it
    assert copied_this_run(found, resumed=True) == (0, 0)  # the killed run wrote it
    assert copied_this_run(found._replace(committed=False), resumed=True) == (100, 4)


class _Driver:
    """The driver's I/O, faked: a destination whose ends grow, a launch that copies every
    chunk (or dies at a given round), the chunks of ``held`` partitions taken from the
    detection's read, and a checkpoint kept as the last saved state."""

    def __init__(
        self,
        die_at: int | None = None,
        committed: frozenset[int] = frozenset(),
        held: frozenset[int] = frozenset(),
    ):
        self.saved: list[Checkpoint] = []
        self.launched: list[Checkpoint] = []
        self.die_at, self.committed, self.held, self.end = die_at, committed, held, 0

    def io(self) -> RoundIO:
        return RoundIO(ends=self.ends, launch=self.launch, save=self.saved.append)

    def ends(self) -> dict[int, int]:
        self.end += 10
        return {0: self.end, 1: self.end, 2: self.end}

    def launch(self, state: Checkpoint, resumed: bool) -> list[ChunkResult]:
        assert self.saved and self.saved[-1] == state  # recorded before it was launched
        # only a round in flight at the start (a killed run's) is resumed
        assert resumed == (not self.launched and self.saved[0].pending is not None)
        self.launched.append(state)
        if len(self.launched) == self.die_at:
            raise KeyboardInterrupt("killed")
        assert state.pending is not None
        return [self._result(state, p, c) for p, c in state.pending.chunks.items()]

    def _result(self, state: Checkpoint, p: int, c: Chunk) -> ChunkResult:
        rr = state.round_robin.get(p, p) + 1
        return ChunkResult(p, c.end - c.start, 1, rr, p in self.committed, held=p in self.held)


def test_rounds_copy_each_partition_chunk_by_chunk_up_to_its_end() -> None:
    driver = _Driver(held=frozenset({0}))
    start = Checkpoint({0: 0, 1: 20}, "murmur2", 3)
    final, copied = run_rounds(start, {0: 250, 1: 120}, driver.io(), size=100)
    rounds = [s.pending.chunks for s in driver.launched if s.pending]
    assert rounds == [
        {0: Chunk(0, 100), 1: Chunk(20, 120)},
        {0: Chunk(100, 200)},
        {0: Chunk(200, 250)},
    ]
    assert [s.pending.ends for s in driver.launched if s.pending] == [
        {0: 10, 1: 10, 2: 10},
        {0: 20, 1: 20, 2: 20},
        {0: 30, 1: 30, 2: 30},
    ]
    assert final == Checkpoint({0: 250, 1: 120}, "murmur2", 3, {0: 3, 1: 2}, None)
    assert driver.saved[-1] == final
    assert copied == {0: (250, 3, 250), 1: (100, 1, 0)}  # partition 0's read once


def test_a_killed_drivers_round_is_resumed_as_recorded_before_any_new_one(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "copy.json")
    dead = _Driver(die_at=2)
    start = Checkpoint({0: 0, 1: 0}, "murmur2", 3)
    with pytest.raises(KeyboardInterrupt):
        run_rounds(start, {0: 250, 1: 150}, dead.io(), size=100)
    save_checkpoint(path, "t", "u", dead.saved[-1])  # what the killed driver left on disk
    in_flight = dead.launched[-1]

    saved = load_checkpoint(path, "t", "u")
    assert saved == in_flight  # the round, its positions and its ends, as launched
    state = starting_state(saved, "murmur2", 3, {0: 0, 1: 0})
    again = _Driver(committed=frozenset({1}))  # partition 1's chunk had committed
    final, copied = run_rounds(state, {0: 250, 1: 150}, again.io(), size=100)
    assert again.launched[0] == in_flight  # the very same round first
    assert [s.pending.chunks for s in again.launched[1:] if s.pending] == [{0: Chunk(200, 250)}]
    assert final.next == {0: 250, 1: 150} and final.pending is None
    assert copied == {0: (150, 2, 0), 1: (0, 0, 0)}  # partition 1's last chunk was the dead run's


def test_a_resumed_round_gives_each_task_its_recorded_chunk_position_and_ends() -> None:
    spec = CopySpec(ClientConfig("b:9092"), "t", "u", "murmur2", 2, 4)
    state = Checkpoint(
        {0: 100, 1: 40},
        "murmur2",
        4,
        {0: 6},
        Round({0: Chunk(100, 150), 1: Chunk(40, 90)}, {0: 5, 1: 0, 2: 7, 3: 1}),
    )
    ends = {0: 5, 1: 0, 2: 7, 3: 1}
    assert chunk_jobs(spec, state) == [
        ChunkJob(spec, 0, Chunk(100, 150), 6, ends),
        ChunkJob(spec, 1, Chunk(40, 90), 1, ends),  # no position yet: its own partition
    ]
    assert chunk_jobs(spec, Checkpoint({0: 100}, "murmur2", 4)) == []
    fresh = chunk_jobs(spec, state, resumed=False)
    assert [j.resumed for j in fresh] == [False, False]
    # outside a Spark task nothing says it is a first attempt: the chunk is checked
    assert _may_have_run(fresh[0])


def test_a_rounds_chunks_are_shared_out_over_the_tasks_by_records() -> None:
    spec = CopySpec(ClientConfig("b:9092"), "t", "u", "murmur2", 5, 8)
    sizes = {0: 50, 1: 50, 2: 50, 3: 10, 4: 40}
    jobs = [ChunkJob(spec, p, Chunk(1000, 1000 + n), 0, {}) for p, n in sizes.items()]
    # largest first, each to the task with the fewest records so far: 50 | 50, then the
    # third 50 to the first task (ties go to the first), 40 and 10 to the second: 100 | 100
    got = [[j.partition for j in share] for share in shares(jobs, 2)]
    assert got == [[0, 2], [1, 3, 4]]
    assert [[j.partition for j in share] for share in shares(jobs[:3], 8)] == [[0], [1], [2]]
    assert shares([], 2) == []
    # 200 offsets of at most 60 a task on two cores: 2 * ceil(200 / 120) = 4 tasks
    assert [[j.partition for j in s] for s in shares(jobs, 2, most=60)] == [[0], [1], [2], [3, 4]]


# --- settling a chunk in its task -------------------------------------------------------


def test_a_chunk_is_committed_only_if_all_of_it_appears_in_order() -> None:
    wanted = [A, B, C]
    assert holds_in_order([X, A, X, B, C], wanted)  # other records in between
    assert not holds_in_order([A, C, B], wanted)  # out of order: not this chunk
    assert not holds_in_order([A, B], wanted)  # the transaction was aborted midway
    assert not holds_in_order([], wanted)


def test_a_partition_that_did_not_grow_since_the_round_began_holds_nothing_of_it() -> None:
    ends = {0: 10, 1: 4, 2: 0}
    assert written_since({0, 1}, ends, {0: 12, 1: 5, 2: 0})
    assert not written_since({0, 1}, ends, {0: 12, 1: 4, 2: 0})  # 1 got nothing
    assert written_since(set(), ends, {})  # vacuous: an empty chunk is never looked for


def test_a_chunks_identities_are_grouped_by_where_they_were_placed() -> None:
    records = [
        SimpleNamespace(key=b"k", timestamp=5, value=b"v", headers=[("h", b"1")]),
        SimpleNamespace(key=None, timestamp=6, value=None, headers=None),
        SimpleNamespace(key=b"j", timestamp=7, value=b"w", headers=[]),
    ]
    wanted = wanted_by_partition(records, [2, 0, 2])
    assert list(wanted) == [2, 0]
    assert wanted[2] == [["6b", 5, digest(b"v", [("h", b"1")])], ["6a", 7, digest(b"w", [])]]
    assert wanted[0] == [[None, 6, digest(None, None)]]


def test_a_chunk_placed_where_the_round_recorded_no_end_is_refused() -> None:
    check_placed_as_recorded("t-0 offsets 0-9", [3, 5], {3: 10, 5: 0})
    with pytest.raises(RecoveryError, match="placed otherwise than this migcheck places it"):
        check_placed_as_recorded("t-0 offsets 0-9", [3, 6], {3: 10, 5: 0})


def test_digest_tells_a_null_value_from_an_empty_one_and_headers_apart() -> None:
    assert digest(None, None) != digest(b"", None)
    assert digest(b"v", [("h", b"1")]) != digest(b"v", [("h1", b"")])
    assert digest(b"v", [("h", None)]) == digest(b"v", [("h", b"")])


# --- the checkpoint -----------------------------------------------------------------------


def test_a_checkpoint_round_trips_and_pins_the_pair(tmp_path: Path) -> None:
    path = str(tmp_path / "copy.json")
    assert load_checkpoint(path, "t", "u") is None  # no earlier run
    save_checkpoint(path, "t", "u", Checkpoint({1: 50, 0: 7}, "murmur2", 12, {1: 3}))
    data = json.loads(Path(path).read_text())
    assert (data["next"], data["round_robin"], data["pending"]) == (
        {"0": 7, "1": 50},
        {"1": 3},
        None,
    )
    assert load_checkpoint(path, "t", "u") == Checkpoint({0: 7, 1: 50}, "murmur2", 12, {1: 3})
    with pytest.raises(CheckpointError, match="records a copy of t into u, not of t into v"):
        load_checkpoint(path, "t", "v")
    assert issubclass(CheckpointError, UsageError)  # one line, exit 2


def test_a_checkpoint_from_before_the_rounds_still_works(tmp_path: Path) -> None:
    path = tmp_path / "copy.json"
    old = {"topic": "t", "into": "u", "partitioner": "murmur2", "partitions": 6, "next": {"0": 7}}
    path.write_text(json.dumps(old))
    assert load_checkpoint(str(path), "t", "u") == Checkpoint({0: 7}, "murmur2", 6, {}, None)
    # its progress files, where the driver could see them, are taken over...
    parts = tmp_path / "copy.json.parts"
    parts.mkdir()
    (parts / "0.json").write_text(json.dumps({"next": 90, "round_robin": 4, "pending": None}))
    (parts / "1.json").write_text(json.dumps({"next": 30, "round_robin": 2, "pending": None}))
    assert load_checkpoint(str(path), "t", "u") == Checkpoint(
        {0: 90, 1: 30}, "murmur2", 6, {0: 4, 1: 2}, None
    )
    # ...but a chunk they left pending is not settled by a version that records it otherwise
    pending = {"from": 90, "to": 95, "ends": {"2": 10}}
    (parts / "1.json").write_text(json.dumps({"next": 90, "round_robin": 2, "pending": pending}))
    with pytest.raises(CheckpointError, match="interrupted inside a chunk"):
        load_checkpoint(str(path), "t", "u")


@pytest.mark.parametrize(
    "text",
    [
        '{"topic": "t"}',
        "not json",
        '{"topic": "t", "into": "u", "next": {"0": "x"}}',
        "[]",
        '{"topic": "t", "into": "u", "next": {}, "pending": {"chunks": {"0": {}}, "ends": {}}}',
    ],
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
