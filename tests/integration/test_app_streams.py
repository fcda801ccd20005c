"""`migcheck app` predicts what really happens to a real Kafka Streams app after the alter.

For each topology of fixtures/java/streams: run the app on a 3-partition input;
ask `migcheck app --to 6` (with the app's own describe() as --topology); alter
the input to 6 partitions; produce one more record per key; run the app again.
The prediction must be what the app really does:

- CRASH: the app dies, and its error is the one migcheck quoted, naming the topic;
- CORRUPT: the keys whose state is split across two tasks are exactly the moved keys
  of migcheck's CSV (and kafka-python's murmur2 agrees);
- SAFE: a clean run with every count right.

Classic `join-nochangelog` is not run: it hangs for task.timeout.ms (5 min) before it
dies (FINDINGS.md); the streams protocol runs it instead, where it crashes at once.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from streamsapp import KEYS, Run, StreamsApp, moved_keys, phase1, phase2

pytestmark = pytest.mark.kafka


def _migcheck_app(
    app: StreamsApp, tmp_path: Path, *extra: str, topology: bool = True
) -> tuple[int, dict]:
    given = ["--topology", str(app.describe(tmp_path / f"{app.topology}.txt"))] if topology else []
    p = app.migcheck(
        "app",
        *given,
        "--topic",
        app.input,
        "--to",
        "6",
        "--format",
        "json",
        *extra,
    )
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def _before_and_after(app: StreamsApp, *also_alter: str) -> Run:
    """Phase 1 and a first run; the alter; phase 2 and the second run."""
    app.produce(app.input, phase1())
    first = app.run()
    assert first.crash is None and first.code == 0, first.stderr[-2000:]
    return first


def _alter_and_rerun(app: StreamsApp, *also_alter: str) -> Run:
    app.alter(app.input, 6)
    for topic in also_alter:
        app.alter(topic, 6)
    app.produce(app.input, phase2())
    return app.run()


def _assert_crash_as_predicted(report: dict, rc: int, second: Run, topic: str) -> None:
    assert rc == 1 and report["verdict"] == "CRASH"
    error = report["candidates"][0]["error"]
    assert topic in error
    assert second.crash is not None and error in second.crash, second.crash


@pytest.mark.parametrize(
    ("topology", "crashing_topic"),
    [
        ("count", "{app}-counts-changelog"),
        ("windowed", "{app}-wcounts-changelog"),
        ("rekey-count", "{app}-rekey-group-repartition"),
        ("join", "{app}-table-store-changelog"),
    ],
)
def test_crash_is_the_real_crash(
    kafka: Kafka, tmp_path: Path, topology: str, crashing_topic: str
) -> None:
    app = StreamsApp(kafka, topology)
    if topology == "join":
        app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    _before_and_after(app)
    rc, report = _migcheck_app(app, tmp_path)
    second = _alter_and_rerun(app)
    _assert_crash_as_predicted(report, rc, second, crashing_topic.format(app=app.app_id))


def _split_keys(run_: Run, store: str) -> set[str]:
    """Keys whose state sits in two tasks' stores after the alter."""
    return {k for k, n in run_.values(store).items() if n > 1}


def _csv_keys(path: Path, topic: str) -> set[str]:
    with path.open(encoding="utf-8") as f:
        return {
            bytes.fromhex(r["key_hex"]).decode()
            for r in csv.DictReader(f)
            if r["topic"] == topic and r["candidate_partitions"] == "6"
        }


def test_a_ksqldb_shaped_query_fails_as_its_kafka_streams_app_does(
    kafka: Kafka, tmp_path: Path
) -> None:
    """ksqlDB cannot run here.  A persistent query runs as a Kafka Streams app whose id is
    ``_confluent-ksql-<service id>query_<query id>`` (ksqlDB's QueryApplicationId, service
    id ``default_`` by default): the real app under such an id."""
    app = StreamsApp(kafka, "count", app_prefix="_confluent-ksql-default_query_CTAS_COUNTS")
    _before_and_after(app)
    rc, report = _migcheck_app(app, tmp_path, topology=False)
    assert (rc, report["framework"], report["verdict"]) == (1, "ksqldb", "CRASH")
    said = report["candidates"][0]["error"]
    assert said.startswith("the query goes to ERROR: ")
    assert "TERMINATE and the query created again" in report["candidates"][0]["after_cleanup"]
    # its runbook is ksqlDB's: the query's id as ksqlDB's QueryApplicationId spells it
    query = app.app_id.split("query_", 1)[1]
    book = run_cli("runbook", "--bootstrap-server", kafka.bootstrap, "--application-id",
                   app.app_id, "--topic", app.input, "--to", "6")  # fmt: skip
    assert book.returncode == 0, book.stderr
    assert f"TERMINATE {query};".replace("_", "\\_") in book.stdout  # Markdown escapes _
    assert "kafka-streams-application-reset" not in book.stdout
    second = _alter_and_rerun(app)
    assert second.crash is not None, second.stderr[-2000:]
    assert said.removeprefix("the query goes to ERROR: ") in second.crash


@pytest.mark.parametrize(
    ("topology", "store"), [("count-nolog", "counts"), ("source-changelog", "source-table")]
)
def test_corrupt_splits_exactly_the_moved_keys(
    kafka: Kafka, tmp_path: Path, topology: str, store: str
) -> None:
    app = StreamsApp(kafka, topology)
    _before_and_after(app)
    csv_path = tmp_path / "moved.csv"
    rc, report = _migcheck_app(
        app, tmp_path, "--state", "--full", "--moved-keys-out", str(csv_path)
    )
    assert rc == 1 and report["verdict"] == "CORRUPT"
    (reason,) = report["candidates"][0]["reasons"]
    assert reason["stores"] == [store]
    second = _alter_and_rerun(app)
    assert second.crash is None and second.code == 0, second.stderr[-2000:]
    predicted = _csv_keys(csv_path, app.input)
    assert predicted == _split_keys(second, store) == moved_keys(3, 6)
    (impact,) = report["candidates"][0]["stores"]
    assert (impact["logged"], impact["moved_keys"]) == (False, len(predicted))


def _true_counts(records: list[tuple[str, str]], by_value: bool) -> Counter[str]:
    return Counter(v if by_value else k for k, v in records)


def test_fixed_repartition_is_safe_and_every_count_is_right(kafka: Kafka, tmp_path: Path) -> None:
    app = StreamsApp(kafka, "rekey-count-fixed")
    _before_and_after(app)
    # 3 partitions, like its upstream: only the app knows the size is fixed
    rc, report = _migcheck_app(app, tmp_path)
    assert (rc, report["verdict"]) == (1, "CRASH")
    assert any("rekey-repartition" in n for n in report["notes"])
    rc, report = _migcheck_app(app, tmp_path, "--fixed-repartition", "rekey-repartition")
    assert (rc, report["verdict"]) == (0, "SAFE")
    second = _alter_and_rerun(app)
    assert second.crash is None and second.code == 0
    counts = {k: int(v) for s, k, v in second.state if s == "counts"}
    assert counts == dict(_true_counts(phase1() + phase2(), by_value=True))


def test_global_table_is_safe(kafka: Kafka, tmp_path: Path) -> None:
    app = StreamsApp(kafka, "global")
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    _before_and_after(app)
    rc, report = _migcheck_app(app, tmp_path)
    assert (rc, report["verdict"]) == (0, "SAFE")
    second = _alter_and_rerun(app)
    assert second.crash is None and second.code == 0
    assert len(second.values("global-store")) == len(KEYS)
    joined = kafka.dump(app.output)
    assert len(joined) == len(phase1()) + len(phase2())  # every stream record joined


def test_streams_protocol_crash_is_the_real_crash(kafka: Kafka, tmp_path: Path) -> None:
    """The co-partitioning check; the changelog's, stopped and running, is in
    test_app_streams_protocol.py."""
    app = StreamsApp(kafka, "join-nochangelog", protocol="streams")
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    _before_and_after(app)
    rc, report = _migcheck_app(app, tmp_path)
    assert report["protocol"] == "streams" and report["group"]["type"] == "streams"
    second = _alter_and_rerun(app)
    expected = "Following topics do not have the same number of partitions"
    _assert_crash_as_predicted(report, rc, second, expected)


def test_streams_protocol_logging_disabled_corrupts(kafka: Kafka, tmp_path: Path) -> None:
    app = StreamsApp(kafka, "count-nolog", protocol="streams")
    _before_and_after(app)
    rc, report = _migcheck_app(app, tmp_path)
    assert (rc, report["verdict"]) == (1, "CORRUPT")
    # the broker's description shows the sub-topology but not the unlogged store: fail closed
    rc, report = _migcheck_app(app, tmp_path, topology=False)
    assert (rc, report["basis"], report["verdict"]) == (1, "broker", "CORRUPT")
    assert report["subtopologies"][0]["sources"] == [app.input]
    second = _alter_and_rerun(app)
    assert second.crash is None
    assert _split_keys(second, "counts") == moved_keys(3, 6)
