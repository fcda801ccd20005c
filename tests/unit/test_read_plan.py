"""The read plan: which strategy reads, for which spec, and the JVM it asks for, decided
before Spark starts.  Only plans that start no reader are made here (a cluster's
session, where the executors read): no broker, no Spark.  The thresholds are the
documented ones, written out here rather than read from the module."""

from __future__ import annotations

import pytest

from migcheck.analysis.figures import Spec
from migcheck.analysis.scan.chunks import FullScan
from migcheck.analysis.scan.plan import JvmProfile, ReadRequest, combined, plan_kafka
from migcheck.analysis.scan.tasks import SampleRead
from migcheck.hashing.partitioners import AUTO_CANDIDATES
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.model.analyze import KeyLayout

CLIENT = ClientConfig("127.0.0.1:1", {"security_protocol": "PLAINTEXT"})


def _topic(name: str, per_partition: int, partitions: int = 4) -> TopicMeta:
    parts = tuple(PartitionMeta(p, 0, per_partition) for p in range(partitions))
    return TopicMeta(name, "delete", partitions, parts)


def _request(sample: int | None, per_key: bool = False, partitioner: str = "auto") -> ReadRequest:
    return ReadRequest(
        candidates=(8, 12),
        partitioner=partitioner,
        key_layouts=(KeyLayout.PLAIN,),
        moved_key_sample=10,
        sample_per_partition=sample,
        per_key=per_key,
        local=False,  # a cluster's session: the tasks read, the driver starts no thread
    )


def test_a_sample_is_read_by_tasks_that_compute_the_figures() -> None:
    plan = plan_kafka(_request(1000), CLIENT, [_topic("t", 5000)])
    assert isinstance(plan.strategy, SampleRead)
    assert plan.strategy.figures and plan.strategy.share is None
    assert plan.total == 4 * 1000  # eight windows of 125 records per partition
    assert plan.jvm == JvmProfile(4000, short=True, workers=True)


def test_the_spec_is_built_once_and_the_strategy_holds_the_plans() -> None:
    plan = plan_kafka(_request(None), CLIENT, [_topic("t", 10), _topic("u", 10, 2)])
    assert isinstance(plan.strategy, FullScan)
    assert plan.strategy.spec is plan.spec
    assert plan.spec == Spec(
        # auto's partitioners in its order (pinned name by name in test_header.py)
        scored=tuple((KeyLayout.PLAIN, name) for name in AUTO_CANDIDATES),
        candidates=(8, 12),
        sample=10,
        topics={"t": (4, False), "u": (2, False)},
    )


def test_a_forced_partitioner_is_the_only_one_scored() -> None:
    plan = plan_kafka(_request(None, partitioner="sarama-crc32"), CLIENT, [_topic("t", 10)])
    assert plan.spec.scored == ((KeyLayout.PLAIN, "sarama-crc32"),)


@pytest.mark.parametrize(
    ("per_partition", "per_key", "short"),
    [
        (100, True, True),  # a small full scan runs as a sample does
        (600_000, True, False),  # 2.4 M records, a row per key in Spark: a long run
        (1_200_000, False, False),  # chunks merged in Spark: the JVM holds a row per key
        (200_000, False, True),  # whole partitions: the tasks compute the figures
    ],
)
def test_a_full_scans_jvm_is_short_unless_spark_holds_many_rows(
    per_partition: int, per_key: bool, short: bool
) -> None:
    plan = plan_kafka(_request(None, per_key=per_key), CLIENT, [_topic("t", per_partition)])
    assert isinstance(plan.strategy, FullScan)
    assert plan.strategy.figures is not per_key
    assert plan.total == 4 * per_partition
    assert plan.jvm.short is short


def test_one_session_serves_several_plans() -> None:
    a = JvmProfile(10_000, short=True, workers=False)
    b = JvmProfile(15_000, short=False, workers=True)
    assert combined([a]) == a and combined([a]).tiny  # 10,000 records: interpreted
    both = combined([a, b])
    assert both == JvmProfile(25_000, short=False, workers=True)
    assert not both.tiny  # over 20,000 records in all
