"""Discovering an application on the real broker: its group, committed offsets and topics.

Groups and offsets are made by Kafka's own console consumer, and checked
against Kafka's own kafka-consumer-groups tool; discovery must change nothing.
Streams groups are made by a real Kafka Streams app on the streams protocol
(fixtures/java/streams/StreamsFixture.java, ``--protocol streams``) and checked
against Kafka's own StreamsGroupCommand; the expected topologies are written
by hand from what each fixture topology is (fixtures/java/streams/README.md).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafkatest import (
    KAFKA_LOCAL,
    REPO,
    STREAMS_SRC,
    Kafka,
    compile_fixture,
    kafka_classpath,
    run,
    state_dir,
)

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.groups import (
    StreamsGroup,
    StreamsSubtopology,
    TopicInfo,
    describe_group,
    describe_streams_group,
    topics_with_prefix,
)

pytestmark = pytest.mark.kafka


def _console_consumer(kafka: Kafka, topic: str, group: str, client_id: str) -> list[str]:
    """Kafka's console consumer in ``group``, as a member named ``client_id``."""
    return [
        "kafka-console-consumer",
        "--bootstrap-server",
        kafka.bootstrap,
        "--topic",
        topic,
        "--group",
        group,
        "--consumer-property",
        f"client.id={client_id}",
    ]


def _consume(kafka: Kafka, topic: str, group: str, client_id: str, count: int) -> None:
    args = _console_consumer(kafka, topic, group, client_id)
    rc, _, err = kafka.tool(*args, "--from-beginning", "--max-messages", str(count))
    assert rc == 0, err


def _group_offsets(kafka: Kafka, group: str) -> str:
    rc, out, err = kafka.tool(
        "kafka-consumer-groups",
        "--bootstrap-server",
        kafka.bootstrap,
        "--describe",
        "--group",
        group,
    )
    assert rc == 0, err
    return out


def test_committed_offsets_name_the_source_topics(kafka: Kafka) -> None:
    app = kafka.unique("shop")
    orders = kafka.create_topic(f"{app}-in", 3)
    kafka.produce(orders, [(f"k{i}".encode(), 5, None) for i in range(30)])
    _consume(kafka, orders, app, f"{app}-abc-StreamThread-1-consumer", 30)
    before = _group_offsets(kafka, app)

    group = describe_group(ClientConfig.load(kafka.bootstrap, None), app)
    assert group is not None
    assert (group.group_type, group.state) == ("classic", "Empty")
    assert group.committed_topics == (orders,)
    assert sum(group.committed.values()) == 30  # every record consumed and committed
    assert group.members == ()  # the console consumer has left
    assert _group_offsets(kafka, app) == before  # read-only


def test_live_member_and_missing_group(kafka: Kafka) -> None:
    app = kafka.unique("live")
    topic = kafka.create_topic(f"{app}-in", 2)
    client = ClientConfig.load(kafka.bootstrap, None)
    assert describe_group(client, app) is None
    consumer = subprocess.Popen(
        [
            str(KAFKA_LOCAL),
            "tool",
            *_console_consumer(kafka, topic, app, f"{app}-x-StreamThread-2-consumer"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        group = None
        for _ in range(60):
            group = describe_group(client, app)
            if group is not None and group.state == "Stable":
                break
            time.sleep(0.5)
        assert group is not None and group.state == "Stable"
        (member,) = group.members
        assert member.client_id == f"{app}-x-StreamThread-2-consumer"
    finally:
        consumer.terminate()
        consumer.wait(timeout=30)


def test_topics_with_prefix(kafka: Kafka) -> None:
    app = kafka.unique("prefixed")
    changelog = kafka.create_topic(f"{app}-counts", 2, cleanup_policy="compact")
    other = kafka.create_topic("unrelated", 1)
    found = topics_with_prefix(ClientConfig.load(kafka.bootstrap, None), f"{app}-")
    assert found == [changelog] and other not in found


# -- streams groups (KIP-1071) ---------------------------------------------------------------

#: Kafka Streams' own WARN+ logging to stderr (see fixtures/java/streams/README.md).
STREAMS_LOG = "-Dlog4j2.configurationFile=" + str(REPO / "fixtures/java/streams/log4j2.yaml")


@dataclass(frozen=True)
class StreamsRun:
    """One run of the Kafka Streams fixture app, in the background."""

    app: str  # application.id = group id
    topic: str  # its input, 2 partitions
    process: subprocess.Popen[str]

    def finish(self) -> None:
        """Let a held app go (close its stdin), and wait until it has dumped its store and
        left the group (``close()`` with LEAVE_GROUP, as an operator stops it)."""
        out, err = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, f"{self.app}: {out[-2000:]} {err[-2000:]}"


def _start_streams(
    kafka: Kafka, cp: str, state_dir: Path, topology: str, *extra: str
) -> StreamsRun:
    app = kafka.unique(topology)
    topic = kafka.create_topic(f"{app}-in", 2)
    kafka.produce(topic, [(f"k{i}".encode(), f"v{i % 5}".encode(), None) for i in range(20)])
    cmd = ["java", STREAMS_LOG, "-cp", cp, "StreamsFixture", "run", "--topology", topology]
    cmd += ["--bootstrap-server", kafka.bootstrap, "--application-id", app, "--input", topic]
    cmd += ["--state-dir", str(state_dir / app), "--protocol", "streams", *extra]
    process = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return StreamsRun(app, topic, process)


@pytest.fixture(scope="module")
def streams_runs(
    kafka: Kafka, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, StreamsRun]]:
    """Three streams-protocol apps started at once, so their ~10 s runs overlap.

    ``rekey-count-fixed`` runs two threads and is held (``--hold``): once idle it stays
    up, a member of its group with its tasks, until its test calls ``finish()``; however
    slow the machine, the test finds it running, never Empty by a timer.
    """
    state = state_dir()
    cp = compile_fixture(state, STREAMS_SRC)
    stores = tmp_path_factory.mktemp("streams-state")
    runs = {
        "rekey-count-fixed": _start_streams(
            kafka, cp, stores, "rekey-count-fixed", "--threads", "2", "--hold"
        ),
        "rekey-count": _start_streams(kafka, cp, stores, "rekey-count"),
        "count-nolog": _start_streams(kafka, cp, stores, "count-nolog"),
    }
    yield runs
    for r in runs.values():
        if r.process.poll() is None:
            r.process.kill()
            r.process.wait(timeout=30)


def _streams_group_tool(kafka: Kafka, *args: str) -> str:
    """Kafka's own StreamsGroupCommand (kafka-streams-groups.sh), as an independent reader."""
    cmd = ["java", "-cp", kafka_classpath(), "org.apache.kafka.tools.streams.StreamsGroupCommand"]
    rc, out, err = run([*cmd, "--bootstrap-server", kafka.bootstrap, *args])
    assert rc == 0, err
    return out


def _tool_state(kafka: Kafka, app: str) -> tuple[str, int, int]:
    """(state, group epoch, member count) of a streams group, as StreamsGroupCommand prints."""
    out = _streams_group_tool(kafka, "--describe", "--group", app, "--state", "--verbose")
    (row,) = [line.split() for line in out.splitlines() if line.startswith(app + " ")]
    # GROUP COORDINATOR (ID) STATE GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH #MEMBERS
    return row[3], int(row[4]), int(row[6])


def _wait_until_assigned(
    client: ClientConfig, app: str, tasks: dict[str, set[int]]
) -> StreamsGroup:
    """Poll until the group is Stable with exactly ``tasks`` active over its members."""
    group = None
    for _ in range(240):
        group = describe_streams_group(client, app)
        if group is not None and group.state == "Stable" and _active(group) == tasks:
            return group
        time.sleep(0.25)
    raise AssertionError(f"never assigned {tasks}: {group}")


def _active(group: StreamsGroup) -> dict[str, set[int]]:
    """Every member's active tasks merged; a task owned twice would fail the caller's check."""
    merged: dict[str, set[int]] = {}
    for member in group.members:
        for sub, partitions in member.active_tasks.items():
            merged.setdefault(sub, set()).update(partitions)
    return merged


def _fixed_topology(app: str, topic: str) -> tuple[StreamsSubtopology, ...]:
    """rekey-count-fixed: selectKey -> repartition("rekey", 3 partitions) -> count("counts")."""
    repartition = f"{app}-rekey-repartition"
    return (
        StreamsSubtopology("0", (topic,), (), (repartition,), (), ()),
        StreamsSubtopology(
            "1",
            (),
            (),
            (),
            (TopicInfo(f"{app}-counts-changelog", 3),),
            (TopicInfo(repartition, 3),),
        ),
    )


def test_streams_group_while_running_and_after_it_left(
    kafka: Kafka, streams_runs: dict[str, StreamsRun]
) -> None:
    """Topology, members and tasks of a running app; after it leaves the topology stays.

    Observed on Kafka 4.3.1: once the app has left (group Empty, no members) the
    broker still describes the whole topology, with the partition counts it had.
    """
    run_ = streams_runs["rekey-count-fixed"]
    app, client = run_.app, ClientConfig.load(kafka.bootstrap, None)
    # Sub-topology 0 has a task per input partition (2), sub-topology 1 per fixed partition (3).
    group = _wait_until_assigned(client, app, {"0": {0, 1}, "1": {0, 1, 2}})
    assert group.topology == _fixed_topology(app, run_.topic)
    assert group.topology_epoch == 0
    assert len(group.members) == 2  # two stream threads, one process
    assert len({m.process_id for m in group.members}) == 1
    threads = sorted(m.client_id.split("-StreamThread-")[1] for m in group.members)
    assert threads == ["1-consumer", "2-consumer"]
    assert all(m.client_id.startswith(f"{app}-") for m in group.members)
    assert all(m.client_host.endswith("127.0.0.1") for m in group.members)
    assert sum(len(p) for m in group.members for p in m.active_tasks.values()) == 5  # no overlap
    assert all(m.standby_tasks == {} and m.warmup_tasks == {} for m in group.members)

    info = describe_group(client, app)
    assert info is not None and info.group_type == "streams"
    assert {m.member_id for m in info.members} == {m.member_id for m in group.members}

    run_.finish()
    before = _tool_state(kafka, app)
    empty = describe_streams_group(client, app)
    assert empty is not None and (empty.state, empty.members) == ("Empty", ())
    assert empty.topology == _fixed_topology(app, run_.topic)
    assert before == ("Empty", empty.group_epoch, 0)
    assert _tool_state(kafka, app) == before  # read-only: no epoch bump, no member


def test_unfixed_repartition_follows_the_input_and_nolog_has_no_changelog(
    kafka: Kafka, streams_runs: dict[str, StreamsRun]
) -> None:
    """rekey-count's repartition topic and changelog get the input's 2 partitions (not fixed);
    count-nolog has one sub-topology and no internal topic at all."""
    client = ClientConfig.load(kafka.bootstrap, None)
    rekey, nolog = streams_runs["rekey-count"], streams_runs["count-nolog"]
    rekey.finish()
    nolog.finish()

    group = describe_streams_group(client, rekey.app)
    repartition = f"{rekey.app}-rekey-group-repartition"
    assert group is not None and group.topology == (
        StreamsSubtopology("0", (rekey.topic,), (), (repartition,), (), ()),
        StreamsSubtopology(
            "1",
            (),
            (),
            (),
            (TopicInfo(f"{rekey.app}-counts-changelog", 2),),
            (TopicInfo(repartition, 2),),
        ),
    )

    group = describe_streams_group(client, nolog.app)
    assert group is not None and group.state == "Empty"
    assert group.topology == (StreamsSubtopology("0", (nolog.topic,), (), (), (), ()),)
    info = describe_group(client, nolog.app)
    assert info is not None and (info.group_type, info.state) == ("streams", "Empty")
    assert info.members == ()
    assert info.committed_topics == (nolog.topic,)


def test_classic_and_missing_groups_are_not_streams_groups(kafka: Kafka) -> None:
    """A classic group's name and an unknown name both give None, and create nothing."""
    app = kafka.unique("classic")
    topic = kafka.create_topic(f"{app}-in", 2)
    kafka.produce(topic, [(b"k", b"v", None)])
    _consume(kafka, topic, app, f"{app}-x-StreamThread-1-consumer", 1)
    client = ClientConfig.load(kafka.bootstrap, None)
    missing = kafka.unique("missing")

    assert describe_streams_group(client, app) is None
    assert describe_streams_group(client, missing) is None

    listed = _streams_group_tool(kafka, "--list").split()
    assert missing not in listed and app not in listed
    assert topics_with_prefix(client, missing) == []


def test_a_broker_error_is_one_read_error_line(kafka: Kafka) -> None:
    """The coordinator refuses an empty group id (INVALID_GROUP_ID): one line, no traceback."""
    with pytest.raises(ReadError) as caught:
        describe_streams_group(ClientConfig.load(kafka.bootstrap, None), "")
    assert str(caught.value) == (
        f"describing streams group '' at {kafka.bootstrap}: invalid group id"
    )
