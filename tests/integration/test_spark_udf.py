"""The scalar, vectorized and Spark UDF paths give the same partition for the same keys."""

from __future__ import annotations

import random
import sys

import pytest
from oracles import java_partition

import migcheck
from migcheck.analysis.spark import partition_column, placement_column

pytestmark = pytest.mark.spark


def _keys() -> list[bytes | None]:
    rng = random.Random(7)
    keys: list[bytes | None] = [
        bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 64))) for _ in range(3000)
    ]
    keys += [None, b"", b"\x00", b"\xff" * 1000]
    return keys


@pytest.mark.parametrize("partitioner", sorted(migcheck.PARTITIONERS))
def test_three_paths_agree(spark, partitioner: str) -> None:
    keys = _keys()
    df = spark.createDataFrame([(i, k) for i, k in enumerate(keys)], "i long, key binary")
    rows = (
        df.select(
            "i",
            partition_column("key", 6, partitioner).alias("p6"),
            partition_column("key", 13, partitioner).alias("p13"),
            placement_column("key", partitioner).alias("v"),
        )
        .orderBy("i")
        .collect()
    )
    vector6 = migcheck.partition_array(keys, 6, partitioner)
    vector13 = migcheck.partition_array(keys, 13, partitioner)
    for row, key, v6, v13 in zip(rows, keys, vector6, vector13, strict=True):
        spark6 = -1 if row.p6 is None else row.p6
        spark13 = -1 if row.p13 is None else row.p13
        assert (spark6, spark13) == (v6, v13), key
        if v6 >= 0:
            assert migcheck.partition(key, 6, partitioner) == spark6
            assert row.v % 13 == spark13


def test_spark_murmur2_matches_kafka_python(spark) -> None:
    keys = [k for k in _keys() if k is not None]
    df = spark.createDataFrame([(k,) for k in keys], "key binary")
    got = [r.p for r in df.select(partition_column("key", 12).alias("p")).collect()]
    assert got == [java_partition(k, 12) for k in keys]


def test_null_key_is_null_partition(spark) -> None:
    df = spark.createDataFrame([(None,), (b"a",)], "key binary")
    got = [r.p for r in df.select(partition_column("key", 4).alias("p")).collect()]
    assert got[0] is None
    assert got[1] == java_partition(b"a", 4)


def test_unknown_partitioner_fails_on_driver() -> None:
    with pytest.raises(ValueError, match="unknown partitioner"):
        placement_column("key", "nope")


def test_a_short_runs_settings_are_put_back_and_the_users_win(spark) -> None:
    """A short run turns off adaptive execution and shuffles into one partition per task
    slot, and a tiny one interprets its expressions, on a session that may be shared (a
    notebook, these tests); each is restored after; a setting the user passed with
    --conf is left alone."""
    from migcheck.analysis.spark import small_data

    adaptive, shuffle = "spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions"
    spark.conf.set(adaptive, "true")
    before = spark.conf.get(shuffle)
    with small_data(spark, {}):
        assert spark.conf.get(adaptive) == "false"
        slots = 2  # one shuffle partition per task slot: the fixture's local[2]
        assert spark.sparkContext.master == "local[2]"
        assert spark.conf.get(shuffle) == str(slots)
        grouped = spark.range(10).selectExpr("id % 3 AS k").groupBy("k").count()
        assert grouped.rdd.getNumPartitions() == slots
        assert sorted(r[1] for r in grouped.collect()) == [3, 3, 4]
    assert spark.conf.get(adaptive) == "true"
    assert spark.conf.get(shuffle) == before
    factory = "spark.sql.codegen.factoryMode"

    def compiled_stages() -> bool:
        """Whether a query ran whole-stage compiled (its operators marked "*(n)")."""
        fresh = spark.range(10).selectExpr("id % 3 AS k").groupBy("k").count()
        assert sorted(r[1] for r in fresh.collect()) == [3, 3, 4]
        return "*(" in fresh._jdf.queryExecution().executedPlan().toString()

    assert compiled_stages()
    with small_data(spark, {}, tiny=True):  # a tiny run interprets its expressions
        assert spark.conf.get(factory) == "NO_CODEGEN"
        assert not compiled_stages()
    assert spark.conf.get(factory) != "NO_CODEGEN"
    assert compiled_stages()
    with small_data(spark, {adaptive: "true"}):
        assert spark.conf.get(adaptive) == "true"
    spark.conf.unset(adaptive)
    with small_data(spark, {}):
        assert spark.conf.get(adaptive) == "false"
    assert spark.conf.get(adaptive) == "true"  # unset again: Spark's default


def test_the_copys_check_joins_by_sort_merge_and_counts_by_hand(spark) -> None:
    """The copy's check never broadcasts a side: Spark takes a read's output for as small
    as its few task rows, and a broadcast of 5 M identities failed ("Not enough memory to
    build and broadcast the table", bench-scan's copy row).  Counted here by hand: one
    record missing, one duplicated, one on another partition than its key's."""
    from migcheck.copy.verify import compared

    schema = "key binary, timestamp long, digest long, partition int"
    # murmur2 (Kafka's Java client) puts b"a" on partition 0 of 2 and b"d" on 1
    assert (java_partition(b"a", 2), java_partition(b"d", 2)) == (0, 1)
    src = spark.createDataFrame(
        [(b"a", 1, 10, 0), (b"d", 2, 20, 1), (b"a", 3, 30, 0), (None, 4, 40, 0)], schema
    )
    dst = spark.createDataFrame(
        [(b"a", 1, 10, 0), (b"d", 2, 20, 1), (b"d", 2, 20, 0), (None, 4, 40, 1)], schema
    )
    frame = compared(src, dst, 2, "murmur2")
    (row,) = frame.collect()
    # the plan as adaptive execution finished it: without the hint it had turned the join
    # of these small sides into a BroadcastHashJoin
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert "isFinalPlan=true" in plan and "BroadcastHashJoin" not in plan, plan
    # (b"a", 3) is missing; (b"d", 2) is there twice, once on partition 0 where murmur2
    # does not put it; the null key goes anywhere
    assert (row.records, row.missing, row.duplicated, row.misplaced) == (4, 1, 1, 1)


def test_the_settings_give_the_slots_the_context_gives(spark) -> None:
    """A session without a SparkContext (Spark Connect's) counts its task slots from its
    settings: on the fixture's local[2], the two its context gives."""
    from migcheck.analysis.session import slots_of

    assert spark.sparkContext.defaultParallelism == 2
    assert slots_of(lambda key: spark.conf.get(key, None), cpus=64) == 2


def test_the_probe_is_a_one_row_dataframe_job(spark) -> None:
    """The executors' probe needs no RDD: one row, one task, reporting the worker's
    Python and its route to each broker (port 1 on loopback: refused)."""
    from migcheck.analysis.spark import _run_probe

    found = _run_probe(spark, ["127.0.0.1:1"])
    assert found["python"] == "{}.{}".format(*sys.version_info[:2])
    assert found["imports"] == {name: None for name in found["imports"]}
    assert set(found["imports"]) >= {"pyarrow", "numba", "migcheck"}
    assert list(found["brokers"]) == ["127.0.0.1:1"] and found["brokers"]["127.0.0.1:1"]
