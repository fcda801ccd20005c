"""Which task reads each partition of a Kafka Streams member, from its classic assignment.

On the classic protocol the group leader's ``StreamsPartitionAssignor`` sends each member
its partitions and, as the assignment's user data, an ``AssignmentInfo``: the member's
active tasks, one per assigned partition, in the order of the partitions sorted by topic
and number (``computeNewAssignment`` / ``populateActiveTaskAndPartitionsLists`` sort them
with ``PARTITION_COMPARATOR``; the member pairs them up again in ``getActiveTasks``).  A
task is ``<sub-topology>_<partition>``, so two topics whose partitions go to tasks of one
sub-topology are read together: joined, or merged.  That is evidence of the app's shape
that the cluster shows while the app runs, without ``--topology``.

The layout, from ``AssignmentInfo.encode`` and ``ConsumerProtocolUtils.writeTaskIdTo``
(the same in Kafka Streams 3.6 to 4.3, whose latest version is 11): an int version; from
version 3 an int, the commonly supported version; an int count of active tasks, each two
ints (sub-topology, partition) and, from version 10, a named topology's length and its
UTF-16 characters.  What follows (standby tasks, hosts) is not read.

Pure.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

#: Kafka Streams' StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION, 3.6 to 4.3.
LATEST_VERSION = 11
_NAMED_TOPOLOGY_VERSION = 10  # MIN_NAMED_TOPOLOGY_VERSION


def _java_order(tp: tuple[str, int]) -> tuple[bytes, int]:
    """``PARTITION_COMPARATOR``: by topic as Java compares strings (UTF-16 units), then
    partition."""
    return tp[0].encode("utf-16-be"), tp[1]


def subtopologies_by_partition(
    partitions: Sequence[tuple[str, int]], user_data: bytes | None
) -> dict[tuple[str, int], int]:
    """Each assigned partition's sub-topology, from a Kafka Streams member's user data;
    empty when the data is not an ``AssignmentInfo`` of a known version, or does not pair
    up with the partitions (another assignor's, or a member between rebalances)."""
    if not user_data or not partitions:
        return {}
    try:
        tasks = _active_tasks(bytes(user_data))
    except struct.error:
        return {}
    if tasks is None or len(tasks) != len(partitions):
        return {}
    ordered = sorted(partitions, key=_java_order)
    return {tp: sub for tp, (sub, _) in zip(ordered, tasks, strict=True)}


def _active_tasks(data: bytes) -> list[tuple[int, int]] | None:
    (version,) = struct.unpack_from(">i", data, 0)
    if not 1 <= version <= LATEST_VERSION:
        return None
    at = 8 if version >= 3 else 4
    (count,) = struct.unpack_from(">i", data, at)
    at += 4
    if count < 0 or count * 8 > len(data) - at:
        return None
    tasks = []
    for _ in range(count):
        sub, partition = struct.unpack_from(">ii", data, at)
        at += 8
        if version >= _NAMED_TOPOLOGY_VERSION:
            (chars,) = struct.unpack_from(">i", data, at)
            if chars < 0:
                return None
            at += 4 + 2 * chars
        tasks.append((sub, partition))
    return tasks
