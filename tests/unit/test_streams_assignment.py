"""A Kafka Streams member's classic assignment says which sub-topology reads each partition.

The bytes below are what Kafka Streams 4.3.1's own ``AssignmentInfo.encode()`` wrote, run
under Java 17 for this test, for the active tasks 1_0, 0_0, 0_2, 0_0, 0_2 (with a standby
task and a host map after them, which the decoder must step over or ignore), at each
layout's version: 1 and 2 (no second version int), 3 and 6, and 10 and 11 (a named
topology's length after each task).  The assignor pairs the tasks with the member's
partitions sorted by topic, then number (StreamsPartitionAssignor.PARTITION_COMPARATOR).
"""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from migcheck.kafka.groups import _classic
from migcheck.kafka.streams_assignment import subtopologies_by_partition

ENCODED = {
    1: "0000000100000005000000010000000000000000000000000000000000000002"
    "000000000000000000000000000000020000000100000000000000010000000100066f72646572"
    "7300000001",
    2: "0000000200000005000000010000000000000000000000000000000000000002"
    "000000000000000000000000000000020000000100000000000000010000000100066f72646572"
    "730000000100000001000168000000010000000100066f726465727300000000",
    3: "000000030000000300000005000000010000000000000000000000000000000000000002"
    "000000000000000000000000000000020000000100000000000000010000000100066f72646572"
    "730000000100000001000168000000010000000100066f726465727300000000",
    6: "000000060000000600000005000000010000000000000000000000000000000000000002"
    "000000000000000000000000000000020000000100000000000000010000000100066f72646572"
    "7300000001000000010000000000066f72646572730000000100016800000001000000010000"
    "0000000000000000000000000000",
    10: "0000000a0000000a000000050000000100000000000000000000000000000000000000000000"
    "00000000000200000000000000000000000000000000000000000000000200000000000000010000"
    "000000000001000000000000000100066f726465727300000001000000010000000000066f726465"
    "7273000000010001680000000100000001000000000000000000000000000000007fffffffffffffff",
    11: "0000000b0000000b000000050000000100000000000000000000000000000000000000000000"
    "00000000000200000000000000000000000000000000000000000000000200000000000000010000"
    "000000000001000000000000000100066f726465727300000001000000010000000000066f726465"
    "7273000000010001680000000100000001000000000000000000000000000000007fffffffffffffff",
}
#: AssignmentInfo(11, ...) of tasks 0_1 and 2_1 of the named topology "té"
NAMED = (
    "0000000b0000000b00000002000000000000000100000002007400e9000000020000000100000002007400e9"
    "00000000000000000000000000000000000000007fffffffffffffff"
)
#: AssignmentInfo(11, ...) with no task and error code 1 (a shutdown the leader asks for)
ERROR = "0000000b0000000b0000000000000000000000000000000000000000000000017fffffffffffffff"

#: The member's partitions, in no order; sorted, they are a-0, a-1, b-0, c-1, c-3.
PARTITIONS = [("c", 3), ("b", 0), ("a", 1), ("c", 1), ("a", 0)]


def test_every_version_pairs_the_sorted_partitions_with_their_tasks() -> None:
    expected = {("a", 0): 1, ("a", 1): 0, ("b", 0): 0, ("c", 1): 0, ("c", 3): 0}
    for version, data in ENCODED.items():
        assert subtopologies_by_partition(PARTITIONS, bytes.fromhex(data)) == expected, version


def test_a_named_topology_is_stepped_over() -> None:
    found = subtopologies_by_partition([("y", 1), ("x", 1)], bytes.fromhex(NAMED))
    assert found == {("x", 1): 0, ("y", 1): 2}


def test_what_does_not_pair_up_shows_nothing() -> None:
    """Evidence or none: never a guess from data of another shape."""
    data = bytes.fromhex(ENCODED[11])
    assert subtopologies_by_partition(PARTITIONS[:4], data) == {}  # not one task a partition
    assert subtopologies_by_partition([], bytes.fromhex(ERROR)) == {}
    assert subtopologies_by_partition(PARTITIONS, None) == {}
    assert subtopologies_by_partition(PARTITIONS, data[:20]) == {}  # cut short
    future = (12).to_bytes(4, "big") + data[4:]
    assert subtopologies_by_partition(PARTITIONS, future) == {}  # a layout not read
    assert subtopologies_by_partition(PARTITIONS, b"\x00\x01range") == {}


def test_a_classic_member_carries_its_partitions_sub_topologies() -> None:
    """As kafka-python's DescribeGroups answer hands a member's decoded assignment on."""
    assignment = {
        "assigned_partitions": [
            {"topic": "a", "partitions": [1, 0]},
            {"topic": "b", "partitions": [0]},
            {"topic": "c", "partitions": [3, 1]},
        ],
        "user_data": bytes.fromhex(ENCODED[11]),
    }
    described = {"members": [{"member_id": "m", "member_assignment": assignment}]}
    (member,) = _classic(described).members
    assert member.partitions == (("a", 0), ("a", 1), ("b", 0), ("c", 1), ("c", 3))
    assert member.subtopology_of[("a", 0)] == 1 and member.subtopology_of[("b", 0)] == 0
    plain = {"members": [{"member_id": "m", "member_assignment": {**assignment, "user_data": b""}}]}
    assert _classic(plain).members[0].subtopology_of == {}


def test_kafka_pythons_describe_answer_is_read_as_it_hands_it_on() -> None:
    """kafka-python 3's DescribeGroups answer decodes a member's assignment and makes it
    JSON-able (``to_dict()``): the user data arrives as text, every byte that is not UTF-8
    written ``\\xNN``.  Its own encoder and decoder make that text here."""
    wire = ConsumerProtocolAssignment(
        assigned_partitions=[
            ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=ps)
            for t, ps in (("a", [1, 0]), ("b", [0]), ("c", [3, 1]))
        ],
        user_data=bytes.fromhex(ENCODED[11]),
        version=0,
    ).encode()
    answer = ConsumerProtocolAssignment.decode(wire).to_dict()
    assert isinstance(answer["user_data"], str)  # what _classic is handed
    described = {"members": [{"member_id": "m", "member_assignment": answer}]}
    (member,) = _classic(described).members
    expected = {("a", 0): 1, ("a", 1): 0, ("b", 0): 0, ("c", 1): 0, ("c", 3): 0}
    assert member.subtopology_of == expected
    # a byte 0x5C (partition 92) and bytes above 0x7F (sub-topology 200) come back whole
    data = bytes.fromhex("0000000200000002000000c800000005000000000000005c")
    back = ConsumerProtocolAssignment.decode(
        ConsumerProtocolAssignment(
            assigned_partitions=[
                ConsumerProtocolAssignment.TopicPartition(topic="t", partitions=[92, 5])
            ],
            user_data=data,
            version=0,
        ).encode()
    ).to_dict()
    (member,) = _classic({"members": [{"member_assignment": back}]}).members
    assert member.subtopology_of == {("t", 5): 200, ("t", 92): 0}
