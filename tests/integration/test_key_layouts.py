"""Key layouts on a real Spark session: window and session changelog keys are placed by
their inner key.

The synthetic changelogs below put each record where Kafka's Java rule puts its
*inner* key (kafka-python's murmur2, tests/oracles.py), with the suffix Kafka
Streams appends: ``[key][8-byte window start][4-byte seqnum]`` for a window store
(WindowKeySchema.toStoreKeyBinary), ``[key][8-byte end][8-byte start]`` for a
session store (SessionKeySchema.toBinary).  Then the real thing: the Streams
fixture app's window and session changelogs on a real broker.  Expected figures
come from the oracle, never from migcheck.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from kafka.admin import KafkaAdminClient
from kafkatest import Kafka
from oracles import java_partition, run_cli
from streamsapp import StreamsApp, moved_keys, phase1

from migcheck.analysis.aggregate import aggregate
from migcheck.analysis.figures import figure_spec
from migcheck.analysis.histories import scored_pairs
from migcheck.analysis.scan.frame import HistoryFigures
from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.commands.options import Connection
from migcheck.kafka.fetch import RECORD_SCHEMA
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

pytestmark = pytest.mark.spark

ALL = (KeyLayout.PLAIN, KeyLayout.WINDOW, KeyLayout.SESSION)
INNER = [f"user-{i}".encode() for i in range(200)]
T0 = 1_700_000_100_000  # a window start, epoch ms
FIVE_MIN = 300_000


def window_key(inner: bytes, start: int, seqnum: int = 0) -> bytes:
    return inner + start.to_bytes(8, "big") + seqnum.to_bytes(4, "big")


def session_key(inner: bytes, start: int, end: int) -> bytes:
    return inner + end.to_bytes(8, "big") + start.to_bytes(8, "big")


def _records(spark, topics: dict[str, list[tuple[bytes, int | None, int]]]):  # -> DataFrame
    """(key, value size or None for a tombstone, partition) per topic, offsets in order."""
    rows = []
    offsets: dict[tuple[str, int], int] = {}
    for topic, records in topics.items():
        for key, value_size, partition in records:
            offset = offsets.get((topic, partition), 0)
            offsets[(topic, partition)] = offset + 1
            rows.append((topic, partition, offset, key, len(key), value_size, 0))
    columns = list(zip(*rows, strict=True))
    table = pa.table(
        [pa.array(c, type=f.type) for c, f in zip(columns, RECORD_SCHEMA, strict=True)],
        schema=RECORD_SCHEMA,
    )
    return spark.createDataFrame(table)


def _changelogs() -> dict[str, list[tuple[bytes, int | None, int]]]:
    """Two windows (and two sessions) per inner key on 3 partitions; in the window store
    the first inner key's second window is tombstoned, and one 5-byte key is too short
    for either suffix."""
    window = [
        (window_key(k, start), 8, java_partition(k, 3))
        for k in INNER
        for start in (T0, T0 + FIVE_MIN)
    ]
    window.append((window_key(INNER[0], T0 + FIVE_MIN), None, java_partition(INNER[0], 3)))
    window.append((b"short", 8, 0))
    session = [
        (session_key(k, start, start + 42), 8, java_partition(k, 3))
        for k in INNER
        for start in (T0, T0 + 10 * FIVE_MIN)
    ]
    plain = [(k, 8, java_partition(k, 3)) for k in INNER]
    return {"wcounts-changelog": window, "scounts-changelog": session, "counts-changelog": plain}


def _metas() -> list[TopicMeta]:
    return [TopicMeta(name, "compact", 3) for name in _changelogs()]


def _source(
    records: DataFrame,
    layouts: Sequence[KeyLayout],
    partitioner: str = "auto",
    moved_key_sample: int = 10,
) -> HistoryFigures:
    """The changelogs' records as Spark groups a key export, for 6 partitions."""
    spec = figure_spec(_metas(), scored_pairs(partitioner, layouts), [6], moved_key_sample)
    return HistoryFigures(records, spec)


def test_each_changelog_is_placed_by_its_inner_key(spark) -> None:
    records = _records(spark, _changelogs())
    aggs, moved_keys = aggregate(_source(records, ALL, moved_key_sample=500))
    window, session, plain = (aggs[n] for n in _changelogs())
    assert (window.key_layout, window.partitioner) == (KeyLayout.WINDOW, "murmur2")
    assert (session.key_layout, session.partitioner) == (KeyLayout.SESSION, "murmur2")
    assert (plain.key_layout, plain.partitioner) == (KeyLayout.PLAIN, "murmur2")
    score = window.key_stats.scores[KeyLayout.WINDOW]["murmur2"]
    assert (score.hashed, score.conforming, score.unhashed_records) == (400, 400, 1)  # b"short"
    assert window.key_stats.distinct_keys == 401  # identity: the whole key, not the inner one
    assert window.key_stats.scores[KeyLayout.PLAIN]["murmur2"].conformance < 0.5

    moves = {k for k in INNER if java_partition(k, 3) != java_partition(k, 6)}
    expected_window = {
        window_key(k, s).hex()
        for k in moves
        for s in (T0, T0 + FIVE_MIN)
        if (k, s) != (INNER[0], T0 + FIVE_MIN)  # tombstoned: no live state to move
    }
    expected_session = {
        session_key(k, s, s + 42).hex() for k in moves for s in (T0, T0 + 10 * FIVE_MIN)
    }
    assert moved_keys is not None
    names = ("topic", "key_hex", "partition", "candidate_partitions", "new_partition")
    rows = [dict(zip(names, row, strict=True)) for row in moved_keys.rows()]
    moved = {t: {r["key_hex"] for r in rows if r["topic"] == t} for t in _changelogs()}
    assert moved["wcounts-changelog"] == expected_window
    assert moved["scounts-changelog"] == expected_session
    assert moved["counts-changelog"] == {k.hex() for k in moves}
    for r in rows:  # the new partition is the inner key's, by the oracle
        inner = bytes.fromhex(r["key_hex"])
        inner = inner[: -{"wcounts": 12, "scounts": 16}.get(r["topic"][:7], 0) or None]
        assert r["new_partition"] == java_partition(inner, 6)
    assert sum(c.keys for c in window.cells if c.moved) == len(expected_window)
    state_keys = sum(c.keys for c in window.cells)
    assert state_keys == 2 * len(INNER) - 1  # every live window entry, b"short" unhashed
    assert {s.key.hex() for s in window.samples} == expected_window


def test_layouts_are_tried_only_when_allowed_and_still_with_a_forced_partitioner(spark) -> None:
    records = _records(spark, _changelogs())
    plain_only, _ = aggregate(_source(records, [KeyLayout.PLAIN]))
    assert plain_only["wcounts-changelog"].partitioner is None  # unpredictable, as before
    assert plain_only["wcounts-changelog"].key_stats.scores.keys() == {KeyLayout.PLAIN}
    assert plain_only["counts-changelog"].partitioner == "murmur2"
    forced, _ = aggregate(_source(records, ALL, partitioner="murmur2"), "murmur2")
    assert forced["scounts-changelog"].key_layout == KeyLayout.SESSION
    assert forced["scounts-changelog"].non_conforming_keys == 0
    assert forced["scounts-changelog"].key_stats.scores[KeyLayout.SESSION].keys() == {"murmur2"}


@pytest.mark.kafka
@pytest.mark.parametrize(
    ("topology", "store", "layout"),
    [("windowed", "wcounts", KeyLayout.WINDOW), ("session", "scounts", KeyLayout.SESSION)],
)
def test_real_streams_changelog_moves_exactly_the_moved_source_keys(
    kafka: Kafka, tmp_path: Path, topology: str, store: str, layout: KeyLayout
) -> None:
    """The fixture app counts 400 keys on a 3-partition input; at 6 partitions the moved
    entries of its changelog are exactly the keys Kafka's rule moves."""
    app = StreamsApp(kafka, topology)
    app.produce(app.input, phase1())
    ran = app.run()
    assert ran.code == 0 and ran.crash is None, ran.stderr[-2000:]
    assert {key.split("@")[0] for key in ran.values(store)} == {f"k{i}" for i in range(400)}
    changelog = f"{app.app_id}-{store}-changelog"
    out = tmp_path / "moved.csv"
    outcome = run_analyze(
        AnalyzeOptions(
            candidates=[6],
            topics=[changelog],
            connection=Connection(kafka.bootstrap),
            full=True,
            key_layouts=tuple(ALL),
            moved_keys_out=str(out),
        )
    )
    (entry,) = outcome.report["topics"]
    assert (entry["key_layout"], entry["partitioner"]) == (layout, "murmur2")
    assert entry["conformance"] == 1.0 and entry["current_partitions"] == 3
    suffix = {KeyLayout.WINDOW: 12, KeyLayout.SESSION: 16}[layout]
    with out.open(encoding="utf-8") as f:
        moved = [bytes.fromhex(row["key_hex"])[:-suffix].decode() for row in csv.DictReader(f)]
    assert set(moved) == moved_keys(3, 6)
    assert entry["candidates"][0]["moved_keys"] == len(moved)
    assert all("@" in k["key"] for k in entry["candidates"][0]["moved_key_sample"])
    _online_is_refused(kafka, app, changelog, tmp_path)


def _online_is_refused(kafka: Kafka, app: StreamsApp, changelog: str, tmp_path: Path) -> None:
    """The app's window (or session) counts depend on stream time: both online routes
    refuse it in one line, from the cleanup policy real Kafka Streams gave its changelog."""
    said = f"{changelog} is a window or session store's changelog (cleanup.policy compact,delete)"
    common = ("--bootstrap-server", kafka.bootstrap, "--topic", app.input, "--to", "6",
              "--application-id", app.app_id, "--output-topic", "")  # fmt: skip
    for command in (("runbook", "--strategy", "online"),
                    ("migrate", "--checkpoint", str(tmp_path / "m.json"))):  # fmt: skip
        p = run_cli(*command, *common)
        assert p.returncode == 2, p.stdout + p.stderr
        assert said in p.stderr and p.stderr.count("\n") == 1, p.stderr
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        assert f"{app.input}-p6" not in admin.list_topics(), "a refused migrate made a topic"
    finally:
        admin.close()
