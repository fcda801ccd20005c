"""Consumer-protocol (KIP-848) and share (KIP-932) groups, described on the real broker.

The groups are run by Kafka's own console consumer (``group.protocol=consumer``) and
console share consumer, and every expected value is read from Kafka's own tools,
kafka-consumer-groups and kafka-share-groups, never from migcheck.  Kafka 4.3.1 answers
DescribeGroups for neither ("not a classic group"), so their members, assignments and an
empty share group's topics come through hook 6 of ``migcheck/kafka/private_hooks.py``.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest
from kafkatest import KAFKA_LOCAL, Kafka
from oracles import run_cli

from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import GroupInfo, describe_all_groups, share_group_reset

pytestmark = pytest.mark.kafka

T = TypeVar("T")


@contextmanager
def _running(kafka: Kafka, tool: str, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """One of Kafka's console consumers, in the background until the block ends (SIGTERM:
    its shutdown hook closes the consumer, which leaves the group)."""
    cmd = [str(KAFKA_LOCAL), "tool", tool, "--bootstrap-server", kafka.bootstrap, *args]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _until(what: str, probe: Callable[[], T | None], timeout_s: float = 60) -> T:
    """Poll ``probe`` until it returns something, at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = probe()
        if got is not None:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _table(kafka: Kafka, tool: str, group_id: str, *args: str) -> list[dict[str, str]]:
    """The rows of a Kafka group tool's table about ``group_id``, by its header's column
    names; [] when it prints no table (a group without members, say)."""
    rc, out, err = kafka.tool(
        tool, "--bootstrap-server", kafka.bootstrap, "--describe", "--group", group_id, *args
    )
    assert rc == 0, err
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header = next((cols for cols in lines if cols[0] == "GROUP"), None)
    if header is None:
        return []
    # not strict: an empty assignment is printed as nothing, the row a column short
    return [dict(zip(header, cols, strict=False)) for cols in lines if cols[0] == group_id]


def _assignment(text: str) -> tuple[tuple[str, int], ...]:
    """The tools' ``topic:0,1,2`` (several topics joined by ``,`` too; ``-`` for none)."""
    found: list[tuple[str, int]] = []
    topic = ""
    for part in text.split(","):
        if part == "-":
            continue
        if ":" in part:
            topic, part = part.rsplit(":", 1)
        found.append((topic, int(part)))
    return tuple(sorted(found))


def _group(kafka: Kafka, group_id: str) -> GroupInfo:
    (group,) = [g for g in describe_all_groups(ClientConfig.load(kafka.bootstrap, None))
                if g.group_id == group_id]  # fmt: skip
    return group


def test_a_consumer_protocol_group_shows_its_member_and_assignment(kafka: Kafka) -> None:
    """A KIP-848 group with a running member: its member (client id, host) and the
    partitions it owns, as kafka-consumer-groups --describe --members --verbose shows."""
    group_id = kafka.unique("k848")
    topic = kafka.create_topic(f"{group_id}-in", 3)
    kafka.produce(topic, [(f"k{i}".encode(), 5, None) for i in range(30)])
    consumer = ("--topic", topic, "--group", group_id, "--from-beginning",
                "--command-property", "group.protocol=consumer",
                "--command-property", f"client.id={group_id}-client")  # fmt: skip
    with _running(kafka, "kafka-console-consumer", *consumer):

        def stable() -> dict[str, str] | None:
            rows = _table(kafka, "kafka-consumer-groups", group_id, "--members", "--verbose")
            owned = [r for r in rows if r.get("#PARTITIONS") == "3"]
            done = (
                len(rows) == 1
                and owned
                and owned[0]["CURRENT-ASSIGNMENT"] == owned[0].get("TARGET-ASSIGNMENT")
            )
            return owned[0] if done else None

        row = _until("the member to own all 3 partitions", stable)
        group = _group(kafka, group_id)

    assert (group.group_type, group.protocol) == ("consumer", "")  # the assignor is the broker's
    owned = _assignment(row["CURRENT-ASSIGNMENT"])
    assert [(m.member_id, m.client_id, m.host, m.partitions) for m in group.members] == [
        (row["CONSUMER-ID"], row["CLIENT-ID"], row["HOST"], owned)
    ]
    assert owned == tuple((topic, p) for p in range(3))
    assert group.subscribed == (topic,) and group.reads(topic)


def test_a_share_group_running_then_stopped_still_reads_its_topic(kafka: Kafka) -> None:
    """A share group with a running member: the member and its assignment, as
    kafka-share-groups --describe --members shows; once stopped it has no member, and
    commits no offsets, but still reads the topic: the partitions it has share state
    for, with their start offsets, as kafka-share-groups --describe --offsets shows."""
    group_id = kafka.unique("share")
    topic = kafka.create_topic(f"{group_id}-in", 2)
    share = ("--topic", topic, "--group", group_id,
             "--command-property", f"client.id={group_id}-client")  # fmt: skip

    def members() -> list[dict[str, str]]:
        return _table(kafka, "kafka-share-groups", group_id, "--members")

    with _running(kafka, "kafka-console-share-consumer", *share):
        row = _until(
            "the share member to own both partitions",
            lambda: next((r for r in members() if r.get("#PARTITIONS") == "2"), None),
        )
        running = _group(kafka, group_id)
        # a record while it runs: partition 0 then usually has a start offset persisted
        # when the member leaves, partition 1 none (-1), and the comparison below sees both
        kafka.produce(topic, [(b"while-running", 5, 0)])
        time.sleep(3)

    assert (running.group_type, running.state, running.committed) == ("share", "Stable", {})
    assert [(m.member_id, m.client_id, m.host, m.partitions) for m in running.members] == [
        (row["CONSUMER-ID"], row["CLIENT-ID"], row["HOST"], _assignment(row["ASSIGNMENT"]))
    ]
    assert running.members[0].partitions == ((topic, 0), (topic, 1))

    _until("the share member to leave", lambda: True if not members() else None)
    offsets = _table(kafka, "kafka-share-groups", group_id, "--offsets")
    expected = {(r["TOPIC"], int(r["PARTITION"])): -1 if r["START-OFFSET"] == "-" else
                int(r["START-OFFSET"]) for r in offsets}  # fmt: skip
    assert set(expected) == {(topic, 0), (topic, 1)}

    stopped = _group(kafka, group_id)
    assert (stopped.state, stopped.members, stopped.committed) == ("Empty", (), {})
    assert stopped.share_started == expected
    assert stopped.subscribed == (topic,) and stopped.reads(topic)


def test_share_group_reset_is_latest_until_the_group_config_says_earliest(kafka: Kafka) -> None:
    """``share.auto.offset.reset``, a group config: its default, then what kafka-configs
    sets (a group config may be set before the group exists)."""
    client = ClientConfig.load(kafka.bootstrap, None)
    group_id = kafka.unique("share-reset")
    assert share_group_reset(client, group_id) == "latest"
    rc, out, err = kafka.tool("kafka-configs", "--bootstrap-server", kafka.bootstrap, "--alter",
                              "--entity-type", "groups", "--entity-name", group_id,
                              "--add-config", "share.auto.offset.reset=earliest")  # fmt: skip
    assert rc == 0, out + err
    rc, out, err = kafka.tool("kafka-configs", "--bootstrap-server", kafka.bootstrap, "--describe",
                              "--entity-type", "groups", "--entity-name", group_id)  # fmt: skip
    assert rc == 0 and "share.auto.offset.reset=earliest" in out, out + err
    assert share_group_reset(client, group_id) == "earliest"


def test_readers_names_a_share_group_and_judges_it_by_its_reset_setting(kafka: Kafka) -> None:
    """A share group that read the topic and stopped: ``migcheck readers`` lists it as a
    share group, at risk of loss while its share.auto.offset.reset is the default
    (latest), and not once kafka-configs sets earliest."""
    group_id = kafka.unique("share-readers")
    topic = kafka.create_topic(f"{group_id}-in", 2)
    with _running(kafka, "kafka-console-share-consumer", "--topic", topic, "--group", group_id):
        _until(
            "the share member to own both partitions",
            lambda: next(
                (r for r in _table(kafka, "kafka-share-groups", group_id, "--members")
                 if r.get("#PARTITIONS") == "2"),
                None,
            ),
        )  # fmt: skip

    def judged() -> tuple[str, list[str]]:
        p = run_cli("readers", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
                    "--to", "4", "--format", "json")  # fmt: skip
        assert p.returncode == 0, p.stderr
        (reader,) = json.loads(p.stdout)["topics"][0]["readers"]
        assert reader["id"] == group_id
        return reader["kind"], [j["risk"] for j in reader["judgements"]]

    assert judged() == ("share-group", ["LOSS_RISK"])
    rc, out, err = kafka.tool("kafka-configs", "--bootstrap-server", kafka.bootstrap, "--alter",
                              "--entity-type", "groups", "--entity-name", group_id,
                              "--add-config", "share.auto.offset.reset=earliest")  # fmt: skip
    assert rc == 0, out + err
    assert judged() == ("share-group", [])
