"""Whether an app's state can be moved rather than rebuilt (``runbook --strategy
move-state``): one decision, each refusal written once, for the strategy asked by name
and for ``auto``, which picks it only where it holds.

A Kafka Streams key-value store logs every update to its changelog,
``<application.id>-<store>-changelog``, each record on the partition of the task that
wrote it: for a store keyed by the record key, where the producers' partitioner put that
key under the old count.  Copied with that partitioner into a changelog of the new count
(``migcheck copy``, which proves the placement from the records and refuses where no
partitioner placed them all), it is the state the app would hold had it always run at the
new count, and no source is read again: a history that retention trimmed loses nothing.

That holds only where every store's state is in its own changelog and depends on nothing
but its records, so the move is refused, in one line, for:

- a framework whose move is not proven (:attr:`Framework.moved_id` None): Quix Streams,
  whose restore skips a moved record by its header's source offset, and ksqlDB, which
  names a new query's topics itself and runs no server here, each saying why
  (:attr:`Framework.move_refusal`).  Faust places each changelog record on its source
  record's partition: a table keyed by the source key moves (``migcheck copy`` proves the
  placement from the records, and refuses any other);
- a repartition topic whose count its framework never checks (Faust's ``group_by``): the
  table behind it would need a changelog of the count the app gives the new id's topic,
  which nothing here shows;
- a model that may miss stores (no ``--topology``): a store with logging disabled would
  go unseen, and be lost;
- a store without a changelog: logging disabled, or a ``KTable`` that reads its source
  topic as its changelog (``topology.optimization``; it restores from the widened input);
- a window or session store, or a ``suppress``: their results follow stream time, which
  a merged task does not share with its old tasks (:mod:`migcheck.apps.streamtime`);
- a store whose changelog records sit where another key is placed
  (:class:`PlacedElsewhere`): a foreign-key join's subscription store, a stream-stream
  join's shared store.  ``migcheck copy`` would refuse their changelogs at execution (no
  partitioner places them all), as it refuses a custom ``StreamPartitioner``'s, which
  only the records show; these the topology shows, so the runbook is refused at once.

:func:`store_routes` says the same of each store (``app --state``), in the same words: a
reason of the whole app is every store's; a store's own, its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from migcheck.apps.build import Model
from migcheck.apps.discovery import Discovery
from migcheck.apps.streamtime import SUPPRESS, changelogs, stream_time_reasons
from migcheck.errors import MigcheckError, Refused, UsageError
from migcheck.frameworks.topology import Node, SubTopology, Topology


@dataclass(frozen=True)
class MoveRoute:
    """How a command names moving the state in its refusals, and the other way it offers:
    ``runbook``'s strategy, or ``migrate``'s shadow seeded with moved state."""

    option: str
    other: str

    @property
    def way_out(self) -> str:
        """The refusal's last words: what to do instead."""
        return f"keep the whole history and use {self.other}"


#: ``runbook --strategy move-state``: the offline move.
RUNBOOK_MOVE = MoveRoute("--strategy move-state", "another --strategy")
#: ``migrate --shadow-state move``: the shadow seeded with the moved state.
MIGRATE_MOVE = MoveRoute("--shadow-state move", "--shadow-state rebuild")

#: The processor name Kafka Streams gives a table read from its source topic
#: (``builder.table``): with ``topology.optimization`` its store has no changelog of its
#: own, the source topic serves as one.
TABLE_SOURCE = "KTABLE-SOURCE-"

#: Why a store without a changelog of its own cannot move.
OWN_CHANGELOG = "only key-value stores that log to a changelog of their own can be moved so far"
#: Why a store whose changelog records another key placed cannot move.
OWN_KEY = "only a changelog whose records sit where their own keys are placed can be moved"


class PlacedElsewhere(Enum):
    """Stores whose changelog key is not the key that placed the record: each record sits on
    its task's partition, which another key chose, so no partitioner of the record's own key
    places them and a copy cannot put them where the new count's tasks look.  Each is known
    by the names Kafka Streams gives it, by default and when the operation is named
    (``KTableImpl.doJoinOnForeignKey``, ``OuterStreamJoinStoreFactory``); a store of the
    user's named alike is refused too (safety decisions fail closed)."""

    #: Keyed by CombinedKeySchema: the foreign key (length-prefixed), then the table's key;
    #: the task is the one of the subscription topic's partition, the foreign key's.
    FK_SUBSCRIPTION = (
        "a foreign-key join's subscription store, keyed by the foreign key and then the "
        "table's key, so its changelog records sit where the foreign key alone is placed",
        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-",
        ("-subscription-store",),
    )
    #: Keyed by TimestampedKeyAndJoinSide: a timestamp, a side, then the join key, in the
    #: join key's task.  A left join's has the same default prefix.
    JOIN_SHARED = (
        "a left or outer stream-stream join's shared store, keyed by a timestamp and then "
        "the join key, so its changelog records sit where the join key alone is placed",
        "KSTREAM-OUTERSHARED-",
        ("-outer-shared-join-store", "-left-shared-join-store"),
    )

    def __init__(self, why: str, prefix: str, suffixes: tuple[str, ...]) -> None:
        self.why, self.prefix, self.suffixes = why, prefix, suffixes

    @classmethod
    def of(cls, store: str) -> PlacedElsewhere | None:
        """The kind of store ``store`` names, if it is one of these."""
        return next(
            (k for k in cls if store.startswith(k.prefix) or store.endswith(k.suffixes)), None
        )


def unmovable(
    disc: Discovery, model: Model, topology: Topology | None, route: MoveRoute = RUNBOOK_MOVE
) -> MigcheckError | None:
    """The error that refuses moving the app's state by ``route``, in one line (UsageError
    where the framework or the group cannot take the route yet, Refused where a store's
    state would be lost or changed); None when every store can move."""
    app = disc.facts.app_id
    whole = _app_wide(disc, model, route)
    if whole:
        return UsageError(f"{route.option}: {whole}")
    reasons = "; ".join(_stores_without_changelog(model))
    if not reasons and (elsewhere := "; ".join(_stores_placed_elsewhere(model))):
        return _refused(app, elsewhere, OWN_KEY, route)
    reasons = reasons or _stream_time(disc, topology)
    return _refused(app, reasons, OWN_CHANGELOG, route) if reasons else None


def _refused(app: str, reasons: str, why: str, route: MoveRoute) -> Refused:
    """Each refusal of a store's state names it, why such a store cannot move, and the way
    out, in one line."""
    return Refused(f"refused: {route.option} for {app}: {reasons}: {why}; {route.way_out}")


def unproven_why(placement: str) -> str:
    """Why a changelog whose records no known partitioner placed all cannot move
    (``placement``: what ``migcheck copy``'s detection found in its records, with the best
    partitioner and its share), as the lost-history refusal says it."""
    return f"{placement}: {OWN_KEY}"


def unproven_refusal(app: str, placement: str, route: MoveRoute = RUNBOOK_MOVE) -> Refused:
    """The move asked by name, refused where a changelog's records conform to no known
    partitioner (proven from the records when the runbook is written, never assumed)."""
    return _refused(app, placement, OWN_KEY, route)


def placed_elsewhere(store: str) -> str | None:
    """Why ``store``'s changelog records sit where another key is placed (None: nothing
    shows they do), in :func:`unmovable`'s words."""
    kind = PlacedElsewhere.of(store)
    return None if kind is None else f"the store {store} is {kind.why}"


def _stores_placed_elsewhere(model: Model) -> list[str]:
    stores = [s for sub in _task_subtopologies(model) for s in sub.stores]
    return [r for r in map(placed_elsewhere, dict.fromkeys(stores)) if r]


def _app_wide(disc: Discovery, model: Model, route: MoveRoute = RUNBOOK_MOVE) -> str | None:
    """Why no store of the app can move, whatever the store (None: each store decides)."""
    app, framework = disc.facts.app_id, disc.facts.framework
    if framework.moved_id is None:
        return f"{app} is {framework.label}: {framework.move_refusal}; {route.way_out}"
    unsized = [t for t in disc.facts.internal if _unchecked_repartition(disc, t)]
    if unsized:
        return (
            f"{app} is {framework.label} with the repartition topic "
            f"{', '.join(sorted(unsized))}: a table behind it must have a changelog of the "
            "count the app gives the new id's repartition topic, which "
            f"{framework.name} never checks and nothing here shows; {route.way_out}"
        )
    if not model.app.stores_known:
        return f"{app}: {framework.unseen}"
    return None


def _unchecked_repartition(disc: Discovery, topic: str) -> bool:
    """Whether ``topic`` is a repartition topic whose count its framework never checks."""
    framework = disc.facts.framework
    return framework.is_repartition(disc.facts.bare(topic)) and not framework.checks_repartition


@dataclass(frozen=True)
class StoreRoute:
    """One store's route: ``reason`` is None where its state can move (``--strategy
    move-state``), else why not, in :func:`unmovable`'s words."""

    store: str
    changelog: str  # the topic it logs to, or would: the reason says when there is none
    reason: str | None = None


def store_routes(disc: Discovery, model: Model) -> tuple[StoreRoute, ...]:
    """Each store of the app's tasks, once, in the topology's order, with its route: the
    reason of the whole app, else its own, in :func:`unmovable`'s order (no changelog, a
    changelog placed by another key, stream time)."""
    app, whole = model.app, _app_wide(disc, model)
    routes: dict[str, StoreRoute] = {}
    for sub in _task_subtopologies(model):
        for node in sub.nodes:
            for store in node.stores:
                reason = (
                    whole
                    or _without_changelog(model, node, store)
                    or placed_elsewhere(store)
                    or _store_stream_time(disc, model, sub, store)
                )
                routes.setdefault(store, StoreRoute(store, app.changelog(store), reason or None))
    return tuple(routes.values())


def _store_stream_time(disc: Discovery, model: Model, sub: SubTopology, store: str) -> str:
    """The stream time a store's results follow: its own changelog's window or session
    policy, or a ``suppress`` of its sub-topology (whose buffer is not a store to move)."""
    changelog = model.app.changelog(store)
    meta = disc.topics.get(changelog)
    policies = {changelog: meta.cleanup_policy} if meta else {}
    suppresses = [replace(n, stores=()) for n in sub.nodes if n.name.startswith(SUPPRESS)]
    view = Topology([SubTopology(sub.id, nodes=suppresses)])
    return _follows_stream_time(stream_time_reasons(disc.facts.app_id, policies, view))


def _task_subtopologies(model: Model) -> list[SubTopology]:
    """Global stores restore from their own topic, whole, at every start: nothing to move."""
    return [s for s in model.app.topology.subtopologies if not s.is_global]


def _source_table(model: Model, store: str) -> bool:
    """Whether ``store`` is a table's read from its source topic: the table's own source
    node holds it, wherever else it is read (a join's processor lists it too)."""
    return any(
        node.name.startswith(TABLE_SOURCE) and store in node.stores
        for sub in _task_subtopologies(model)
        for node in sub.nodes
    )


def _stores_without_changelog(model: Model) -> list[str]:
    reasons = [
        _without_changelog(model, node, store)
        for sub in _task_subtopologies(model)
        for node in sub.nodes
        for store in node.stores
    ]
    return list(dict.fromkeys(r for r in reasons if r))


def _without_changelog(model: Model, node: Node, store: str) -> str | None:
    """Why ``store`` (of ``node``) has no changelog of its own to move from; None if it has."""
    app = model.app
    if app.changelog(store) in app.counts:
        return None
    if _source_table(model, store):
        return (
            f"the table {store} reads its source topic as its changelog "
            f"(topology.optimization: there is no {app.changelog(store)})"
        )
    return (
        f"the store {store} logs to no changelog (logging disabled: there is "
        f"no {app.changelog(store)}), so its state is nowhere to move from"
    )


def _stream_time(disc: Discovery, topology: Topology | None) -> str:
    """Window and session stores and suppress nodes, as the online route finds them."""
    internal = changelogs(disc.facts.internal)
    policies = {t: disc.topics[t].cleanup_policy for t in internal if t in disc.topics}
    return _follows_stream_time(stream_time_reasons(disc.facts.app_id, policies, topology))


def _follows_stream_time(reasons: tuple[str, ...]) -> str:
    """The reasons :func:`~migcheck.apps.streamtime.stream_time_reasons` found, said once
    for the move ("" where there are none)."""
    if not reasons:
        return ""
    return (
        f"{'; '.join(reasons)}: their results follow stream time, which a merged task does "
        "not share with its old tasks"
    )
