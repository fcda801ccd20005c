"""Where a group stands on a topic: its committed offset and lag on each partition.

Pure: a described group and the topic's end offsets in, numbers out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from migcheck.kafka.groups import GroupInfo
from migcheck.model.readers import ReaderPartition
from migcheck.model.runbook import GroupLag


def partition_lags(
    group: GroupInfo, topic: str, ends: Mapping[int, int]
) -> tuple[ReaderPartition, ...]:
    """Each partition of ``topic`` (``ends``: its end offsets) with the group's offset and lag."""
    committed = {p: o for (t, p), o in group.committed.items() if t == topic and o >= 0}
    return tuple(
        ReaderPartition(
            partition=p,
            end_offset=end,
            committed_offset=committed.get(p),
            lag=None if p not in committed else max(0, end - committed[p]),
        )
        for p, end in sorted(ends.items())
    )


def summed_lag(partitions: Iterable[ReaderPartition]) -> int | None:
    """The lag over the partitions with a committed offset; None when none has one."""
    lags = [p["lag"] for p in partitions if p["lag"] is not None]
    return sum(lags) if lags else None


def group_lag(group: GroupInfo, topic: str, ends: Mapping[int, int]) -> GroupLag:
    """The group's members and its lag on ``topic`` summed over its committed partitions;
    the lag is None when it committed none there."""
    lag = summed_lag(partition_lags(group, topic, ends))
    return GroupLag(group.group_id, len(group.members), lag)
