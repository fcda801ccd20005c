"""migcheck.kafka.private_hooks: the fence around kafka-python's private code, and the
hooks against kafka-python's own code through a real ``KafkaConsumer`` and
``KafkaAdminClient`` talking to a broker in this process (``fakebroker``: kafka-python's
own protocol classes on real sockets; no Kafka, no JVM).

The hooks' public paths are compared with the hooks: the same Arrow batches from the same
broker, read with ``MIGCHECK_KAFKA_HOOKS=off`` and without.  The range the fence admits is
the pin in pyproject.toml.  Hooks 1 to 3 are tested in test_receive.py, hook 4's decoding
in test_recordbatch_decode.py.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
import os
import random
import re
import subprocess
import sys
import threading
import tomllib
import types
import uuid
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import kafka
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from batches import Record, batch, random_log
from fakebroker import FakeBroker, Partition
from kafka import TopicPartition
from kafka.cluster import ClusterMetadata
from kafka.protocol.admin import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata import MetadataResponse
from packaging.requirements import Requirement

from migcheck.errors import ReadError
from migcheck.kafka import fetch, private_hooks
from migcheck.kafka.config import ClientConfig, open_consumer
from migcheck.kafka.fetch import WorkUnit, read_units, read_whole
from migcheck.kafka.groups import (
    Member,
    describe_all_groups,
    describe_group,
    describe_streams_group,
)
from migcheck.kafka.private_hooks import OFF_SWITCH, fence, partition_gone
from migcheck.kafka.schemas import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
    StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
)

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / "migcheck" / "kafka" / "private_hooks.py"


# --- the fence ---------------------------------------------------------------------------


def _pin() -> Requirement:
    """The kafka-python requirement in pyproject.toml."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in deps if Requirement(d).name == "kafka-python"]
    return pin


@pytest.mark.parametrize(
    "version",
    ["2.3.1", "2.99", "3.0", "3.0.0", "3.0.12", "3.0.99.dev1", "3.1.0rc1", "3.1.0", "4.0.0"],
)
def test_the_fence_admits_what_the_pin_admits(version: str) -> None:
    assert fence(version).tested_version == _pin().specifier.contains(version, prereleases=True)


def test_a_version_that_does_not_parse_is_outside() -> None:
    assert not fence("3.0-custom build").tested_version


def test_this_process_is_fenced_by_the_kafka_python_it_imports() -> None:
    assert private_hooks.FENCE.version == kafka.__version__
    assert kafka.__version__ == importlib.metadata.version("kafka-python")
    assert private_hooks.FENCE.tested_version  # the pinned kafka-python: the hooks are used


def test_outside_the_range_every_use_is_refused_and_said_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(OFF_SWITCH, raising=False)
    closed = fence("3.1.0")
    assert [closed.open() for _ in range(3)] == [False, False, False]
    assert capsys.readouterr().err == (
        "migcheck: kafka-python 3.1.0 is outside migcheck's tested range <3.1,>=3.0: reading "
        "with kafka-python's own code (slower); streams, consumer-protocol and share groups "
        "not described\n"
    )


def test_inside_the_range_the_off_switch_alone_refuses_silently(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = fence("3.0.12")
    monkeypatch.delenv(OFF_SWITCH, raising=False)
    assert opened.open()
    monkeypatch.setenv(OFF_SWITCH, "off")
    assert not opened.open()
    assert capsys.readouterr().err == ""


def test_a_process_outside_the_range_hooks_nothing_and_says_so_once() -> None:
    """A fresh process whose fence is 3.1.0: every hook takes the public path (a lean
    client is kafka-python's own, its manager's ``_connect`` the class's), one line on
    stderr."""
    script = """
from kafka import TopicPartition
from migcheck.kafka import private_hooks as h
h.FENCE = h.fence("3.1.0")
client = h.lean_client(bootstrap_servers="127.0.0.1:1")
assert "_connect" not in vars(client._manager)
client.close()
assert not h.fetch_columns(object(), {})
assert not h.partition_gone(object(), TopicPartition("t", 0))
assert h.ask_group_coordinators(object(), ["app"], list) is None
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != OFF_SWITCH}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=REPO, env=env, timeout=60, check=False)  # fmt: skip
    assert r.stdout == "ok\n", r.stderr
    assert r.stderr.splitlines() == [fence("3.1.0").line]


# --- one module holds every hook ----------------------------------------------------------


def _private_uses(path: Path) -> list[str]:
    """``x._name`` (not on ``self`` or ``cls``) and imports of private kafka-python names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        on_self = isinstance(node, ast.Attribute) and ast.unparse(node.value) in ("self", "cls")
        if (
            isinstance(node, ast.Attribute)
            and re.fullmatch(r"_[a-z]\w*", node.attr)
            and not on_self
        ):
            found.append(ast.unparse(node))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kafka":
            names = [*node.module.split("."), *(a.name for a in node.names)]
            found += [f"from {node.module} import {n}" for n in names if n.startswith("_")]
    return found


#: The other libraries' private names migcheck uses, each in one module that says why:
#: PySpark's ``SparkContext`` (analysis/spark.py) and numba's function cache, which
#: jit.py gives a locator of its own (``dispatcher._cache``).
OTHER_LIBRARIES = {"migcheck/jit.py: dispatcher._cache"}


def test_no_module_but_the_hooks_touches_kafka_pythons_private_names() -> None:
    """Besides :data:`OTHER_LIBRARIES`, anything outside private_hooks.py fails here."""
    found = {
        f"{path.relative_to(REPO)}: {use}"
        for path in sorted((REPO / "migcheck").rglob("*.py"))
        if path != HOOKS
        for use in _private_uses(path)
        if not use.startswith("SparkContext.")
    }
    found -= OTHER_LIBRARIES
    assert found == set()
    assert "consumer._fetcher" in _private_uses(HOOKS)  # the check sees what it looks for


def test_the_hooks_module_lists_as_many_hooks_as_it_says() -> None:
    doc = private_hooks.__doc__ or ""
    listed = re.findall(r"^(\d)\. ", doc, re.MULTILINE)
    assert listed == [str(i) for i in range(1, len(listed) + 1)]
    words = {"six": 6, "seven": 7, "five": 5, "eight": 8}
    (said,) = re.findall(r"The (\w+) hooks", doc)
    assert words[said] == len(listed)


# --- the hooks against kafka-python's own consumer and admin client ---------------------


@pytest.fixture
def broker() -> Iterator[FakeBroker]:
    rng = random.Random(11)
    logs = [random_log(rng, start) for start in (0, 0, 500)]
    trimmed = [Record(1000 + i, b"k%d" % i, b"v" * i) for i in range(80)]  # 100 to 179
    topics = {
        "events": [
            Partition(b, aborted, log_start=start)
            for (b, aborted), start in zip(logs, (0, 0, 500), strict=True)
        ],
        "trimmed": [Partition([batch(100, trimmed)], log_start=100)],
    }
    fake = FakeBroker(topics)
    yield fake
    fake.close()


def _read(
    broker: FakeBroker,
    units: list[WorkUnit],
    every_record: bool,
    fetch_bytes: int = 4096,
    together: bool = False,
    idle_timeout_s: float = 5,
) -> pa.Table:
    """``read_units``' batches, the consumer fetching ``fetch_bytes`` a partition (several
    fetches a partition); ``together``: its partitions in one group, else a partition
    after another (groups of one partition)."""
    client = ClientConfig(broker.bootstrap, {}, {"max_partition_fetch_bytes": fetch_bytes})
    width = fetch.GROUP_MAX_PARTITIONS if together else 1
    with mock.patch.object(fetch, "GROUP_MAX_PARTITIONS", width):
        batches = list(read_units(client, units, idle_timeout_s=idle_timeout_s,
                                  every_record=every_record))  # fmt: skip
    return pa.Table.from_batches(batches).combine_chunks()


def _hooks(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    if on:
        monkeypatch.delenv(OFF_SWITCH, raising=False)
    else:
        monkeypatch.setenv(OFF_SWITCH, "off")


@pytest.mark.parametrize("every_record", [False, True])
def test_reads_with_and_without_the_hooks_give_the_same_batches(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch, every_record: bool
) -> None:
    """Hook 4 against kafka-python's own records (and hooks 1 to 3 on the way): whole
    partitions, windows that start and end inside batches, a partition whose log starts
    at 500, across several fetches each."""
    ends = [p.end for p in broker.topics["events"]]
    units = [
        WorkUnit("events", 0, 0, ends[0]),
        WorkUnit("events", 1, 7, max(8, ends[1] // 2)),
        WorkUnit("events", 1, ends[1] // 2 + 3, ends[1]),
        WorkUnit("events", 2, 500, ends[2]),
    ]
    _hooks(monkeypatch, on=True)
    fast = _read(broker, units, every_record)
    together = _read(broker, units, every_record, together=True)
    _hooks(monkeypatch, on=False)
    public = _read(broker, units, every_record)
    public_together = _read(broker, units, every_record, together=True)  # no groups
    assert fast.num_rows > 300
    assert fast.equals(public)
    # all partitions at once, partition 1's two windows in two rounds: the same batches,
    # in the units' order
    assert together.equals(public)
    assert public_together.equals(public)


def test_a_partition_a_group_read_then_read_alone_is_read_whole(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group ends inside partition 1 (its records cap reached), so its last window is
    read alone after the group paused the partition: the records are kafka-python's
    own, every one of them."""
    ends = [p.end for p in broker.topics["events"]]
    units = [
        WorkUnit("events", 0, 0, ends[0]),
        WorkUnit("events", 1, 0, ends[1] // 2),
        WorkUnit("events", 1, ends[1] // 2, ends[1]),
    ]
    groups = []
    with mock.patch.object(fetch, "GROUP_MAX_RECORDS", ends[0] + ends[1] // 2):
        groups = list(fetch.reading_groups(units))
        _hooks(monkeypatch, on=True)
        grouped = _read(broker, units, every_record=True, together=True)
    assert groups == [units[:2], units[2:]]
    _hooks(monkeypatch, on=False)
    assert grouped.equals(_read(broker, units, every_record=True))


def test_groups_hold_at_most_so_many_partitions_and_records() -> None:
    """A group closes before a partition past the cap, or records past it; a unit
    bigger than the cap is a group alone; the units keep their order."""
    units = [WorkUnit("t", p, 0, 10) for p in range(5)] + [WorkUnit("t", 5, 0, 500)]
    units += [WorkUnit("t", 6, 0, 5), WorkUnit("t", 6, 5, 10)]
    with (
        mock.patch.object(fetch, "GROUP_MAX_PARTITIONS", 2),
        mock.patch.object(fetch, "GROUP_MAX_RECORDS", 100),
    ):
        groups = list(fetch.reading_groups(units))
    assert [[(u.partition, u.start) for u in g] for g in groups] == [
        [(0, 0), (1, 0)],
        [(2, 0), (3, 0)],
        [(4, 0)],
        [(5, 0)],
        [(6, 0), (6, 5)],
    ]


def test_a_copys_whole_records_are_kafka_pythons_with_and_without_the_hooks(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read_whole`` (a copy's read): hook 4 with bodies against kafka-python's own
    records, over windows that start and end inside batches, several fetches each, with
    headers, tombstones and aborted transactions in the logs."""
    client = ClientConfig(broker.bootstrap, {}, {"max_partition_fetch_bytes": 4096})
    ends = [p.end for p in broker.topics["events"]]
    windows = [(0, 0, ends[0]), (1, 7, ends[1] // 2), (2, 500, ends[2])]

    def read() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], int]:
        chunks = [read_whole(client, "events", p, a, b, idle_timeout_s=5) for p, a, b in windows]
        records = [
            (r.offset, r.timestamp, r.key, r.value, list(r.headers))
            for chunk in chunks
            for r in chunk.records
        ]
        return records, [f for chunk in chunks for f in chunk.fields()], sum(map(len, chunks))

    _hooks(monkeypatch, on=True)
    fast, fast_fields, count = read()
    _hooks(monkeypatch, on=False)
    public, public_fields, _ = read()
    assert len(fast) > 300 and any(h for *_, h in fast) and any(v is None for *_, v, _ in fast)
    assert fast == public
    assert fast_fields == public_fields == [(v, k, t, h or None) for _, t, k, v, h in public]
    assert count == len(public)


@pytest.mark.parametrize(("hooks", "together"), [(True, False), (False, False), (True, True)])
def test_a_full_scan_below_the_log_start_fails_and_a_sample_starts_at_it(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch, hooks: bool, together: bool
) -> None:
    """The full scan's reset policy, kafka-python's public ``auto_offset_reset='none'``:
    as kafka-python documents it, a fetch out of range raises (the records below 100
    were deleted); 'earliest', a sample's, moves to the log start.  Read together with
    another partition, the line names the partition that failed."""
    _hooks(monkeypatch, on=hooks)
    unit = WorkUnit("trimmed", 0, 0, broker.topics["trimmed"][0].end)
    other = [WorkUnit("events", 0, 0, broker.topics["events"][0].end)] if together else []
    with pytest.raises(ReadError, match=r"^trimmed-0: records from offset 0 were deleted"):
        _read(broker, [*other, unit], every_record=True, together=together)
    sample = _read(broker, [*other, unit], every_record=False, together=together)
    trimmed = sample.filter(pc.equal(sample.column("topic"), "trimmed"))
    assert trimmed.column("offset").to_pylist() == list(range(100, 180))


@pytest.mark.parametrize(
    ("hooks", "says"),
    [(True, r"the record batch at offset 100 fails its CRC check"), (False, r"failed crc check")],
)
def test_a_corrupt_batch_fails_the_read_in_one_line(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch, hooks: bool, says: str
) -> None:
    """Hook 4's decoder and kafka-python's own check the CRC: either way a ReadError."""
    _hooks(monkeypatch, on=hooks)
    log = broker.topics["trimmed"][0]
    corrupt = bytearray(log.batches[0])
    corrupt[-3] ^= 0xFF  # inside the last record: only the CRC can tell
    log.batches[0] = bytes(corrupt)
    with pytest.raises(ReadError, match=f"^trimmed-0: .*{says}"):
        _read(broker, [WorkUnit("trimmed", 0, 100, log.end)], every_record=True)


@pytest.mark.parametrize(
    ("hooks", "together", "says"),
    [
        (True, False, "trimmed-0 was deleted during the read"),
        (True, True, "trimmed-0 was deleted during the read"),
        (False, False, "trimmed-0: no records between offset"),
    ],
)
def test_a_topic_deleted_under_a_read_ends_it(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch, hooks: bool, together: bool, says: str
) -> None:
    """Hook 5: kafka-python drops a deleted topic from its metadata cache, and the read
    stops at once, saying so; without the hook it ends at its idle timeout (5 s with the
    hook, which must come first; 2 s without, which only waits it out), the one line
    saying only that no records came.  Read together with a partition that is done, the
    same."""
    _hooks(monkeypatch, on=hooks)
    end = broker.topics["trimmed"][0].end
    other = [WorkUnit("events", 0, 0, broker.topics["events"][0].end)] if together else []
    threading.Timer(1.0, broker.delete, args=("trimmed",)).start()
    units = [*other, WorkUnit("trimmed", 0, 100, end + 50)]
    with pytest.raises(ReadError, match=says):
        _read(broker, units, True, together=together, idle_timeout_s=5 if hooks else 2)


def test_a_partition_that_stops_short_times_out_while_another_is_read_together(
    broker: FakeBroker,
) -> None:
    """A together read whose one partition cannot reach its end (offsets past the log's
    end here, an open transaction in life) fails at the idle timeout, naming it."""
    end = broker.topics["trimmed"][0].end
    units = [WorkUnit("events", 0, 0, broker.topics["events"][0].end),
             WorkUnit("trimmed", 0, 100, end + 50)]  # fmt: skip
    with pytest.raises(ReadError, match=rf"^trimmed-0: no records between offset {end} "):
        _read(broker, units, every_record=False, together=True, idle_timeout_s=2)


def test_the_consumers_metadata_refreshes_are_spaced_as_it_was_told(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hook 8: kafka-python 3.0's metadata cache keeps its own 100 ms backoff (checked
    here, so a release that fixes it shows); the hook hands it the consumer's."""
    client = ClientConfig(broker.bootstrap, {}, {"retry_backoff_ms": 7})
    for on, expected in ((False, 100), (True, 7)):
        _hooks(monkeypatch, on=on)
        consumer = open_consumer(client)
        try:
            assert consumer.config["retry_backoff_ms"] == 7
            assert consumer._manager.cluster.config["retry_backoff_ms"] == expected
        finally:
            consumer.close()


def _cluster(*topics: MetadataResponse.MetadataResponseTopic) -> types.SimpleNamespace:
    """A consumer's part hook 5 reads: kafka-python's own metadata cache, tracking
    ``topics`` (as ``assign`` makes it) and updated by a Metadata response of them."""
    r = MetadataResponse
    broker = r.MetadataResponseBroker(node_id=0, host="h", port=1)
    sent = r[12](throttle_time_ms=0, brokers=[broker], cluster_id="c", controller_id=0,
                 topics=list(topics))  # fmt: skip
    cluster = ClusterMetadata()
    cluster.set_topics([t.name for t in topics])
    cluster.update_metadata(r.decode(bytes(sent.encode()), version=12))  # as received
    return types.SimpleNamespace(_cluster=cluster)


def _topic(name: str, error: int, partitions: int) -> MetadataResponse.MetadataResponseTopic:
    t = MetadataResponse.MetadataResponseTopic
    p = t.MetadataResponsePartition
    return t(error_code=error, name=name, is_internal=False, partitions=[
        p(error_code=0, partition_index=i, leader_id=0, leader_epoch=0, replica_nodes=[0],
          isr_nodes=[0], offline_replicas=[]) for i in range(partitions)])  # fmt: skip


def test_a_denied_topic_is_not_gone_a_missing_one_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hook 5 against kafka-python's metadata cache: a topic answered
    TOPIC_AUTHORIZATION_FAILED (29) is kept in ``unauthorized_topics``, not "gone"; one
    answered UNKNOWN_TOPIC_OR_PARTITION (3), or a partition past the count, is."""
    monkeypatch.delenv(OFF_SWITCH, raising=False)
    consumer = _cluster(_topic("here", 0, 2), _topic("denied", 29, 0), _topic("deleted", 3, 0))
    assert not partition_gone(consumer, TopicPartition("here", 1))
    assert partition_gone(consumer, TopicPartition("here", 2))
    assert not partition_gone(consumer, TopicPartition("denied", 0))
    assert partition_gone(consumer, TopicPartition("deleted", 0))
    assert partition_gone(consumer, TopicPartition("never-heard-of", 0))


def _described(request: StreamsGroupDescribeRequest) -> StreamsGroupDescribeResponse:
    """What a broker answers: group ``app``, one sub-topology, one member."""
    g = StreamsGroupDescribeResponse.DescribedGroup
    s = g.Topology.Subtopology
    a = g.Member.Assignment
    changelog = s.TopicInfo(name="app-store-changelog", partitions=0, replication_factor=1,
                            topic_configs=[])  # fmt: skip
    none = a(active_tasks=[], standby_tasks=[], warmup_tasks=[])
    member = g.Member(member_id="m1", member_epoch=3, client_id="app-1-StreamThread-1",
                      client_host="/10.0.0.1", topology_epoch=2, process_id="p1",
                      client_tags=[], task_offsets=[], task_end_offsets=[], is_classic=False,
                      assignment=a(active_tasks=[a.TaskIds(subtopology_id="0", partitions=[1, 0])],
                                   standby_tasks=[], warmup_tasks=[]),
                      target_assignment=none)  # fmt: skip
    topology = g.Topology(epoch=2, subtopologies=[s(
        subtopology_id="0", source_topics=["events"], repartition_sink_topics=[],
        state_changelog_topics=[changelog], repartition_source_topics=[])])  # fmt: skip
    groups = [g(error_code=0, group_id=gid, group_state="Stable", group_epoch=3,
                assignment_epoch=3, topology=topology, members=[member])
              for gid in request.group_ids]  # fmt: skip
    return StreamsGroupDescribeResponse(throttle_time_ms=0, groups=groups)


@pytest.mark.parametrize("hooks", [True, False])
def test_a_streams_group_is_described_through_the_coordinator(
    broker: FakeBroker, monkeypatch: pytest.MonkeyPatch, hooks: bool
) -> None:
    """Hook 6 with kafka-python's own admin client: the coordinator found as its own
    group requests find it, the request decoded by the broker as sent, the answer read
    back; without the hook nothing is asked and the group is not described."""
    _hooks(monkeypatch, on=hooks)
    broker.script(StreamsGroupDescribeRequest, _described)
    got = describe_streams_group(ClientConfig.load(broker.bootstrap, None), "app")
    asked = [r for r in broker.requests if isinstance(r, StreamsGroupDescribeRequest)]
    if not hooks:
        assert got is None and asked == []
        return
    assert [(r.group_ids, r.include_authorized_operations) for r in asked] == [(["app"], False)]
    coordinator = [r for r in broker.requests if type(r).__name__ == "FindCoordinatorRequest"]
    assert [list(r.coordinator_keys) or [r.key] for r in coordinator] == [["app"]]
    assert got is not None and got.group_id == "app" and got.topology_epoch == 2
    assert got.topology is not None
    assert got.topology[0].source_topics == ("events",)
    assert [(m.member_id, m.active_tasks) for m in got.members] == [("m1", {"0": (0, 1)})]


# --- hook 6: consumer-protocol (KIP-848) and share (KIP-932) groups ----------------------

#: The groups the scripted coordinator knows: id, ListGroups' protocol type, state, type.
LISTED = [
    ("cls", "consumer", "Empty", "classic"),
    ("gone", "consumer", "Empty", "consumer"),  # deleted before it is described
    ("k1", "consumer", "Stable", "consumer"),
    ("k2", "consumer", "Empty", "consumer"),
    ("s1", "share", "Stable", "share"),
    ("s2", "share", "Empty", "share"),
]
#: Committed offsets, as OffsetFetch answers them.
COMMITTED = {"cls": {("events", 0): 10}, "k1": {("events", 0): 4, ("events", 1): 6}}
#: Share state, as DescribeShareGroupOffsets answers it: s2 has no member, and no start
#: offset persisted on events-1.
SHARE_STATE = {
    "s1": {("events", p): 0 for p in range(3)},
    "s2": {("events", 0): 5, ("events", 1): -1},
}
GROUP_ID_NOT_FOUND = 69


def _listed(request: ListGroupsRequest) -> ListGroupsResponse:
    g = ListGroupsResponse.ListedGroup
    groups = [g(group_id=i, protocol_type=p, group_state=s, group_type=t) for i, p, s, t in LISTED]
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=groups)


def _offsets(request: OffsetFetchRequest) -> OffsetFetchResponse:
    g = OffsetFetchResponse.OffsetFetchResponseGroup
    t = g.OffsetFetchResponseTopics
    p = t.OffsetFetchResponsePartitions
    groups = []
    for asked in request.groups:
        committed = COMMITTED.get(asked.group_id, {})
        topics = [t(name=name, partitions=[
            p(partition_index=i, committed_offset=o, committed_leader_epoch=-1, metadata="",
              error_code=0) for (n, i), o in committed.items() if n == name])
            for name in sorted({n for n, _ in committed})]  # fmt: skip
        groups.append(g(group_id=asked.group_id, topics=topics, error_code=0))
    return OffsetFetchResponse(throttle_time_ms=0, groups=groups)


def _classic_described(request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    """What Kafka 4.3.1 answers: a consumer-protocol group is "not a classic group"."""
    g = DescribeGroupsResponse.DescribedGroup
    types = {i: t for i, _, _, t in LISTED}
    return DescribeGroupsResponse(throttle_time_ms=0, groups=[
        g(error_code=0, group_id=i, group_state="Empty", protocol_type="consumer",
          protocol_data="", members=[])
        if types[i] == "classic" else
        g(error_code=GROUP_ID_NOT_FOUND, error_message=f"Group {i} is not a classic group.",
          group_id=i, group_state="Dead", protocol_type="", protocol_data="", members=[])
        for i in request.groups])  # fmt: skip


def _assignment(cls: type, topic: str, partitions: list[int]) -> object:
    tps = [cls.TopicPartitions(topic_id=uuid.UUID(int=7), topic_name=topic, partitions=partitions)]
    return cls(topic_partitions=tps)


def _consumer_described(request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    """k1: one member, owning events-1 and -0 now, meant to own -2 too; k2: no member;
    gone: deleted."""
    g = ConsumerGroupDescribeResponse.DescribedGroup
    a = g.Member.Assignment
    member = g.Member(member_id="m-k1", member_epoch=5, client_id="c-1", client_host="/10.0.0.2",
                      subscribed_topic_names=["events"],
                      assignment=_assignment(a, "events", [1, 0]),
                      target_assignment=_assignment(a, "events", [0, 1, 2]))  # fmt: skip

    def group(i: str) -> object:
        if i == "gone":
            return g(error_code=GROUP_ID_NOT_FOUND, error_message="Group gone not found.",
                     group_id=i, group_state="Dead", group_epoch=-1, assignment_epoch=-1,
                     assignor_name="", members=[])  # fmt: skip
        return g(error_code=0, group_id=i, group_state="Stable" if i == "k1" else "Empty",
                 group_epoch=5, assignment_epoch=5, assignor_name="uniform",
                 members=[member] if i == "k1" else [])  # fmt: skip

    return ConsumerGroupDescribeResponse(
        throttle_time_ms=0, groups=list(map(group, request.group_ids))
    )


def _share_described(request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    """s1: one member, owning events 0 to 2, subscribed also to a topic not created yet;
    s2: no member."""
    g = ShareGroupDescribeResponse.DescribedGroup
    a = g.Member.Assignment
    member = g.Member(member_id="m-s1", member_epoch=2, client_id="share-1",
                      client_host="/10.0.0.3", subscribed_topic_names=["events", "later"],
                      assignment=_assignment(a, "events", [2, 0, 1]))  # fmt: skip
    return ShareGroupDescribeResponse(throttle_time_ms=0, groups=[
        g(error_code=0, group_id=i, group_state="Stable" if i == "s1" else "Empty", group_epoch=2,
          assignment_epoch=2, assignor_name="simple", members=[member] if i == "s1" else [])
        for i in request.group_ids])  # fmt: skip


def _share_state(request: DescribeShareGroupOffsetsRequest) -> DescribeShareGroupOffsetsResponse:
    g = DescribeShareGroupOffsetsResponse.Group
    t = g.Topic
    groups = []
    for asked in request.groups:
        assert asked.topics is None  # every partition the group has state for
        state = SHARE_STATE.get(asked.group_id, {})
        partitions = [t.Partition(partition_index=i, start_offset=o, leader_epoch=0, error_code=0)
                      for (_, i), o in state.items()]  # fmt: skip
        topics = [t(topic_name="events", topic_id=uuid.UUID(int=7), partitions=partitions)]
        groups.append(g(group_id=asked.group_id, topics=topics if state else [], error_code=0))
    return DescribeShareGroupOffsetsResponse(throttle_time_ms=0, groups=groups)


@pytest.fixture
def groups_broker(broker: FakeBroker) -> FakeBroker:
    """The fake broker as the coordinator of :data:`LISTED`, answering every request that
    describes them as Kafka 4.3.1 does."""
    for request, answer in [
        (ListGroupsRequest, _listed),
        (OffsetFetchRequest, _offsets),
        (DescribeGroupsRequest, _classic_described),
        (ConsumerGroupDescribeRequest, _consumer_described),
        (ShareGroupDescribeRequest, _share_described),
        (DescribeShareGroupOffsetsRequest, _share_state),
    ]:
        broker.script(request, answer)
    return broker


def _asked(broker: FakeBroker, request: type) -> list[object]:
    return [r for r in broker.requests if isinstance(r, request)]


def test_consumer_protocol_and_share_groups_are_described_in_bulk(
    groups_broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hook 6 with kafka-python's own admin client: one ConsumerGroupDescribe for every
    consumer-protocol group, one ShareGroupDescribe and one DescribeShareGroupOffsets
    (every partition: topics null) for every share group, DescribeGroups for the classic
    group alone; members with their current assignment, and an empty share group's
    topics from its share state."""
    _hooks(monkeypatch, on=True)
    got = {
        g.group_id: g for g in describe_all_groups(ClientConfig.load(groups_broker.bootstrap, None))
    }

    (consumer,) = _asked(groups_broker, ConsumerGroupDescribeRequest)
    assert (consumer.group_ids, consumer.include_authorized_operations) == (
        ["gone", "k1", "k2"],
        False,
    )
    (share,) = _asked(groups_broker, ShareGroupDescribeRequest)
    assert share.group_ids == ["s1", "s2"]
    (state,) = _asked(groups_broker, DescribeShareGroupOffsetsRequest)
    assert [(g.group_id, g.topics) for g in state.groups] == [("s1", None), ("s2", None)]
    assert [r.groups for r in _asked(groups_broker, DescribeGroupsRequest)] == [["cls"]]
    (fetched,) = _asked(groups_broker, OffsetFetchRequest)
    assert [g.group_id for g in fetched.groups] == ["cls", "gone", "k1", "k2"]  # no share group

    assert list(got) == [i for i, *_ in LISTED]
    k1 = got["k1"]
    assert (k1.group_type, k1.state, k1.protocol) == (
        "consumer",
        "Stable",
        "",
    )  # no client assignor
    assert k1.members == (Member("m-k1", "c-1", "/10.0.0.2", (("events", 0), ("events", 1))),)
    assert k1.committed == COMMITTED["k1"] and k1.subscribed == ("events",)
    assert (got["k2"].members, got["k2"].subscribed) == ((), ())
    assert (got["gone"].group_type, got["gone"].members) == ("consumer", ())
    s1 = got["s1"]
    assert s1.members == (
        Member("m-s1", "share-1", "/10.0.0.3", tuple(("events", p) for p in range(3))),
    )
    assert (s1.subscribed, s1.share_started, s1.committed) == (
        ("events", "later"),
        SHARE_STATE["s1"],
        {},
    )
    s2 = got["s2"]
    assert (s2.members, s2.subscribed, s2.share_started) == ((), ("events",), SHARE_STATE["s2"])
    assert s2.reads("events") and not s2.reads("later") and s1.reads("later")
    assert got["cls"].committed == COMMITTED["cls"] and got["cls"].share_started == {}


def test_without_the_hook_those_groups_get_what_the_public_api_gives(
    groups_broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The public path: nothing kafka-python lacks is sent; consumer-protocol groups go to
    DescribeGroups (which answers "not a classic group": no members), share groups are
    their ListGroups entry; committed offsets are the same."""
    _hooks(monkeypatch, on=False)
    got = {
        g.group_id: g for g in describe_all_groups(ClientConfig.load(groups_broker.bootstrap, None))
    }
    for request in (
        ConsumerGroupDescribeRequest,
        ShareGroupDescribeRequest,
        DescribeShareGroupOffsetsRequest,
    ):
        assert _asked(groups_broker, request) == []
    assert [r.groups for r in _asked(groups_broker, DescribeGroupsRequest)] == [
        ["cls", "gone", "k1", "k2"]
    ]
    assert [(g.group_type, g.state) for g in got.values()] == [(t, s) for _, _, s, t in LISTED]
    assert all(
        g.members == () and g.subscribed == () and g.share_started == {} for g in got.values()
    )
    assert got["k1"].committed == COMMITTED["k1"]
    assert not got["s2"].reads("events")  # what the hook is for


def test_one_group_described_alone_asks_its_own_request(
    groups_broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hooks(monkeypatch, on=True)
    client = ClientConfig.load(groups_broker.bootstrap, None)
    s2 = describe_group(client, "s2")
    k1 = describe_group(client, "k1")
    assert s2 is not None and s2.share_started == SHARE_STATE["s2"]
    assert k1 is not None and [m.partitions for m in k1.members] == [(("events", 0), ("events", 1))]
    assert [r.group_ids for r in _asked(groups_broker, ShareGroupDescribeRequest)] == [["s2"]]
    assert [r.group_ids for r in _asked(groups_broker, ConsumerGroupDescribeRequest)] == [["k1"]]
    assert _asked(groups_broker, DescribeGroupsRequest) == []


def test_a_broker_without_the_share_requests_describes_share_groups_as_the_public_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kafka 4.0 (share groups early access, neither request in its ApiVersions):
    kafka-python refuses to send them, and the share groups are their ListGroups entry."""
    _hooks(monkeypatch, on=True)
    old = FakeBroker({}, broker_version=(4, 0))
    try:
        for request, answer in [(ListGroupsRequest, _listed), (OffsetFetchRequest, _offsets),
                                (DescribeGroupsRequest, _classic_described),
                                (ConsumerGroupDescribeRequest, _consumer_described)]:  # fmt: skip
            old.script(request, answer)
        got = {g.group_id: g for g in describe_all_groups(ClientConfig.load(old.bootstrap, None))}
    finally:
        old.close()
    assert (
        _asked(old, ShareGroupDescribeRequest)
        == _asked(old, DescribeShareGroupOffsetsRequest)
        == []
    )
    assert (got["s1"].members, got["s2"].subscribed) == ((), ())
    assert [m.client_id for m in got["k1"].members] == ["c-1"]


@pytest.mark.parametrize(
    ("request_class", "refused", "in_bulk", "alone"),
    [
        (ShareGroupDescribeRequest, "s1", "group 's1': ", ""),
        (DescribeShareGroupOffsetsRequest, "s2", "group 's2', events-1: ", "events-1: "),
        (ConsumerGroupDescribeRequest, "k1", "group 'k1': ", ""),
    ],
)
def test_a_group_or_partition_error_is_one_line(
    groups_broker: FakeBroker,
    monkeypatch: pytest.MonkeyPatch,
    request_class: type,
    refused: str,
    in_bulk: str,
    alone: str,
) -> None:
    """Any error but GROUP_ID_NOT_FOUND fails the read in one ReadError line, naming the
    group (unless the line names it already) and the partition: what the group reads
    cannot be told."""
    _hooks(monkeypatch, on=True)
    handler = {ShareGroupDescribeRequest: _share_described,
               ConsumerGroupDescribeRequest: _consumer_described,
               DescribeShareGroupOffsetsRequest: _share_state}[request_class]  # fmt: skip

    def failing(request: object) -> object:
        response = handler(request)
        for group in response.groups:
            if group.group_id != refused:
                continue
            if request_class is DescribeShareGroupOffsetsRequest:
                group = group.topics[0].partitions[1]  # events-1
            group.error_code, group.error_message = 30, "denied"
        return response

    groups_broker.script(request_class, failing)
    client = ClientConfig.load(groups_broker.bootstrap, None)
    error = "group authorization failed: denied"  # Error 30, no class name
    with pytest.raises(ReadError) as raised:
        describe_all_groups(client)
    assert (
        str(raised.value) == f"listing the groups at {client.bootstrap_servers}: {in_bulk}{error}"
    )
    with pytest.raises(ReadError) as raised:
        describe_group(client, refused)
    assert str(raised.value) == (
        f"reading group {refused!r} from {client.bootstrap_servers}: {alone}{error}"
    )


def test_each_coordinator_is_asked_once_for_its_groups() -> None:
    """Hook 6's bucketing, with kafka-python's coordinator lookup and connection manager
    stood in for (one fake broker is one node): groups in the order given, one request
    per coordinator, the answers in the order of each coordinator's first group."""
    sent: list[tuple[int, list[str]]] = []

    async def find(ids: list[str]) -> dict[str, int]:
        return {g: {"a": 1, "b": 2, "c": 1, "d": 3}[g] for g in ids}

    async def send(request: list[str], node_id: int) -> str:
        sent.append((node_id, request))
        return f"answer of {node_id}"

    manager = types.SimpleNamespace(run=lambda coro, *args: asyncio.run(coro(*args)), send=send)
    admin = types.SimpleNamespace(_find_coordinator_ids=find, _manager=manager)
    got = private_hooks.ask_group_coordinators(admin, ["c", "b", "a", "d"], list)  # type: ignore[arg-type]
    assert sent == [(1, ["c", "a"]), (2, ["b"]), (3, ["d"])]
    assert got == ["answer of 1", "answer of 2", "answer of 3"]
    assert private_hooks.ask_group_coordinators(admin, [], list) == []  # type: ignore[arg-type]


# --- hook 7: a refused login ------------------------------------------------------------


def _connected(outcome: Exception) -> dict[str, Exception]:
    """The manager's authentication failures after hook 7's ``_connect`` ran a connect step
    that fails the connection's ``init_future`` with ``outcome`` and then, as kafka-python
    3.0's own step does when nothing was raised, clears the node's entry."""
    from kafka.future import Future

    manager = types.SimpleNamespace(_auth_failures={"bootstrap-0": KeyError("stale")})

    async def connect(node: object, conn: object) -> None:
        conn.init_future.failure(outcome)  # type: ignore[attr-defined]
        manager._auth_failures.pop("bootstrap-0", None)

    node = types.SimpleNamespace(node_id="bootstrap-0")
    conn = types.SimpleNamespace(init_future=Future(), connection_made=print)
    asyncio.run(private_hooks.remembering_refusals(connect, manager)(node, conn))
    return manager._auth_failures


def test_a_refused_login_is_kept_as_the_nodes_failure_and_nothing_else_is() -> None:
    from kafka.errors import KafkaConnectionError, SaslAuthenticationFailedError

    refusal = SaslAuthenticationFailedError("invalid credentials")
    assert _connected(refusal) == {"bootstrap-0": refusal}
    assert _connected(KafkaConnectionError("socket disconnected")) == {}
