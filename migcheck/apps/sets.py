"""What must move together: topics an app joins are co-partitioned, so a change that widens
one side alone leaves the app failing on the other (issue 71).

Kafka Streams checks that joined sources have one partition count (``Topics not
co-partitioned``), or, on the classic protocol without repartition topics, stalls in
REBALANCING: either way, widening one side of a stream-table join is never a change of
its own.  The joins are found as ``migcheck app`` finds them (the judged change's reasons,
:mod:`migcheck.apps.rules`): from ``--topology``, or from a running group's tasks; where
the evidence cannot tell whether two topics are joined, the reason holds on a condition
and the change is refused until ``--topology`` settles it.  GlobalKTable and foreign-key
joins need no co-partitioning, and raise no such reason.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from migcheck.apps.rules import Check
from migcheck.errors import Refused, UsageError
from migcheck.model.app import AppCandidate, first_error

#: The checks a join whose sides differ in count trips.
JOIN_CHECKS = (Check.COPARTITION, Check.UNCHECKED_JOIN)


@dataclass(frozen=True)
class LeftBehind:
    """The joined topics a change leaves at their count, and whether that is certain."""

    topics: tuple[str, ...]
    certain: bool


def left_behind(cand: AppCandidate, changed: Collection[str]) -> LeftBehind:
    """The topics the app joins with a changed one that the change does not widen."""
    missing: list[str] = []
    certain = True
    for reason in cand["reasons"]:
        if reason["check"] in JOIN_CHECKS:
            missing += [t for t in reason["topics"] if t not in changed]
            certain = certain and not reason.get("condition")
    return LeftBehind(tuple(dict.fromkeys(missing)), certain)


def refuse_split_set(route: str, app_id: str, cand: AppCandidate, changed: Collection[str]) -> None:
    """Refused in one line when the change widens one side of a join alone: naming the
    topics that must widen with it, or --topology where the cluster cannot tell."""
    behind = left_behind(cand, changed)
    if not behind.topics:
        return
    joined = f"{', '.join(changed)} with {', '.join(behind.topics)}"
    if not behind.certain:
        raise UsageError(
            f"{route}: {app_id} may join {joined} (co-partitioned), and the cluster cannot "
            "tell: pass --topology (the app's Topology#describe()) to settle it"
        )
    raise Refused(
        f"refused: {route} would widen one side of a join: {app_id} joins {joined}, which "
        f"must widen together (co-partitioned), or the app fails with: {first_error(cand)}; "
        f"judge the set with migcheck app --application-id {app_id} "
        + " ".join(f"--topic {t}" for t in (*changed, *behind.topics))
        + " (a runbook of several topics is not written yet)"
    )
