"""What ``migcheck migrate`` did: the barrier it cut over at, the pause, the groups it
moved, or where and why it stopped.  Plain data, rendered by :mod:`migcheck.report.migrate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from migcheck.model.partitioner import PartitionerChoice

#: gh-ost's lock is held at most 3 s by default; a barrier also drains and checks the copy
#: and waits for a shadow's commit, so migrate's default is 5 s (issue 56).
CUTOVER_TIMEOUT_S = 5.0

#: How long the source's ends must stay unchanged before they are the cut-over's barrier
#: (:mod:`migcheck.online.barrier`); here, below the runbooks that explain it.
QUIET_S = 2.0


@dataclass(frozen=True)
class MigrateTuning:
    """What an online runbook's ``migcheck migrate`` step is told besides its readers:
    the producers' partitioner (``auto``: detected from the data) and how long a cut-over
    may take before it reverts."""

    partitioner: PartitionerChoice = PartitionerChoice.AUTO
    cutover_timeout_s: float = CUTOVER_TIMEOUT_S

    def __post_init__(self) -> None:
        # as RunbookFacts: a choice's own value becomes the member, any other word fails here
        object.__setattr__(self, "partitioner", PartitionerChoice(self.partitioner))

    def args(self) -> tuple[str, ...]:
        """migrate's options, each value given (the step says what it runs)."""
        timeout = f"{self.cutover_timeout_s:g}"
        return ("--partitioner", self.partitioner.value, "--cutover-timeout", timeout)


class ShadowState(StrEnum):
    """Where a stateful app's shadow gets its state (``--shadow-state``): rebuilt by reading
    the new topic from its start before the cut-over, or moved from the old app's
    changelogs after it (issue 70), which a source that retention trimmed needs: a
    rebuild would miss what was deleted.  ``auto`` moves only where a source lost records
    and every store can move, and rebuilds otherwise."""

    AUTO = "auto"
    MOVE = "move"
    REBUILD = "rebuild"


@dataclass(frozen=True)
class ShadowStart:
    """What the operator is told to start as a stateful app's shadow: the app, the id the
    shadow takes ("" where the framework names it, as ksqlDB names a new query), each
    topic of the set it reads with the new one it reads in its place, and each output
    with the shadow's in its place."""

    app_id: str
    shadow_id: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    #: the changelogs moved into the shadow's before it starts (--shadow-state move): it
    #: restores them and reads on from the barrier; empty, it rebuilds from the start
    moved: tuple[str, ...] = ()

    @property
    def reading(self) -> str:
        """What the shadow reads in place of what, in words."""
        return ", ".join(f"{new} in place of {old}" for old, new in self.inputs)

    @property
    def output_pairs(self) -> str:
        """Each output and the shadow's, in words."""
        return ", ".join(f"{old} -> {new}" for old, new in self.outputs) or "none"


@dataclass(frozen=True)
class RolledBack:
    """A rollback that held: its own cut-over's time, and the groups moved back."""

    cutover_s: float
    groups: tuple[str, ...]
    downstream: tuple[str, ...]


@dataclass(frozen=True)
class Seeded:
    """A shadow seeded with the old app's moved state: the changelog records moved, how
    long the shadow took from its start to restore them and catch up, and how long the
    downstream groups went without a new result (from the settle, when the old app's
    outputs stopped, to then)."""

    records: int
    restore_s: float
    waited_s: float


@dataclass(frozen=True)
class MigrateResult:
    """One migration of a set of topics, all cut over at one barrier."""

    topics: tuple[tuple[str, str], ...]  # each old topic and its new one
    #: each old topic's partitioner, as its copy placed its keys (each side's own producers')
    partitioners: dict[str, str]
    old_ends: dict[str, dict[int, int]] | None = None  # each old topic's ends at the barrier
    new_ends: dict[str, dict[int, int]] | None = None  # each new topic's, at the same barrier
    cutover_s: float | None = None  # the cut-over that held: from the pause to the switch
    groups: tuple[str, ...] = ()  # the plain groups moved to the new topic
    shadows: tuple[str, ...] = ()  # each stateful app's shadow, serving after the switch
    downstream: tuple[str, ...] = ()  # groups moved from the apps' outputs to the shadows'
    completed: bool = False  # the operator completed: no rollback any more
    rolled_back: RolledBack | None = None  # the operator rolled back, and it held
    stopped: str | None = None  # why the run ended early (exit 1), None when it finished
    seeded: Seeded | None = None  # the shadow's state moved, not rebuilt (--shadow-state)
