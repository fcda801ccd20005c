"""The pure pieces after Spark: report entries, verdicts, the gate and the partitioner choice.

No Kafka, no Spark: the aggregates are written out by hand, and every expected
figure is worked out by hand in the comments beside it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from migcheck.analysis.aggregate import (
    Cell,
    KeyStats,
    SampledKey,
    SampleFigures,
    TopicAggregates,
)
from migcheck.analysis.entries import key_for_people, topic_entry
from migcheck.analysis.errors import spark_error_message
from migcheck.analysis.verdicts import (
    GateRules,
    PartitionerScore,
    choose_partitioner,
    choose_placement,
    gate,
    placing,
)
from migcheck.commands.analyze import AnalyzeOptions, exit_code, validate
from migcheck.commands.options import Connection
from migcheck.errors import UsageError
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.model.analyze import KeyLayout, Level, State

PLAIN, WINDOW, SESSION = KeyLayout.PLAIN, KeyLayout.WINDOW, KeyLayout.SESSION
SCORES = {
    "murmur2": PartitionerScore(hashed=3, conforming=3, unhashed_records=0),
    "consistent_random": PartitionerScore(hashed=3, conforming=1, unhashed_records=2),
    "fnv1a": PartitionerScore(hashed=3, conforming=0, unhashed_records=0),
}


def _orders() -> tuple[TopicMeta, TopicAggregates]:
    """2 partitions, 8 records (1 null key), keys a, b, c; at 4 partitions b and c move."""
    meta = TopicMeta("orders", "delete", 2, (PartitionMeta(0, 0, 5), PartitionMeta(1, 0, 3)))
    agg = TopicAggregates(
        scanned={0: 5, 1: 3},
        null_keys=1,
        key_stats=KeyStats(distinct_keys=3, scores={PLAIN: SCORES}),
        partitioner="murmur2",
        cells=(
            Cell(m=4, partition=0, new=0, keys=1, records=2, bytes=20, bytes_sq=200.0),  # a
            Cell(m=4, partition=0, new=2, keys=1, records=2, bytes=30, bytes_sq=450.0),  # b
            Cell(m=4, partition=1, new=3, keys=1, records=3, bytes=60, bytes_sq=1200.0),  # c
        ),
        samples=(
            SampledKey(m=4, key=b"c", partition=1, new=3, rank=2),
            SampledKey(m=4, key=b"b", partition=0, new=2, rank=1),
        ),
    )
    return meta, agg


def test_full_scan_entry_has_exact_figures() -> None:
    meta, agg = _orders()
    t = topic_entry(meta, [4], agg, forced=False, sample_per_partition=None)
    assert (t["records_total"], t["records_scanned"], t["null_key_records"]) == (8, 8, 1)
    assert t["conformance"] == 1.0
    assert t["conformance_by_partitioner"] == {
        "murmur2": 1.0,
        "consistent_random": pytest.approx(1 / 3),
        "fnv1a": 0.0,
    }
    assert t["unhashed_records"] == 0  # murmur2's, not consistent_random's 2
    assert (t["state"], t["state_records"], t["state_bytes"]) == (State.LOG, 7, 110)
    assert t["distinct_keys_interval"] is None and t["sampled"] is False
    assert [p["records_scanned"] for p in t["partitions"]] == [5, 3]
    (c,) = t["candidates"]
    assert (c["moved_keys"], c["moved_records"], c["moved_bytes"]) == (2, 5, 90)
    assert c["moved_fraction"] == pytest.approx(2 / 3)
    assert c["expected_moved_fraction"] == 0.5  # 1 - min(2, 4) / lcm(2, 4)
    assert c["matrix"] == [[1, 0, 1, 0], [0, 0, 0, 1]]
    assert c["flows"] == [[0, 0, 1], [0, 2, 1], [1, 3, 1]]
    assert [(p["keys"], p["bytes"]) for p in c["load"]] == [(1, 20), (0, 0), (1, 30), (1, 60)]
    assert c["skew"] == pytest.approx(4 / 3)  # max 1 over mean 3/4
    assert [k["key"] for k in c["moved_key_sample"]] == ["b", "c"]  # by rank
    assert c["moved_keys_interval"] is None
    assert t["verdict"]["level"] == Level.MOVES
    assert "moves 66.7% of keys (2) and 90 bytes of keyed records" in t["verdict"]["text"]


def test_sampled_compacted_entry_scales_keys_and_carries_intervals() -> None:
    # 100 offsets, 10 read (5 windows of 1 offset per partition): 10 keys each seen once.
    # Every key read once in a tenth of the log: about 10 / 0.1 = 100 keys; certain
    # bounds 10 .. 10 + 90 unread.  Keys scale x10.
    meta = TopicMeta(
        "counts-changelog", "compact", 2, (PartitionMeta(0, 0, 50), PartitionMeta(1, 0, 50))
    )
    sample = SampleFigures(freq={(0, 1): 5, (1, 1): 5})
    agg = TopicAggregates(
        scanned={0: 5, 1: 5},
        key_stats=KeyStats(10, {PLAIN: {"murmur2": PartitionerScore(10, 10, 0)}}, sample=sample),
        partitioner="murmur2",
        cells=(
            Cell(4, 0, 0, 2, 2, 200, 0.0),
            Cell(4, 1, 1, 2, 2, 200, 0.0),
            Cell(4, 0, 2, 3, 3, 300, 0.0),
            Cell(4, 1, 3, 3, 3, 600, 0.0),
        ),
    )
    t = topic_entry(meta, [4], agg, forced=False, sample_per_partition=5)
    assert t["sampled"] is True and t["state"] == State.LIVE
    assert t["distinct_keys"] == 100 and t["distinct_keys_bounds"] == [10, 100]
    lo, hi = t["distinct_keys_interval"]
    assert 10 < lo < 100 == hi  # no interval reaches past the certain bound
    assert t["sample_assumption"] and t["sample_assumption"]["holds"] is True
    assert (t["state_records"], t["state_bytes"]) == (100, 13_000)  # 10 and 1,300 x10
    (c,) = t["candidates"]
    assert c["moved_fraction"] == pytest.approx(0.6)  # 6 of 10 seen keys move
    lo, hi = c["moved_fraction_interval"]
    assert (lo, hi) == pytest.approx((0.3127, 0.8318), abs=1e-4)  # Wilson 95% for 6/10
    assert c["moved_keys"] == 60
    assert c["moved_keys_bounds"] == [6, 96]  # every unread record a new key, moved or not
    k_lo, k_hi = c["moved_keys_interval"]
    assert 6 < k_lo < 60 < k_hi <= 96
    assert c["moved_records"] == 60  # live: one record per key
    assert c["moved_bytes"] == 9000  # 60 keys x the mean moved size 900 / 6
    assert c["matrix"] == [[20, 0, 30, 0], [0, 20, 0, 30]]
    assert c["flows"] == [[0, 0, 20], [0, 2, 30], [1, 1, 20], [1, 3, 30]]
    assert c["skew"] == pytest.approx(1.2)  # 30 over the mean 25
    assert "~60.0% of keys (~60) and ~9,000 bytes of live state" in t["verdict"]["text"]


def test_unpredictable_topic_has_no_candidates_and_names_the_best_guess() -> None:
    meta, agg = _orders()
    scores = {"murmur2": PartitionerScore(10, 4, 0), "fnv1a": PartitionerScore(10, 2, 0)}
    stats = KeyStats(10, {PLAIN: scores})
    agg = TopicAggregates(scanned={0: 5, 1: 3}, key_stats=stats, partitioner=None)
    t = topic_entry(meta, [4, 8], agg, forced=False, sample_per_partition=None)
    assert t["predictable"] is False and t["candidates"] == []
    assert t["conformance"] == pytest.approx(0.4)  # the best scored
    assert t["verdict"]["level"] == Level.UNPREDICTABLE
    assert "(best: murmur2 at 40.0% conformance)" in t["verdict"]["text"]
    assert (t["state_records"], t["state_bytes"]) == (0, 0)


def test_topic_without_keyed_records_is_empty_not_unpredictable() -> None:
    meta = TopicMeta("nulls", "delete", 3, (PartitionMeta(0, 0, 4),))
    agg = TopicAggregates(scanned={0: 4}, null_keys=4)
    t = topic_entry(meta, [6], agg, forced=False, sample_per_partition=None)
    assert t["predictable"] is True and t["partitioner"] is None
    assert t["verdict"]["level"] == Level.EMPTY
    (c,) = t["candidates"]
    assert c["matrix"] == [[0] * 6] * 3 and c["moved_keys"] == 0 and c["skew"] == 0.0
    assert c["flows"] == []


def test_nothing_moves_is_safe() -> None:
    meta = TopicMeta("t", "delete", 2, (PartitionMeta(0, 0, 1), PartitionMeta(1, 0, 1)))
    agg = TopicAggregates(
        scanned={0: 1, 1: 1},
        key_stats=KeyStats(2, {PLAIN: {"murmur2": PartitionerScore(2, 2, 0)}}),
        partitioner="murmur2",
        cells=(Cell(4, 0, 0, 1, 1, 5, 25.0), Cell(4, 1, 1, 1, 1, 5, 25.0)),
    )
    t = topic_entry(meta, [4], agg, forced=True, sample_per_partition=None)
    assert t["verdict"] == {"level": Level.SAFE, "text": "SAFE: no key changes partition."}
    assert t["partitioner_forced"] is True


def test_choose_partitioner() -> None:
    assert choose_partitioner("auto", SCORES) == "murmur2"
    only_crc = {
        "murmur2": PartitionerScore(5, 4, 0),
        "consistent_random": PartitionerScore(5, 5, 1),
    }
    assert choose_partitioner("auto", only_crc) == "consistent_random"
    # a partitioner that hashed nothing explains nothing
    assert choose_partitioner("auto", {"fnv1a": PartitionerScore(0, 0, 7)}) is None
    assert choose_partitioner("auto", {"murmur2": PartitionerScore(5, 4, 0)}) is None
    assert choose_partitioner("auto", None) is None
    assert choose_partitioner("fnv1a", only_crc) == "fnv1a"  # forced: as given
    assert choose_partitioner("fnv1a", None) == "fnv1a"


def _score(conformance: float) -> PartitionerScore:
    return PartitionerScore(100, round(100 * conformance), 0)


def test_choose_placement_takes_the_first_layout_that_places_every_key() -> None:
    window_fits = {
        PLAIN: {"murmur2": _score(0.34), "fnv1a": _score(0.33)},
        WINDOW: {"murmur2": _score(0.3), "fnv1a": _score(1.0)},
        SESSION: {"murmur2": _score(1.0), "fnv1a": _score(0.3)},  # fits too, but later
    }
    assert choose_placement("auto", window_fits) == ("fnv1a", WINDOW)
    both = {PLAIN: {"murmur2": _score(1.0)}, WINDOW: {"murmur2": _score(1.0)}}
    assert choose_placement("auto", both) == ("murmur2", PLAIN)  # plain is preferred
    # forced: the partitioner as given, the layout still detected
    assert choose_placement("murmur2", window_fits) == ("murmur2", SESSION)
    assert choose_placement("murmur2", None) == ("murmur2", PLAIN)
    assert choose_placement("auto", None) == (None, PLAIN)


def test_placing_names_the_partitioner_that_placed_one_layout() -> None:
    """analyze scores a later key layout only where this is None for the first."""
    plain = {"murmur2": _score(0.9), "fnv1a": _score(1.0), "crc32": _score(1.0)}
    assert placing("auto", plain) == "fnv1a"  # the first that placed every key
    assert placing("crc32", plain) == "crc32"
    assert placing("murmur2", plain) is None  # forced, and it did not place them
    assert placing("sarama", plain) is None  # forced, and not scored
    assert placing("auto", {"murmur2": _score(0.9)}) is None
    assert placing("auto", {"fnv1a": PartitionerScore(0, 0, 7)}) is None  # hashed nothing


def test_choose_placement_without_a_fit_reports_the_best_layout() -> None:
    # a key shorter than the suffix is not hashed: a layout that hashed nothing is no fit
    none_fit = {
        PLAIN: {"murmur2": _score(0.5)},
        WINDOW: {"murmur2": _score(0.9)},
        SESSION: {"murmur2": PartitionerScore(0, 0, 40)},
    }
    assert choose_placement("auto", none_fit) == (None, WINDOW)
    assert choose_placement("murmur2", none_fit) == ("murmur2", WINDOW)
    tie = {PLAIN: {"murmur2": _score(0.5)}, SESSION: {"murmur2": _score(0.5)}}
    assert choose_placement("auto", tie) == (None, PLAIN)


def _window_key(inner: bytes, start: int, seqnum: int = 0) -> bytes:
    return inner + start.to_bytes(8, "big") + seqnum.to_bytes(4, "big")


def test_window_layout_entry_names_its_layout_and_shows_inner_keys() -> None:
    meta = TopicMeta("app-wcounts-changelog", "compact", 2, (PartitionMeta(0, 0, 2),))
    key = _window_key(b"k7", 1_700_000_100_000, 3)
    agg = TopicAggregates(
        scanned={0: 2},
        key_stats=KeyStats(
            2,
            {
                PLAIN: {"murmur2": PartitionerScore(2, 1, 0)},
                WINDOW: {"murmur2": PartitionerScore(2, 2, 0)},
            },
        ),
        partitioner="murmur2",
        key_layout=WINDOW,
        layouts=(PLAIN, WINDOW),
        cells=(Cell(4, 0, 0, 1, 1, 30, 900.0), Cell(4, 0, 2, 1, 1, 30, 900.0)),
        samples=(SampledKey(m=4, key=key, partition=0, new=2, rank=1),),
    )
    t = topic_entry(meta, [4], agg, forced=False, sample_per_partition=None)
    assert t["key_layout"] == WINDOW
    assert t["conformance_by_partitioner"] == {"murmur2": 1.0}  # under the window layout
    (moved,) = t["candidates"][0]["moved_key_sample"]
    assert moved["key"] == "k7@1700000100000"
    assert moved["key_hex"] == key.hex()  # the whole changelog key


def test_key_layout_is_written_only_when_layouts_were_detected() -> None:
    meta, agg = _orders()
    assert "key_layout" not in topic_entry(meta, [4], agg, False, None)
    t = topic_entry(meta, [4], replace(agg, layouts=(PLAIN, SESSION)), False, None)
    assert t["key_layout"] == PLAIN


def test_unpredictable_verdict_names_a_layout_other_than_plain() -> None:
    meta, agg = _orders()
    stats = KeyStats(10, {PLAIN: {}, SESSION: {"murmur2": PartitionerScore(10, 9, 0)}})
    agg = TopicAggregates(
        scanned={0: 5}, key_stats=stats, key_layout=SESSION, layouts=(PLAIN, SESSION)
    )
    t = topic_entry(meta, [4], agg, forced=False, sample_per_partition=None)
    assert "(best: murmur2 at 90.0% conformance on session keys)" in t["verdict"]["text"]


def test_key_for_people() -> None:
    # SessionKeySchema: [key][8-byte end][8-byte start]
    session = b"user-1" + (2_000).to_bytes(8, "big") + (1_000).to_bytes(8, "big")
    assert key_for_people(session, SESSION) == "user-1@1000..2000"
    assert key_for_people(_window_key(b"\x00\xff", 5), WINDOW) == "0x00ff@5"
    assert key_for_people(b"short", WINDOW) == "short"  # never hashed under the layout
    assert key_for_people(b"user-1", PLAIN) == "user-1"


def test_unknown_key_layout_is_refused() -> None:
    base = {"candidates": [4], "topics": ["t"], "connection": Connection("b:9092")}
    validate(AnalyzeOptions(**base, key_layouts=("plain", "window", "session")))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown key layout 'windowed'; known: plain, window"):
        validate(AnalyzeOptions(**base, key_layouts=("windowed",)))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no key layout given"):
        validate(AnalyzeOptions(**base, key_layouts=()))  # type: ignore[arg-type]


def _cand(m: int, moved: int, fraction: float) -> dict:
    return {"partitions": m, "moved_keys": moved, "moved_fraction": fraction}


def test_gate_names_every_breach() -> None:
    entries = [
        {"topic": "a", "candidates": [_cand(8, 10, 0.5), _cand(12, 0, 0.0)]},
        {"topic": "b", "candidates": [_cand(8, 1, 0.05)]},
    ]
    g = gate(entries, GateRules(fail_if_moved=True))  # type: ignore[arg-type]
    assert g["failed"] is True
    assert g["reason"] == "a: 10 keys move at 8 partitions; b: 1 keys move at 8 partitions"
    g = gate(entries, GateRules(max_moved_fraction=0.1))  # type: ignore[arg-type]
    assert g["reason"] == "a: 50.0% of keys move at 8 partitions (limit 10.0%)"
    g = gate(entries, GateRules())  # type: ignore[arg-type]
    assert g == {
        "fail_if_moved": False,
        "max_moved_fraction": None,
        "failed": False,
        "reason": None,
    }


def test_exit_code_prefers_refusal_over_gate() -> None:
    ok = {"predictable": True}
    refused = {"predictable": False}
    assert exit_code({"topics": [ok], "gate": {"failed": False}}) == 0  # type: ignore[typeddict-item]
    assert exit_code({"topics": [ok], "gate": {"failed": True}}) == 1  # type: ignore[typeddict-item]
    assert exit_code({"topics": [ok, refused], "gate": {"failed": True}}) == 3  # type: ignore[typeddict-item]


def test_spark_error_message_finds_a_migcheck_error_raised_in_a_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MIGCHECK_SPARK_LOG", "/var/tmp/spark.log")
    worker = (
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "reader.py", line 9, in read_units\n'
        "migcheck.errors.ReadError: orders-3: no records between offset 5 and 9 for 30s\n"
        "\tat org.apache.spark.api.python.BasePythonRunner...\n"
    )
    assert spark_error_message(RuntimeError(worker)) == (
        "orders-3: no records between offset 5 and 9 for 30s"
    )
    assert spark_error_message(RuntimeError("\nJava heap space\nmore")) == (
        "Spark failed: Java heap space (Spark's log: /var/tmp/spark.log)"
    )


def test_placed_alike_names_every_other_partitioner_that_placed_every_key() -> None:
    from migcheck.analysis.verdicts import placed_alike

    scores = {
        "murmur2": PartitionerScore(10, 7, 0),
        "sarama-reference": PartitionerScore(10, 10, 0),
        "franz-sarama-fnv1a": PartitionerScore(10, 10, 0),
    }
    assert placed_alike(scores, "sarama-reference") == ("franz-sarama-fnv1a",)
    assert placed_alike(scores, "murmur2") == ()  # it did not place every key
    assert placed_alike(scores, None) == ()


def test_mixed_shares_from_the_pair_that_explains_every_key() -> None:
    from migcheck.analysis.verdicts import Share, mixed_shares, mixed_verdict

    # 100 keys: 60 written by a, 40 by b; a also fits 8 of b's by chance, b 12 of a's
    scores = {
        "murmur2": PartitionerScore(100, 30, 0),
        "a": PartitionerScore(100, 68, 0),
        "b": PartitionerScore(100, 52, 0),
    }
    either = {("murmur2", "a"): 80, ("murmur2", "b"): 70, ("a", "b"): 100}
    shares = mixed_shares(scores, either)
    assert shares == (Share(("a",), 0.48), Share(("b",), 0.32), Share(("a", "b"), 0.20))
    text = mixed_verdict(shares)["text"]
    assert "two clients, a and b" in text and "a 48.0%, b 32.0%, both 20.0%" in text
    # one partitioner placed every key: not a mixture
    assert mixed_shares({**scores, "c": PartitionerScore(100, 100, 0)}, either) == ()
    # no pair explains every key
    assert mixed_shares(scores, {("a", "b"): 99}) == ()


def test_a_tie_on_one_partition_is_said_as_one_partition() -> None:
    from migcheck.analysis.verdicts import ambiguous_verdict

    names = ["murmur2", "consistent_random", "fnv1a"]
    one = ambiguous_verdict(names, {3: 40}, partitions=1)["text"]
    assert "one partition" in one and "--partitioner" in one
    assert "murmur2" not in one  # not a list of every candidate: none can be told apart
    many = ambiguous_verdict(names, {3: 0, 6: 40}, partitions=4)["text"]
    assert "murmur2 and consistent_random and fnv1a" in many and "40 keys" in many
    assert "at 6 partitions" in many
