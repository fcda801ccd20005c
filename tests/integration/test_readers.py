"""``migcheck readers`` against real groups: each named with its kind, and ``app`` refusing
a plain group in one line.

The readers are real clients with their real defaults: kafka-python consumer groups
(running, and closed), Kafka's own console consumer on the consumer rebalance protocol
(KIP-848), a Kafka Streams app (the fixture, run once and closed), a group named as
Kafka Connect names a sink's and one named as ksqlDB names a query's.  Each expected
kind is written out by hand from how the test made the group; the lags come from
Kafka's own ``kafka-consumer-groups --describe``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata
from kafkatest import Kafka, read_and_commit, subscribe_once_known
from oracles import run_cli
from streamsapp import ran_once

pytestmark = pytest.mark.kafka

RECORDS = 30


def _read_all(consumer: KafkaConsumer, timeout: float = 60) -> list[Any]:
    """Poll until the topic's ``RECORDS`` records arrived."""
    records: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(records) < RECORDS and time.monotonic() < deadline:
        records += [r for batch in consumer.poll(timeout_ms=500).values() for r in batch]
    assert len(records) == RECORDS, f"read {len(records)} of {RECORDS}"
    return records


def _group(kafka: Kafka, topic: str, group_id: str, **config: object) -> KafkaConsumer:
    """A kafka-python consumer of ``group_id`` with its defaults, that read ``topic`` whole
    and committed it."""

    def make() -> KafkaConsumer:
        consumer = KafkaConsumer(
            bootstrap_servers=kafka.bootstrap,
            group_id=group_id,
            auto_offset_reset="earliest",  # it joins after the records were written
            **config,
        )
        subscribe_once_known(consumer, topic)
        return consumer

    consumer, records = read_and_commit(make, _read_all)
    assert len(records) == RECORDS, "a commit that meets a rebalance is made again"
    return consumer


def _readers(kafka: Kafka, *args: str) -> dict[str, dict]:
    p = run_cli("readers", "--bootstrap-server", kafka.bootstrap, "--format", "json", *args)
    assert p.returncode == 0, p.stderr
    (topic,) = json.loads(p.stdout)["topics"]
    return {r["id"]: r for r in topic["readers"]}


def _tool_lags(kafka: Kafka, groups: list[str]) -> dict[str, int]:
    """Each group's lag summed, as Kafka's kafka-consumer-groups --describe prints it."""
    named = [a for g in groups for a in ("--group", g)]
    rc, out, err = kafka.tool(
        "kafka-consumer-groups", "--bootstrap-server", kafka.bootstrap, "--describe", *named
    )
    assert rc == 0, err
    lags = dict.fromkeys(groups, 0)
    for line in out.splitlines():
        row = line.split()
        if row and row[0] in lags and len(row) > 5 and row[5].isdigit():
            lags[row[0]] += int(row[5])
    return lags


@pytest.fixture(scope="module")
def readers(kafka: Kafka) -> Iterator[dict[str, object]]:
    """A topic and its readers of every kind the broker serves here."""
    topic = kafka.create_topic("readers", 3)
    kafka.produce(topic, [(f"k{i}".encode(), b"v", None) for i in range(RECORDS)])
    ids = {
        "running": kafka.unique("billing"),
        "idle": kafka.unique("audit"),
        "connect": f"connect-{kafka.unique('jdbc-sink')}",
        "ksqldb": f"_confluent-ksql-default_query_CSAS_{kafka.unique('PAGES')}",
        "kip848": kafka.unique("java-reader"),
    }
    running = _group(kafka, topic, ids["running"])
    connect = _group(
        kafka, topic, ids["connect"], client_id=f"connector-consumer-{ids['connect'][8:]}-0"
    )
    _group(kafka, topic, ids["ksqldb"]).close()
    _group(kafka, topic, ids["idle"]).close()
    rc, _, err = kafka.tool(
        "kafka-console-consumer", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
        "--group", ids["kip848"], "--from-beginning", "--max-messages", str(RECORDS),
        "--consumer-property", "group.protocol=consumer",
    )  # fmt: skip
    assert rc == 0, err
    kafka.produce(topic, [(f"late{i}".encode(), b"v", None) for i in range(7)])
    yield {"topic": topic, "ids": ids}
    running.close()
    connect.close()


def test_every_reader_is_listed_once_with_its_kind_and_evidence(
    kafka: Kafka, readers: dict
) -> None:
    ids = readers["ids"]
    found = _readers(kafka, "--topic", readers["topic"], "--to", "6")
    assert {i: found[i]["kind"] for i in ids.values()} == {
        ids["running"]: "consumer-group",
        ids["idle"]: "unknown",
        ids["connect"]: "kafka-connect",
        ids["ksqldb"]: "ksqldb",
        ids["kip848"]: "consumer-group",
    }
    assert set(found) == set(ids.values()), "a reader that does not read the topic"
    assert found[ids["running"]]["evidence"] == ["its members use the consumer assignor 'range'"]
    assert "no members" in found[ids["idle"]]["evidence"][0]
    assert "KIP-848" in found[ids["kip848"]]["evidence"][0]
    assert found[ids["running"]]["members"] == 1 and found[ids["idle"]]["members"] == 0
    tool = _tool_lags(kafka, list(ids.values()))  # 7 records came after all were read
    assert {g: found[g]["lag"] for g in ids.values()} == tool == dict.fromkeys(tool, 7)


def test_plain_readers_are_judged_as_what_they_are(kafka: Kafka, readers: dict) -> None:
    ids = readers["ids"]
    found = _readers(kafka, "--topic", readers["topic"], "--to", "6")
    risks = {i: [j["risk"] for j in found[i]["judgements"]] for i in ids.values()}
    assert risks[ids["running"]] == ["ORDER", "LOSS_RISK"]
    assert risks[ids["connect"]] == ["ORDER", "UNKNOWN"]
    assert risks[ids["idle"]] == ["UNKNOWN"]
    assert risks[ids["ksqldb"]] == ["APP"]
    order = found[ids["running"]]["judgements"][0]["text"]
    assert "7 records are unread now" in order


def test_a_group_named_with_group_is_judged_as_a_plain_group(kafka: Kafka, readers: dict) -> None:
    idle = readers["ids"]["idle"]
    found = _readers(kafka, "--topic", readers["topic"], "--group", idle)
    assert found[idle]["kind"] == "consumer-group"
    assert [j["risk"] for j in found[idle]["judgements"]] == ["ORDER", "LOSS_RISK"]


def test_a_stopped_streams_app_is_told_by_its_internal_topics(kafka: Kafka) -> None:
    app = ran_once(kafka)
    found = _readers(kafka, "--topic", app.input)
    assert found[app.app_id]["kind"] == "kafka-streams"
    assert f"{app.app_id}-counts-changelog" in found[app.app_id]["evidence"][0]
    assert found[app.app_id]["judgements"][0]["risk"] == "APP"


def test_a_stopped_app_without_internal_topics_is_told_by_its_commits(kafka: Kafka) -> None:
    """A store with logging disabled leaves no internal topic: the silent corruption case
    that matters most must not read as a plain group."""
    app = ran_once(kafka, "count-nolog")
    found = _readers(kafka, "--topic", app.input)
    assert found[app.app_id]["kind"] == "kafka-streams", found[app.app_id]["evidence"]
    assert "metadata" in found[app.app_id]["evidence"][0]
    p = run_cli(
        "app", "--bootstrap-server", kafka.bootstrap, "--application-id", app.app_id,
        "--topic", app.input, "--to", "6", "--format", "json",
    )  # fmt: skip
    assert p.returncode != 2, p.stderr


@pytest.mark.parametrize("command", ["app", "plan"])
def test_app_and_plan_refuse_a_plain_group_in_one_line(
    kafka: Kafka, readers: dict, command: str
) -> None:
    group, topic = readers["ids"]["running"], readers["topic"]
    args = ["--topic", topic, "--to", "6"] if command == "app" else []
    p = run_cli(command, "--bootstrap-server", kafka.bootstrap, "--application-id", group, *args)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert f"group '{group}' is a plain consumer group, not a Kafka Streams application" in (
        p.stderr
    )
    assert f"migcheck runbook --group {group}" in p.stderr


def test_two_hundred_groups_on_fifty_topics_each_listed_once(kafka: Kafka) -> None:
    """Groups of each kind, made as each framework names what it leaves behind: their
    offsets committed directly (an admin's commit, as a stopped app leaves them)."""
    base = kafka.unique("many")
    topics = [f"{base}-t{i}" for i in range(50)]
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        marks = [f"{base}-g{i}-__assignor-__leader" for i in range(0, 200, 5)]  # Faust
        marks += [f"changelog__{base}-g{i}--t--default" for i in range(1, 200, 5)]  # Quix
        marks += [f"{base}-g{i}-counts-changelog" for i in range(2, 200, 5)]  # Streams
        admin.create_topics([NewTopic(t, 2, 1) for t in topics + marks])
        expected = {}
        for i in range(200):
            group = _many_group(base, i)
            expected[group] = _many_kind(i, group)
            tp = TopicPartition(topics[i % 50], 0)
            errors = admin.alter_group_offsets(group, {tp: OffsetAndMetadata(0, "", -1)})
            assert all(e.errno == 0 for e in errors.values()), errors
    finally:
        admin.close()
    args = [a for t in topics for a in ("--topic", t)]
    started = time.monotonic()
    p = run_cli("readers", "--bootstrap-server", kafka.bootstrap, "--format", "json", *args)
    took = time.monotonic() - started
    assert p.returncode == 0, p.stderr
    listed = [r for t in json.loads(p.stdout)["topics"] for r in t["readers"]]
    ours = [r for r in listed if r["id"] in expected]
    assert sorted(r["id"] for r in ours) == sorted(expected), "each group once"
    assert {r["id"]: r["kind"] for r in ours} == expected
    print(f"readers: 200 groups on 50 topics in {took:.1f} s")


def _many_group(base: str, i: int) -> str:
    if i % 5 == 3:
        return f"connect-{base}-g{i}"
    if i % 5 == 4 and i % 2:
        return f"_confluent-ksql-default_query_CSAS_{base.upper()}_{i}"
    return f"{base}-g{i}"


def _many_kind(i: int, group: str) -> str:
    if group.startswith("connect-"):
        return "kafka-connect"
    if re.match("_confluent-ksql-", group):
        return "ksqldb"
    return {0: "faust", 1: "quix-streams", 2: "kafka-streams"}.get(i % 5, "unknown")
