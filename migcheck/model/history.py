"""What a reprocess loses when a source no longer holds its whole history: one home for
the decision and its words, said alike by ``runbook`` (at generation, and by its script
before the change and again right before the reprocess), ``migrate``, ``app`` and the
gate.

Every remedy migcheck writes for a stateful app rebuilds the app's state by reading its
sources again from their earliest offsets: the reset (in place, or onto a copy), or a
shadow (online).  That state is right only while each source still holds every record it
was ever given.  A log start offset above 0 means retention (or kafka-delete-records)
removed the records below it, and the rebuilt counts, aggregates and tables miss them:
measured on a real count app, 0 of 300 keys kept their true count (issue 68).  A warning
in a long log is not a stop, so such a reprocess is refused unless the operator accepts
the loss by name (:data:`ACCEPT_LOST_HISTORY`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The option that accepts a reprocess of an incomplete history, by name.
ACCEPT_LOST_HISTORY = "--accept-lost-history"


@dataclass(frozen=True)
class Trimmed:
    """A source whose log start offset is above 0 on some of its partitions."""

    topic: str
    starts: tuple[tuple[int, int], ...]  # (partition, log start offset), each above 0

    @property
    def below(self) -> int:
        """The offsets below the log starts: at most that many records are gone (fewer
        where compaction or transaction markers had used some of them)."""
        return sum(start for _, start in self.starts)


def trimmed_sources(log_starts: Mapping[str, Mapping[int, int]]) -> tuple[Trimmed, ...]:
    """The sources (topic -> partition -> log start offset) that lost records, in the
    order given, each with only its partitions that start above 0."""
    found = []
    for topic, starts in log_starts.items():
        above = tuple(sorted((p, s) for p, s in starts.items() if s > 0))
        if above:
            found.append(Trimmed(topic, above))
    return tuple(found)


def where_trimmed(trimmed: Iterable[Trimmed]) -> str:
    """Each trimmed source with each partition's log start offset, on one line."""
    return "; ".join(
        f"{t.topic} partition " + ", ".join(f"{p} from offset {s}" for p, s in t.starts)
        for t in trimmed
    )


def _what_is_lost(trimmed: tuple[Trimmed, ...]) -> str:
    gone = sum(t.below for t in trimmed)
    return (
        f"reprocessing sources that no longer hold their whole history "
        f"({where_trimmed(trimmed)}): up to {gone} records deleted below those offsets would "
        "be missing from every count, aggregate, table and join it rebuilds"
    )


def lost_history_refusal(
    app_id: str,
    trimmed: tuple[Trimmed, ...],
    route: str,
    move_state: str = "",
    unmovable: str = "",
) -> str:
    """The one line that refuses ``route`` (a runbook's strategy, ``migrate``'s shadow):
    what is gone, what the reprocess would do without it, and the ways out: the state
    moved instead (``move_state``: the option that does it, where every store of the app
    can move), or the loss accepted.  ``unmovable``: why the state cannot move instead,
    where only its records showed it (the topology's reasons are the move's own refusal)."""
    move = f" move the state instead ({move_state})," if move_state else ""
    cannot = f"; its state cannot move instead: {unmovable}" if unmovable else ""
    return (
        f"refused: {route} would rebuild the state of {app_id} by {_what_is_lost(trimmed)}"
        f"{cannot}; keep the whole history,{move} or pass {ACCEPT_LOST_HISTORY} to "
        "reprocess without them"
    )


def remedy_loses_history(
    trimmed: tuple[Trimmed, ...], move_state: str = "", online: str = ""
) -> str:
    """What ``migcheck app`` and the gate say of a change whose every remedy (each runbook
    strategy, ``migrate``) rebuilds the app's state from sources that lost records; where
    every store can move instead (``move_state``: the runbook's option that does it;
    ``online``: migrate's, where the app's framework has a shadow), that way first, and
    what the others would lose."""
    if move_state and online:
        return (
            f"migcheck runbook {move_state} (offline) and migcheck migrate {online} "
            "(online) move the app's state to the new count and reprocess nothing (every "
            "store can move); every other remedy (migcheck runbook's other strategies, "
            f"migrate's rebuilt shadow) rebuilds it by {_what_is_lost(trimmed)}: each is "
            f"refused unless {ACCEPT_LOST_HISTORY}"
        )
    if move_state:
        return (
            f"migcheck runbook {move_state} moves the app's state to the new count and "
            "reprocesses nothing (every store can move); every other remedy (migcheck "
            f"runbook's other strategies, migrate) rebuilds it by {_what_is_lost(trimmed)}: "
            f"each is refused unless {ACCEPT_LOST_HISTORY}"
        )
    return (
        f"every remedy (migcheck runbook, migrate) rebuilds the app's state by "
        f"{_what_is_lost(trimmed)}: each is refused unless {ACCEPT_LOST_HISTORY}"
    )


def lost_history_accepted(trimmed: tuple[Trimmed, ...]) -> str:
    """What a runbook written with :data:`ACCEPT_LOST_HISTORY` says at its top."""
    return (
        f"Accepted ({ACCEPT_LOST_HISTORY}): the reprocess rebuilds the state without the "
        f"records retention deleted: {where_trimmed(trimmed)}."
    )


#: Why the script reads every source's log start offsets before it changes anything and
#: again right before the reprocess (the topic may be trimmed between the two).
HISTORY_CHECK_WHY = (
    "A reprocess rebuilds the state correctly only from every source's whole history: the "
    "script stops while any source's log start offset is above 0, before it changes "
    "anything and again right before the reprocess (the runbook's dry run reads them too "
    f"and says what it would stop on), unless the runbook was written with "
    f"{ACCEPT_LOST_HISTORY}."
)
