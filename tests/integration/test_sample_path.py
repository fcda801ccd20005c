"""Five groupings of the same records must agree exactly, for every key layout,
tombstone, null key and non-conforming key, whether Spark sums their histories or the
read tasks (or the driver) compute the figures themselves:

- a sample's read tasks, which group whole partitions (a topic small enough for the
  sample to read every record);
- a full scan's read tasks, which group chunks (forced small here, so partitions split
  over chunks and tasks) into partial histories that Spark merges;
- a full scan's read tasks when every partition fits in a chunk: whole partitions per
  task, no merge;
- the driver's own read of a small topic, handed to Spark as an Arrow table;
- the driver's share of a bigger one, its partitions claimed against the read tasks';
- Spark's own groupBy over the raw records (the path of an offline key export).

The records come from Kafka's Java producer, placed on explicit partitions computed
with kafka-python's murmur2 (tests/oracles.py).
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest
from kafkatest import Kafka
from oracles import java_partition
from test_key_layouts import ALL, T0, session_key, window_key

from migcheck.analysis.aggregate import TopicAggregates, aggregate
from migcheck.analysis.figures import figure_spec
from migcheck.analysis.histories import scored_pairs
from migcheck.analysis.scan.chunks import FullScan
from migcheck.analysis.scan.driver import DriverFigures, DriverRead
from migcheck.analysis.scan.frame import HistoryFigures
from migcheck.analysis.scan.share import DriverShare
from migcheck.analysis.scan.tasks import SampleRead, TaskFigures
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import plan_units, read_units
from migcheck.kafka.metadata import describe_topics
from migcheck.model.analyze import KeyLayout

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

INNER = [f"user-{i}".encode() for i in range(150)]


def _produce(kafka: Kafka) -> dict[str, str]:
    """A window and a session changelog (compacted) and a plain topic (delete policy, so
    it may hold null keys), 3 partitions each, with tombstones, repeated keys and one
    key on the wrong partition."""
    layouts = {
        "window": lambda k, i: window_key(k, T0 + 300_000 * (i % 2)),
        "session": lambda k, i: session_key(k, T0, T0 + i),
        "plain": lambda k, i: k,
    }
    names = {}
    for layout, key_of in layouts.items():
        policy = "delete" if layout == "plain" else "compact"
        topic = kafka.create_topic(f"paths-{layout}", 3, cleanup_policy=policy)
        records = [
            (key_of(k, i), None if i % 7 == 0 else 10 + i % 40, java_partition(k, 3))
            for i, k in enumerate(INNER * 2)
        ]
        wrong = (java_partition(b"stray", 3) + 1) % 3
        records.append((key_of(b"stray", 0), 9, wrong))
        if layout == "plain":
            records += [(None, 12, 1), (None, None, 2)]
        kafka.produce(topic, records)
        names[layout] = topic
    return names


def _normal(t: TopicAggregates) -> TopicAggregates:
    """Cells and samples in one order (Spark collects them in any)."""
    return dataclasses.replace(
        t,
        cells=tuple(sorted(t.cells, key=dataclasses.astuple)),
        samples=tuple(sorted(t.samples, key=dataclasses.astuple)),
    )


def test_a_sample_that_reads_everything_aggregates_as_the_full_scan(spark, kafka: Kafka) -> None:
    names = _produce(kafka)
    client = ClientConfig.load(kafka.bootstrap, None)
    metas = describe_topics(client, list(names.values()))
    sample_units = plan_units(metas, 20_000)  # every partition is smaller: read whole
    assert sample_units == plan_units(metas, None)
    spec = figure_spec(metas, scored_pairs("murmur2", ALL), [4, 6], 500)
    histories, _ = SampleRead(client, sample_units, spec, figures=False).load(spark)
    chunked, _ = FullScan(client, sample_units, spec, False, None, 100, 37).load(spark)
    whole, _ = FullScan(client, sample_units, spec, figures=False).histories(spark)
    records = pa.Table.from_batches(list(read_units(client, sample_units)))
    sampled, _ = aggregate(histories, "murmur2")
    scanned, _ = aggregate(chunked, "murmur2")
    assert "last_offset" not in whole.histories.columns  # read whole, not merged from partials
    unmerged, _ = aggregate(whole, "murmur2")
    grouped, _ = aggregate(HistoryFigures(spark.createDataFrame(records), spec), "murmur2")
    by_driver, counter = DriverRead(client, sample_units, spec, True, False).load(spark)
    assert counter is None
    driven, _ = aggregate(by_driver, "murmur2")
    sources = [  # no row per key leaves the read tasks, nor the driver's read
        SampleRead(client, sample_units, spec, figures=True).load(spark)[0],
        FullScan(client, sample_units, spec, figures=True).load(spark)[0],
        DriverRead(client, sample_units, spec, True, True).load(spark)[0],
    ]
    assert [type(s) for s in sources] == [TaskFigures, TaskFigures, DriverFigures]
    figured = [aggregate(s, "murmur2")[0] for s in sources]
    for layout, topic in names.items():
        assert sampled[topic].key_layout == KeyLayout(layout)
        assert sampled[topic].partitioner == "murmur2"
        assert sampled[topic].non_conforming_keys == 1
        assert sampled[topic].null_keys == (2 if layout == "plain" else 0)
        assert any(c.moved for c in sampled[topic].cells)
        assert _normal(sampled[topic]) == _normal(scanned[topic]) == _normal(grouped[topic])
        assert _normal(unmerged[topic]) == _normal(grouped[topic]) == _normal(driven[topic])
        assert all(_normal(f[topic]) == _normal(grouped[topic]) for f in figured)


def test_the_driver_and_the_tasks_share_partitions_out_whole(spark, kafka: Kafka) -> None:
    """The driver's share reads every partition that no task claimed first, the tasks
    the rest; together they give Spark's own grouping of the raw records.  The split is
    made certain here: the window topic's partitions are claimed as the first task's
    before the driver starts (so the task reads them again as its own, as a retried
    task would), and the driver has ended before the tasks run.  A driver that has read
    every partition by then reads alone: no task starts."""
    names = _produce(kafka)
    client = ClientConfig.load(kafka.bootstrap, None)
    metas = describe_topics(client, list(names.values()))
    units = plan_units(metas, None)
    records = pa.Table.from_batches(list(read_units(client, units)))
    spec = figure_spec(metas, scored_pairs("murmur2", ALL), [4, 6], 500)
    grouped, _ = aggregate(HistoryFigures(spark.createDataFrame(records), spec), "murmur2")
    share = DriverShare(client, units, spec, every=True)
    for p in range(3):
        assert share.claims.claim(names["window"], p, "task 0")
    share.start().figures()  # the driver's read is over
    assert share.read == 301 + 303  # the session and plain topics' records, written above
    source, read_so_far = FullScan(client, units, spec, figures=True, share=share).load(spark)
    assert read_so_far is not None and read_so_far.value == 604  # no task has run yet
    shared, _ = aggregate(source, "murmur2")
    assert read_so_far.value == 301 + 604  # the first task read the window topic's 301
    for topic in names.values():
        assert _normal(shared[topic]) == _normal(grouped[topic])
    alone = DriverShare(client, units, spec, every=True).start()
    alone.figures()  # it read every partition, none claimed by another
    source, read_so_far = FullScan(client, units, spec, figures=True, share=alone).load(spark)
    by_driver, _ = aggregate(source, "murmur2")
    assert read_so_far is not None
    assert read_so_far.value == alone.read == 301 + 604  # no task read a record
    for topic in names.values():
        assert _normal(by_driver[topic]) == _normal(grouped[topic])
