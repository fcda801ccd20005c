"""Which way to widen a topic under a Kafka Streams app: in place, or through a new topic.

Pure rules over the application model.  The reset sends the app back to the
earliest offsets, deletes its internal topics (so they come back with the new
counts) and, with the local state wiped, every record is processed again.  What
that reprocess cannot repair is a store fed *directly* by the altered topic:
each moved key's old records stay in its old partition while its new records go
to the new one, so the key's history is read by two tasks and its state splits.
A store behind a repartition topic is fed by key, whatever partition the record
came from: the reprocess puts every record in the right task.  So in place is
correct, and far cheaper (no copy, no producer switch), exactly when no store
reads the topic directly.  A global store reads every partition and never splits.

When the model may miss stores (built from the broker's description, which lists
only logged stores, or inferred from topic names), a sub-topology that reads the
topic and shows no store may still hold one: then only ``--topology`` can say.
"""

from __future__ import annotations

from dataclasses import dataclass

from migcheck.apps.build import Basis, Model
from migcheck.frameworks.base import Framework
from migcheck.model.history import Trimmed, where_trimmed
from migcheck.model.runbook import (
    Strategy,
)


@dataclass(frozen=True)
class Direct:
    """The stores fed directly by a topic, as far as the model can tell."""

    stores: tuple[str, ...]
    #: False when a sub-topology reads the topic, shows no store, and the model may miss
    #: stores: the answer "none" is then not certain.
    certain: bool


@dataclass(frozen=True)
class Sizes:
    """What each route reads, in records, from the offsets (nothing is read to know it):
    the changelogs' (a move copies them once and the restarted app restores them) and the
    sources' (a reprocess reads every one of them again, through every sub-topology)."""

    state: int
    history: int

    def move_is_cheaper(self) -> bool:
        """Whether moving the state beats rebuilding it by enough to be worth a new
        application.id: the sources hold at least :data:`MOVE_CHEAPER_BY` times the
        changelogs' records, and enough of them (:data:`MOVE_LEAST_HISTORY`) that the
        move's fixed costs (a Spark job to prove and copy each changelog, a new group)
        are paid back.  Both figures come from bench-scan's row (p) (docs/benchmarks.md)."""
        return self.history >= MOVE_LEAST_HISTORY and self.history >= MOVE_CHEAPER_BY * self.state


#: How many times the changelogs' records the sources must hold for auto to move a whole
#: history's state on cost alone (bench-scan (p): see :meth:`Sizes.move_is_cheaper`).
MOVE_CHEAPER_BY = 3
#: The fewest source records for which the move's fixed costs are paid back (bench-scan
#: (p)); below it a reprocess takes seconds anyway, and keeps the app's id.
MOVE_LEAST_HISTORY = 1_000_000


@dataclass(frozen=True)
class Choice:
    strategy: Strategy  # any but AUTO
    reason: str  # why, said in the runbook; empty when the user chose


def direct_stores(model: Model, topic: str) -> Direct:
    """The stores in a task sub-topology that reads ``topic`` itself (not through a
    repartition topic); global sub-topologies generate no tasks and never split."""
    readers = [
        s for s in model.app.topology.subtopologies if not s.is_global and topic in s.source_topics
    ]
    stores = tuple(dict.fromkeys(store for s in readers for store in s.stores))
    unseen = not model.app.stores_known and any(not s.stores for s in readers)
    return Direct(stores, certain=not unseen)


_UNSEEN = {
    Basis.BROKER: "the broker lists only stores that log to a changelog, so a store with "
    "logging disabled that reads {topic} directly would go unseen",
    Basis.INFERRED: "without the app's topology migcheck cannot tell which sub-topology "
    "holds each store",
}


def choose(
    asked: Strategy,
    model: Model,
    topic: str,
    framework: Framework,
    lost: tuple[Trimmed, ...] = (),
    movable: bool = False,
    sizes: Sizes | None = None,
) -> Choice:
    """The strategy for ``--strategy asked``.  ``auto`` moves the state where every store
    can move (``movable``: :func:`~migcheck.apps.movable.unmovable`) and either a source
    lost records (``lost``: every reprocess would miss them) or the move is much cheaper
    than the reprocess (``sizes``); else it picks in place only when no store reads the
    topic directly, for certain.  A framework that takes no
    topology says itself why its state may be unseen; whether it can go online is
    :func:`~migcheck.apps.online.check_online`'s to say."""
    if asked is not Strategy.AUTO:
        return Choice(asked, "")
    if lost and movable:
        return Choice(
            Strategy.MOVE_STATE,
            "--strategy auto chose move-state: the sources no longer hold their whole "
            f"history ({where_trimmed(lost)}), so a reprocess would miss what retention "
            "deleted; every store logs to a key-value changelog of its own, so its state is "
            "moved to the new count instead of rebuilt.",
        )
    if movable and sizes is not None and sizes.move_is_cheaper():
        return Choice(Strategy.MOVE_STATE, _cheaper(sizes))
    direct = direct_stores(model, topic)
    if direct.stores:
        return Choice(
            Strategy.NEW_TOPIC,
            f"--strategy auto chose new-topic: the store{'s' if len(direct.stores) > 1 else ''} "
            f"{', '.join(direct.stores)} read{'' if len(direct.stores) > 1 else 's'} {topic} "
            "directly, so after an in-place alter each moved key's history would split "
            "between two tasks.",
        )
    if not direct.certain and not framework.takes_topology:
        return Choice(Strategy.NEW_TOPIC, f"--strategy auto chose new-topic: {framework.unseen}.")
    if not direct.certain:
        unseen = _UNSEEN.get(model.basis, "the model may miss stores").format(topic=topic)
        return Choice(
            Strategy.NEW_TOPIC,
            f"--strategy auto chose new-topic: {unseen}; pass --topology (the app's "
            "Topology#describe()) to let it consider in place.",
        )
    return Choice(
        Strategy.IN_PLACE,
        f"--strategy auto chose in-place: no store reads {topic} directly (any state sits "
        "behind a repartition topic, fed by its own key), so every record reaches the "
        "task its key belongs to after the alter; no copy and no producer switch are "
        "needed.",
    )


def _cheaper(sizes: Sizes) -> str:
    """Why auto moves a whole history's state: both sizes, and the rule."""
    return (
        f"--strategy auto chose move-state: the changelogs hold at most {sizes.state} records "
        f"where a reprocess would read the sources' {sizes.history} again "
        f"({sizes.history / max(sizes.state, 1):.1f}x as many; auto moves the state where "
        f"the sources hold at least {MOVE_CHEAPER_BY}x the changelogs' records and at least "
        f"{MOVE_LEAST_HISTORY}); every store logs to a key-value changelog of its own, so its "
        "state is moved to the new count instead of rebuilt, and the app restarts under a new "
        "application.id (pass --strategy new-topic or in-place to keep its id)."
    )
