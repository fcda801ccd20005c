"""Spark's Kafka source: which jars a session gets, and the options a full scan reads with.

The read itself is proven against the real broker in tests/integration/test_analyze_kafka.py (every
``--full`` test goes through it, read-only test included); these hold the rules that
decide what the JVM is given.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migcheck.analysis import kafkasource
from migcheck.kafka.config import ClientConfig, parse_properties
from migcheck.kafka.reader import WorkUnit


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MIGCHECK_SPARK_KAFKA_JARS", raising=False)
    return tmp_path / "cache"


def test_first_run_resolves_from_maven_central_and_says_so(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = kafkasource.jar_settings({})
    import pyspark

    assert settings["spark.jars.packages"] == (
        f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"
    )
    assert settings["spark.jars.ivy"].startswith(str(cache))
    assert "org.apache.hadoop:hadoop-client-runtime" in settings["spark.jars.excludes"]
    assert "fetching Spark's Kafka source" in capsys.readouterr().err


def test_later_runs_use_the_recorded_jars_without_resolving(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = kafkasource.jar_settings({})
    jars = Path(first["spark.jars.ivy"]) / "jars"
    jars.mkdir(parents=True)
    for name in ("a.jar", "b.jar"):
        (jars / name).write_bytes(b"PK")
    kafkasource.remember_jars(first)
    capsys.readouterr()
    assert kafkasource.jar_settings({}) == {"spark.jars": f"{jars / 'a.jar'},{jars / 'b.jar'}"}
    assert capsys.readouterr().err == ""
    (jars / "b.jar").unlink()  # a jar gone: resolve again rather than fail in Spark
    assert "spark.jars.packages" in kafkasource.jar_settings({})


def test_offline_jars_and_the_users_own_settings_win(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline = tmp_path / "offline"
    offline.mkdir()
    (offline / "spark-sql-kafka.jar").write_bytes(b"PK")
    monkeypatch.setenv("MIGCHECK_SPARK_KAFKA_JARS", str(offline))
    assert kafkasource.jar_settings({}) == {"spark.jars": str(offline / "spark-sql-kafka.jar")}
    monkeypatch.setenv("MIGCHECK_SPARK_KAFKA_JARS", "/x/one.jar,/x/two.jar")
    assert kafkasource.jar_settings({}) == {"spark.jars": "/x/one.jar,/x/two.jar"}
    assert kafkasource.jar_settings({"spark.jars": "/mine.jar"}) == {}
    assert kafkasource.jar_settings({"spark.jars.packages": "g:a:1"}) == {}


def test_source_options_read_exact_ranges_committed_and_groupless() -> None:
    props = parse_properties(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        'sasl.jaas.config=x required username="u" password="p";\n'
        "group.id=would-commit\nenable.auto.commit=true\nisolation.level=read_uncommitted\n"
    )
    client = ClientConfig.from_properties("b1:9092,b2:9092", props)
    units = [WorkUnit("t", 1, 5, 9), WorkUnit("t", 0, 0, 3), WorkUnit("u", 2, 7, 8)]
    options = kafkasource.source_options(client, units)
    assert options["kafka.bootstrap.servers"] == "b1:9092,b2:9092"
    assert options["kafka.security.protocol"] == "SASL_PLAINTEXT"
    assert options["kafka.sasl.jaas.config"].endswith('password="p";')
    assert options["kafka.isolation.level"] == "read_committed"
    assert "kafka.group.id" not in options and "kafka.enable.auto.commit" not in options
    assert json.loads(options["assign"]) == {"t": [0, 1], "u": [2]}
    assert json.loads(options["startingOffsets"]) == {"t": {"1": 5, "0": 0}, "u": {"2": 7}}
    assert json.loads(options["endingOffsets"]) == {"t": {"1": 9, "0": 3}, "u": {"2": 8}}
    assert options["failOnDataLoss"] == "true"


def test_chunks_of_a_partition_become_one_range() -> None:
    units = [WorkUnit("t", 0, 200, 300), WorkUnit("t", 0, 0, 200), WorkUnit("t", 1, 0, 50)]
    assert kafkasource.whole_partitions(units) == [
        WorkUnit("t", 0, 0, 300),
        WorkUnit("t", 1, 0, 50),
    ]
