"""``migcheck migrate``'s seeded shadow: where its state comes from, and the old app's
changelogs moved into its own.

Apart from :mod:`migcheck.commands.migrate` because it is one idea with two moments: at
the start, before any cut-over, each changelog's partitioner is proven from its records
and pinned (a refusal then changes nothing); after the switch, each changelog is moved
up to the ends recorded at the barrier.  Both run the copy engine
(:mod:`migcheck.commands.copy`), with a checkpoint of their own beside the migration's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from migcheck.apps.build import Model
from migcheck.apps.discovery import Discovery, lost_history
from migcheck.apps.movable import MIGRATE_MOVE, unmovable
from migcheck.commands.copy import CopyOptions, copy_until, prepare_copy
from migcheck.commands.options import Connection, SparkSettings
from migcheck.commands.runbook import route_sizes
from migcheck.copy.checkpoint import (
    Checkpoint,
    check_destination,
    load_checkpoint,
    save_checkpoint,
)
from migcheck.errors import UsageError
from migcheck.frameworks.topology import Topology
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.metadata import TopicMeta, describe_topics
from migcheck.model.copy import CopyResult
from migcheck.model.migrate import ShadowState
from migcheck.model.runbook import StateMove
from migcheck.online.phases import AppPlan
from migcheck.online.record import Resumed
from migcheck.online.writes import create_moved_changelog


def choose_shadow_state(
    asked: ShadowState,
    disc: Discovery,
    model: Model,
    topology: Topology | None,
    resumed: Resumed | None,
    app: str,
) -> tuple[ShadowState, bool]:
    """Where the shadow's state comes from (``--shadow-state``), and whether every store
    can move (the lost-history refusal then names the move).  ``auto`` moves where every
    store can move and a source lost records or the move is much cheaper than the
    rebuild (:meth:`~migcheck.apps.strategy.Sizes.move_is_cheaper`, as the runbook's
    auto), and rebuilds otherwise; ``move`` where a store cannot is refused in one line,
    ``unmovable``'s.  A resumed run keeps the recorded one (another asked by name is
    refused), for ``app``."""
    blocked = unmovable(disc, model, topology, MIGRATE_MOVE)
    if resumed is not None:
        recorded = resumed.shadow_states.get(app, ShadowState.REBUILD)
        if asked not in (ShadowState.AUTO, recorded):
            raise UsageError(
                f"{resumed.path} records --shadow-state {recorded}, this run "
                f"{asked}: resume with the recorded migration's options"
            )
        return recorded, blocked is None
    if asked is ShadowState.MOVE and blocked is not None:
        raise blocked
    worth = bool(lost_history(disc)) or route_sizes(disc, model).move_is_cheaper()
    if asked is ShadowState.MOVE or (asked is ShadowState.AUTO and worth and blocked is None):
        return ShadowState.MOVE, True
    return ShadowState.REBUILD, blocked is None


@dataclass(frozen=True)
class StateMoves:
    """Where a seeded shadow's changelog moves run: the migration's cluster and Spark, and
    its checkpoint, beside which each move keeps its own."""

    checkpoint: str
    connection: Connection
    spark: SparkSettings

    def pin(self, client: ClientConfig, app: AppPlan) -> None:
        """At the start, before any cut-over: each changelog a seeded shadow's state moves
        from has its partitioner detected from its records and pinned in the move's
        checkpoint (refused in one line where none placed them all, while the producers
        still write the old topic), so that the move after the switch only checks what
        arrived since."""
        for m in app.moves:
            copy, (source, dest), saved = self._copy(client, m)
            if saved is None:
                prepared = prepare_copy(copy, client, source, dest, saved)
                save_checkpoint(self._checkpoint(m), m.changelog, m.into, prepared.state)

    def mover(self, client: ClientConfig) -> Callable[[StateMove, dict[int, int]], CopyResult]:
        """A seeded shadow's changelog moved up to ``ends`` by the copy engine (the
        partitioner its checkpoint pinned at the start, the records since checked against
        it, exactly once, verified) into the shadow's; a resumed run goes on from the
        checkpoint."""

        def move(m: StateMove, ends: dict[int, int]) -> CopyResult:
            copy, topics, saved = self._copy(client, m)
            return copy_until(copy, client, topics, saved, ends)

        return move

    def _copy(
        self, client: ClientConfig, m: StateMove
    ) -> tuple[CopyOptions, tuple[TopicMeta, TopicMeta], Checkpoint | None]:
        """One changelog's move as the copy engine runs it: into the shadow's changelog,
        created like it, with its checkpoint beside migrate's (a destination with records
        and no checkpoint refused); each key's latest record only where the runbook's move
        copies no more (``StateMove.latest_only``)."""
        create_moved_changelog(client, m)
        path = self._checkpoint(m)
        saved = load_checkpoint(path, m.changelog, m.into)
        source, dest = describe_topics(client, [m.changelog, m.into])
        if saved is None and any(p.records for p in dest.partitions):
            raise UsageError(f"{m.into} is not empty and {path} records no earlier move into it")
        check_destination(path, saved, m.into, dest.partition_count)
        copy = CopyOptions(
            topic=m.changelog, into=m.into, checkpoint=path, latest_per_key=m.latest_only,
            connection=self.connection, spark=self.spark,
        )  # fmt: skip
        return copy, (source, dest), saved

    def _checkpoint(self, m: StateMove) -> str:
        """A changelog's move's checkpoint, beside the forward copy's."""
        return f"{self.checkpoint}.{m.into}"
