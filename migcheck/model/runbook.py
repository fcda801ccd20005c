"""The runbook as data: the facts found on the cluster and the ordered steps built from them.

:mod:`migcheck.frameworks` (a stream processor's app, from :class:`RunbookFacts`) and
:mod:`migcheck.runbook.groups` (plain consumer groups, from :class:`GroupsFacts`) build the
steps (pure rules); :mod:`migcheck.report.runbook` writes them as Markdown for a change
ticket and as a re-runnable shell script.  They meet here so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from migcheck.errors import UsageError
from migcheck.model.app import AppLevel, MoveTogether
from migcheck.model.header import Header
from migcheck.model.history import Trimmed
from migcheck.model.migrate import MigrateTuning, ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.untrusted import arg_problem, path_problem, quoted


class Strategy(StrEnum):
    """How a runbook widens the topic (``--strategy``)."""

    NEW_TOPIC = "new-topic"  # a copy into a new, wider topic (migcheck copy)
    IN_PLACE = "in-place"  # kafka-topics --alter
    #: in-place when no store reads the topic directly, else new-topic; move-state when a
    #: source lost records and every store can move
    AUTO = "auto"
    ONLINE = "online"  # a live copy, a stateful app's shadow, a barrier (migcheck migrate)
    #: the app's state moved, not rebuilt: its changelogs copied into a new application
    #: id's at the new count, its input altered in place (or, with --into, copied into a
    #: new topic), nothing reprocessed
    MOVE_STATE = "move-state"


@dataclass(frozen=True)
class StateMove:
    """One store's changelog moved by ``--strategy move-state``: copied into the new
    application id's changelog (``into``), created with ``partitions`` like the old one."""

    store: str
    changelog: str
    into: str
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)  # the old changelog's own
    records: int = 0  # its offsets today (end - start): at most that many records
    #: the partitioner that placed every keyed record when the runbook was written (its
    #: copy places by it); None where it held no keyed record (the copy detects it then)
    partitioner: PartitionerChoice | None = None

    @property
    def latest_only(self) -> bool:
        """Whether each key's latest record is all the move need copy: a key-value store's
        changelog, which restores no more.  Not where the changelog may be a versioned
        store's, which restores every version: Kafka Streams gives that one
        :data:`VERSIONED_CHANGELOG_CONFIG` (``VersionedChangelogTopicConfig``: its history
        retention and a day), so any value of it, however set, keeps every record."""
        return VERSIONED_CHANGELOG_CONFIG not in self.configs


#: The topic config only a versioned store's changelog gets from Kafka Streams.
VERSIONED_CHANGELOG_CONFIG = "min.compaction.lag.ms"


#: How long step 2 waits for a stopped app's members to leave its group by default: a
#: Kafka Streams member of a classic group does not leave it on close(), the broker drops
#: it after session.timeout.ms (45 s by default); 15 s on top for the broker to notice.
GROUP_TIMEOUT = 60
#: The barrier's file in the script's work directory: each source partition's offset
#: where the stopped app's state ends, as kafka-consumer-groups --from-file reads it (of
#: several apps' runbook, one each: ``RunbookFacts.barrier_file``).
BARRIER_FILE = "barrier.csv"
#: The barrier of a state moved onto a copy (``RunbookFacts.onto_copy``), in the same
#: form: the copy's partitions at their ends in place of the input's, the other sources as
#: they were (of several apps' runbook, one each: ``RunbookFacts.copy_barrier_file``).
COPY_BARRIER_FILE = "copy-barrier.csv"
#: How long a runbook waits for a group's lag to drain to 0 by default.
LAG_TIMEOUT = 300
#: How long the plain-consumer runbook waits for every group to be assigned the new
#: partitions: a consumer sees them at its next metadata refresh, metadata.max.age.ms
#: (5 min by default), plus a minute for the rebalance that follows.
ASSIGN_TIMEOUT = 360
#: How long the plain-consumer runbook waits for a group's members to commit an offset on
#: each new partition by default: auto-commit does so within auto.commit.interval.ms
#: (5 s by default) of the partition's assignment, plus a margin for a loaded consumer.
COMMIT_TIMEOUT = 60


@dataclass(frozen=True)
class PeerApp:
    """Another app of the topics that one runbook moves with the first
    (``--application-id`` repeated).  Online, one migrate names every app, each with its
    ``Topology#describe()`` file, whose sinks migrate reads as its outputs; offline, each
    app stops, the topics change once, and each app restarts (its own steps)."""

    app_id: str
    topology_file: str | None = None  # required online (the CLI refuses it missing)
    outputs: tuple[str, ...] = ()  # its shadow writes <output>-p<N> (the header's words)
    verdict: str = ""  # migcheck app's verdict for its in-place change (the header's words)


@dataclass(frozen=True)
class Widened:
    """One topic of a change: its count today, the copy it moves into where the route
    copies, and its own configs (which the copy gets)."""

    topic: str
    partitions: int
    new_topic: str
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunbookFacts:
    """Everything the steps name, found on the cluster when the runbook was written."""

    app_id: str
    bootstrap: str
    command_config: str | None
    topic: str
    partitions: int  # the topic's count today
    to: int
    new_topic: str
    strategy: Strategy  # NEW_TOPIC or IN_PLACE, never AUTO
    protocol: Protocol
    internal: tuple[str, ...]  # the internal topics the reset deletes
    expected_internal: Mapping[str, int]  # internal topic -> its count after the restart
    #: The sources whose log start offset is above 0: set only with accept_lost_history
    #: (the runbook is refused otherwise: model/history.py).
    history_lost: tuple[Trimmed, ...] = ()
    #: Every source of the app, whose history the script checks before it reprocesses.
    sources: tuple[str, ...] = ()
    #: --accept-lost-history: the reprocess goes on where a source lost records, said so.
    accept_lost_history: bool = False
    state_dir: str | None = None
    verdict: AppLevel = AppLevel.SAFE  # migcheck app's, for the in-place change
    split_keys: int | None = None  # in-place on a stateful app: keys whose history splits
    members: int = 0
    configs: Mapping[str, str] = field(default_factory=dict)
    #: Why this strategy: set when --strategy auto chose it (said in the header and step 3).
    strategy_reason: str = ""
    #: The sources taken on the user's word (--topic): the group had no committed offsets.
    on_users_word: tuple[str, ...] = ()
    group_timeout: int = GROUP_TIMEOUT
    lag_timeout: int = LAG_TIMEOUT
    #: The framework the app runs on: it picks the procedure (frameworks/registry.py).  For
    #: Quix Streams ``internal`` are the internal topics the change leaves behind (to
    #: delete) and ``expected_internal`` those the restarted app creates.
    kind: ReaderKind = field(kw_only=True)  # no default: every framework is a peer
    #: The error the in-place change makes the app print first, as ``migcheck app`` quotes
    #: it (``model.app.first_error``: the candidates where the evidence cannot tell); None
    #: when nothing crashes.
    first_error: str | None = None
    #: ONLINE: the app's output topics (its shadow writes ``<output>-p<N>``), the groups
    #: reading them, and the topic's plain groups, all moved at the one barrier.
    outputs: tuple[str, ...] = ()
    downstream: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    #: Offline: each plain group (``--group``) with a topic of the change it reads: it
    #: drains there while the producers are paused, then is committed at the copy's end
    #: (NEW_TOPIC), or owns the new partitions and holds an offset on each (IN_PLACE) by
    #: the waits the groups' runbook takes (``assign_timeout``, ``commit_timeout``).
    group_reads: tuple[tuple[str, str], ...] = ()
    assign_timeout: int = ASSIGN_TIMEOUT
    commit_timeout: int = COMMIT_TIMEOUT
    #: MOVE_STATE: the work directory's file of this app's barrier (several apps' each
    #: their own)
    barrier_file: str = BARRIER_FILE
    copy_barrier_file: str = COPY_BARRIER_FILE
    #: ONLINE: the readers left on the topic on purpose (migrate's --leave-group)
    left: tuple[str, ...] = ()
    tuning: MigrateTuning = field(default_factory=MigrateTuning)  # ONLINE: migrate's options
    #: ONLINE: migrate's --shadow-state where the runbook names one: MOVE where a source
    #: lost records and every store can move (the shadow is seeded with the moved state)
    shadow_state: ShadowState | None = None
    #: MOVE_STATE: the application id the app restarts under (its changelogs the moved
    #: ones), each store's move, and the sources' history in offsets (what a reprocess
    #: would read, and how many of them retention deleted).
    moved_app_id: str = ""
    moves: tuple[StateMove, ...] = ()
    history: int = 0
    history_gone: int = 0
    #: MOVE_STATE with --into given: the input is copied into ``new_topic`` and its
    #: producers switched there, instead of altered in place; the input is left as it was
    #: (for its other readers, or as the way back).
    onto_copy: bool = False
    #: The set's other topics (issue 71): every side of a join widens with ``topic``, to
    #: ``to``, by the one strategy, at the app's one stop; empty for one topic.
    also: tuple[Widened, ...] = ()
    #: The app's co-partitioned groups of source topics, with why (``migcheck app``'s
    #: ``together``), named in the header.
    together: tuple[MoveTogether, ...] = ()
    #: Several apps: the others, moved by the same procedure (online, by the same migrate),
    #: and this app's own --topology file (migrate reads each app's outputs from its sinks)
    peers: tuple[PeerApp, ...] = ()
    topology_file: str | None = None

    def __post_init__(self) -> None:
        # The enums' own values (a saved report's, a test's "classic") become the enums,
        # and a word that is none of them fails here, not in a step that compares it.
        object.__setattr__(self, "strategy", Strategy(self.strategy))
        object.__setattr__(self, "protocol", Protocol(self.protocol))
        object.__setattr__(self, "verdict", AppLevel(self.verdict))
        if self.strategy is Strategy.AUTO:
            raise ValueError("a runbook's facts name the strategy auto chose, not auto")

    @property
    def apps(self) -> tuple[str, ...]:
        """Every app the runbook moves: this one, then its peers."""
        return (self.app_id, *(p.app_id for p in self.peers))

    @property
    def target(self) -> str:
        """The topic the app reads after the change."""
        copy = self.strategy is Strategy.NEW_TOPIC or self.onto_copy
        return self.new_topic if copy else self.topic

    @property
    def widened(self) -> tuple[Widened, ...]:
        """Every topic of the change, ``topic`` first."""
        first = Widened(self.topic, self.partitions, self.new_topic, self.configs)
        return (first, *self.also)

    @property
    def topics(self) -> tuple[str, ...]:
        """The names of every topic of the change, ``topic`` first."""
        return tuple(w.topic for w in self.widened)

    @property
    def targets(self) -> tuple[str, ...]:
        """The topics the app reads after the change, one per topic of the set."""
        return tuple(self.target_of(w) for w in self.widened)

    def target_of(self, w: Widened) -> str:
        """The topic the app reads after the change in place of ``w``'s."""
        return w.new_topic if self.target != self.topic else w.topic

    @property
    def copied(self) -> bool:
        """Whether the app restarts on a copy (which a killed copy may have left with
        aborted records: its readers must read committed records only)."""
        return self.target != self.topic


@dataclass(frozen=True)
class GroupLag:
    """A plain consumer group reading the topic, as found when the runbook was written."""

    group: str
    members: int
    lag: int | None  # summed over its committed partitions of the topic; None: none committed


@dataclass(frozen=True)
class GroupsFacts:
    """Everything the ordering-safe runbook for plain consumer groups names.

    Plain consumers keep no state in Kafka Streams' sense, but a consumer that needs
    per-key order breaks it at an alter: a moved key's new records land in a new
    partition and can be consumed before its old records still waiting in the old one.
    """

    bootstrap: str
    command_config: str | None
    topic: str
    partitions: int
    to: int
    groups: tuple[GroupLag, ...]
    #: The groups were found by their committed offsets on the topic, not named (--group).
    discovered: bool = False
    lag_timeout: int = LAG_TIMEOUT
    assign_timeout: int = ASSIGN_TIMEOUT
    commit_timeout: int = COMMIT_TIMEOUT
    #: Groups whose members may leave a new partition without a committed offset when the
    #: producers resume (--accept-loss-risk): the offsets step says so instead of failing.
    accept_loss_risk: tuple[str, ...] = ()
    #: IN_PLACE: pause, drain, alter, resume; ONLINE: migcheck migrate's live copy.
    strategy: Strategy = Strategy.IN_PLACE
    tuning: MigrateTuning = field(default_factory=MigrateTuning)  # ONLINE: migrate's options
    #: ONLINE: migrate's --shadow-state where the runbook names one: MOVE where a source
    #: lost records and every store can move (the shadow is seeded with the moved state)
    shadow_state: ShadowState | None = None

    @property
    def group_ids(self) -> tuple[str, ...]:
        """The groups' ids, in the order the steps name them."""
        return tuple(g.group for g in self.groups)


class ShellCheck(StrEnum):
    """The script's check functions (migcheck/report/runbook_prelude.sh), one per member.

    Steps name a function through this enum, not a string, so a typo fails where the
    runbook is written, not where an operator runs it; a unit test proves each member is
    defined in the prelude.
    """

    HISTORY_INTACT = "history_intact"
    RECORD_OFFSETS = "record_offsets"
    GROUP_IS_EMPTY = "group_is_empty"
    ENSURE_TOPIC = "ensure_topic"
    ENSURE_PARTITIONS = "ensure_partitions"
    WAIT_INTERNAL_TOPICS = "wait_internal_topics"
    WAIT_LAG_ZERO = "wait_lag_zero"
    APP_IS_HEALTHY = "app_is_healthy"
    TOPIC_PARTITIONS = "topic_partitions"
    GROUPS_LAG = "groups_lag"
    WAIT_ASSIGNED = "wait_assigned"
    ENSURE_OFFSETS = "ensure_offsets"
    RECORD_BARRIER = "record_barrier"
    RECORD_COPY_BARRIER = "record_copy_barrier"
    COMMIT_BARRIER = "commit_barrier"
    COMMIT_AT_END = "commit_at_end"


class ShellHelper(StrEnum):
    """The prelude's functions a command runs through (:attr:`Run.via`)."""

    KAFKA_TOOL = "kafka_tool"  # finds Kafka's tool: $MIGCHECK_KAFKA_TOOL, $KAFKA_HOME...
    RESET_TOOL = "reset_tool"  # the reset, naming only the internal topics still there
    ANSWERING = "answering"  # migcheck with manual steps of its own: the script's --yes too
    MOVING = "moving"  # the state's copy: refused or failed, one FAILED line, nothing altered


@dataclass(frozen=True)
class Run:
    """A command: a Kafka tool (``kafka-topics``...), ``migcheck``, or a plain one."""

    argv: tuple[str, ...]
    kafka_tool: bool = False
    #: The script runs it through this shell function of its own (which then calls the
    #: Kafka tool) where a re-run needs more care than the bare command gives.
    via: ShellHelper | None = None


@dataclass(frozen=True)
class Manual:
    """What only a person can do: the script waits for a confirmation with ``--execute``."""

    text: str


@dataclass(frozen=True)
class Check:
    """A read-only check the script runs with ``--execute``; it stops the script on failure.

    ``function`` is one of the script's shell functions; ``text`` says what it checks.
    """

    function: ShellCheck
    args: tuple[str, ...]
    text: str
    shown: Run | None = None  # the command a person runs to check it by hand (Markdown)
    #: Read-only and run in the script's dry run too, which says what it would stop on.
    dry_run: bool = False


Action = Run | Manual | Check


def check_name(role: str, name: str, path: bool = False, hint: str = "") -> None:
    """Refuse a name from the cluster that a runbook cannot pass on safely: to Kafka's
    tools, or (``path``) as one directory (``state.dir/<application.id>``).  Only a
    runbook refuses: reports show every name, escaped (:mod:`migcheck.untrusted`)."""
    problem = path_problem(name) if path else arg_problem(name)
    if problem:
        raise UsageError(
            f"refused: the {role} {quoted(name)} cannot be passed on by a runbook: {problem}" + hint
        )


class StepRole(StrEnum):
    """What a step does that the runbook's header refers to: the header names the step by
    its role, never by a number that another procedure's order would make wrong."""

    STOP = "stop"  # every instance of the app stopped, its group found empty
    PRECHECKS = "prechecks"  # the first step: read-only checks before anything changes
    #: Where the rebuild of the app's state from its sources begins (the reset, the wipe
    #: before a rewind, the query created again, the shadow): the history is checked
    #: again right before it.
    REPROCESS = "reprocess"
    #: The change of the topics themselves (the alter, the copy, the producers' switch and
    #: resume): one step however many apps read them (:mod:`migcheck.runbook.together`).
    CHANGE = "change"


@dataclass(frozen=True)
class Step:
    title: str
    why: str
    actions: tuple[Action, ...]
    #: Destructive (the reset, the state wipe): said in the Markdown.  The script runs
    #: every step once anyway: a marker records that it succeeded, and a re-run after a
    #: later failure resumes at the failed step instead of repeating earlier ones against
    #: a changed state (stopping the restarted app, resetting it, wiping its new state).
    destructive: bool = False
    role: StepRole | None = None


@dataclass(frozen=True)
class Runbook:
    """A runbook as ``migcheck runbook`` returns it: the facts found on the cluster, the
    steps built from them, and which migcheck wrote it when.  Data, not text: the CLI alone
    writes it out, as Markdown or as a script (:mod:`migcheck.report.runbook`)."""

    facts: RunbookFacts | GroupsFacts
    steps: tuple[Step, ...]
    header: Header


@dataclass(frozen=True)
class SplitRefusal:
    """``--strategy in-place`` refused because keyed state would split: what the refusal
    names, so that its Markdown, its script and its line on stderr all say the same."""

    app_id: str
    topic: str
    to: int
    verdict: AppLevel  # migcheck app's verdict of the in-place change
    stores: tuple[str, ...] | None  # the stores that read the topic; None: unseen state may
    keys: tuple[str, ...]  # every key whose history would split, printable

    def __post_init__(self) -> None:
        # as RunbookFacts: a level's own value becomes the level, any other word fails here
        object.__setattr__(self, "verdict", AppLevel(self.verdict))
