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

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from migcheck.apps.build import Basis, Model
from migcheck.apps.rules import App, Check, copartitioned
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


def refuse_split_set(
    route: str, app_id: str, cand: AppCandidate, changed: Collection[str], sets: bool = False
) -> None:
    """Refused in one line when the change widens one side of a join alone: naming the
    topics that must widen with it, or --topology where the cluster cannot tell; and the
    command that widens the whole set where ``route`` takes one (``sets``)."""
    behind = left_behind(cand, changed)
    if not behind.topics:
        return
    joined = f"{', '.join(changed)} with {', '.join(behind.topics)}"
    if not behind.certain:
        raise UsageError(
            f"{route}: {app_id} may join {joined} (co-partitioned), and the cluster cannot "
            "tell: pass --topology (the app's Topology#describe()) to settle it"
        )
    topics = " ".join(f"--topic {t}" for t in (*changed, *behind.topics))
    whole = f"--application-id {app_id} {topics}"
    then = (
        f"widen them in one change: migcheck {route} {whole} --to {cand['partitions']}"
        if sets
        else f"judge the set with migcheck app {whole} ({route} of several topics is not "
        "written yet)"
    )
    raise Refused(
        f"refused: {route} would widen one side of a join: {app_id} joins {joined}, which "
        f"must widen together (co-partitioned), or the app fails with: {first_error(cand)}; " + then
    )


def apart_refusal(app_id: str, placed: Mapping[str, str | None]) -> str | None:
    """The refusal of a set whose topics' producers place keys by different partitioners
    (``placed``: each topic's, None where it holds no keyed record); None where they
    agree.  Why: a key's records then sit on different partition numbers on each side, so
    the app's join already misses them, and copying each side by its own partitioner
    would carry that over to the new count."""
    found = {t: p for t, p in placed.items() if p is not None}
    if len(set(found.values())) <= 1:
        return None
    said = ", ".join(f"{t} by {p}" for t, p in found.items())
    return (
        f"refused: the producers of {app_id}'s co-partitioned topics place keys by different "
        f"partitioners ({said}), so a key's records sit on different partition numbers and "
        "its join already misses them; widening would carry that over: move the producers "
        "to one partitioner first (migcheck analyze --full names each topic's)"
    )


#: Where a join's evidence comes from, as the report says it, by the model's basis.
_EVIDENCE = {
    Basis.TOPOLOGY: "from the --topology given",
    Basis.BROKER: "from the broker's description of the app's topology",
    Basis.INFERRED: "from a running group's tasks, which read them together",
}


@dataclass(frozen=True)
class Together:
    """Topics that must widen together, and why: which join, from which evidence."""

    topics: tuple[str, ...]
    why: str


def must_move_together(model: Model) -> tuple[Together, ...]:
    """Each co-partitioned group of the app's source topics, certain (its shape's joins),
    then those another shape the evidence allows would join ("may"), with what settles
    it."""
    found = [Together(ts, f"joined in sub-topology {sub}, {_EVIDENCE[model.basis]}")
             for sub, ts in _joined(model.app)]  # fmt: skip
    seen = {t.topics for t in found}
    for scenario in model.alternatives:
        for _, ts in _joined(scenario.app):
            if ts not in seen:
                seen.add(ts)
                why = f"may be joined: the cluster cannot tell whether {scenario.condition}"
                found.append(Together(ts, f"{why}; --topology settles it"))
    return tuple(found)


def _joined(app: App) -> list[tuple[int, tuple[str, ...]]]:
    """Each sub-topology whose source topics the app must keep co-partitioned: its id and
    those topics (repartition topics left out: the app sizes them itself)."""
    joined = []
    for sub in app.topology.subtopologies:
        topics = tuple(sorted(t for t in sub.source_topics if not app.is_repartition(t)))
        if not sub.is_global and len(topics) > 1 and copartitioned(app, sub):
            joined.append((sub.id, topics))
    return joined
