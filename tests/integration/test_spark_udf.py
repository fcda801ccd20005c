"""The scalar, vectorized and Spark UDF paths give the same partition for the same keys."""

from __future__ import annotations

import random

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
