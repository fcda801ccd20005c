"""The ``migcheck app`` report's one typed definition: its JSON, field by field.

Like :mod:`migcheck.model.analyze` (whose topic entries it reuses for the
``--state`` analysis), each TypedDict is one JSON object with its fields in the
documented order; :mod:`migcheck.report.schema` derives the key order and the
saved-report check from here, and ``docs/report-schema.md`` is tested against
it.  It sits in ``analysis/`` because ``apps/`` builds it and ``report/``
renders it, and those two layers do not import each other.
"""

from enum import StrEnum
from typing import NotRequired, TypedDict

from migcheck.model.analyze import Bounds, Interval, Mode, Source, TopicEntry
from migcheck.model.header import Kind


class AppLevel(StrEnum):
    """An app's verdict, from best to worst; the worst over sub-topologies is the
    application's.  Here, below both ``apps/`` (which finds it) and ``gate/`` (which
    maps every member to a rule, failing closed on any it does not know)."""

    SAFE = "SAFE"
    CORRUPT = "CORRUPT"
    CRASH = "CRASH"


class AppGroup(TypedDict):
    type: str  # "classic", "streams" or "none"
    state: str | None
    members: int


class AppTopic(TypedDict):
    topic: str
    role: str  # "source", "changelog", "repartition"
    partitions: int
    cleanup_policy: str


class AppSubtopology(TypedDict):
    id: int
    is_global: bool
    sources: list[str]
    sinks: list[str]
    stores: list[str]
    tasks: int


class AppReason(TypedDict):
    level: AppLevel
    subtopology: int | None
    text: str
    topics: list[str]
    stores: list[str]
    # which check it trips, or that none does (apps/rules.py's Check: changelog,
    # repartition, copartition, unchecked-join, unchecked-state, unseen-state); absent
    # before the gate (issue 42), which tells unseen state (UNKNOWN) from split state
    check: NotRequired[str]
    # when it holds, where the evidence cannot tell whether topics are joined (e.g. "orders
    # and customers are joined (co-partitioned)"); None: whatever the app's shape; absent
    # before issue 53
    condition: NotRequired[str | None]


class SubtopologyVerdict(TypedDict):
    id: int
    tasks: int
    new_tasks: int
    verdict: AppLevel


class StoreImpact(TypedDict):
    store: str
    subtopology: int
    logged: bool
    analyzed_topic: str
    partitions: int
    new_partitions: int
    moved_keys: int
    moved_keys_interval: Interval | None
    moved_keys_bounds: NotRequired[Bounds | None]
    moved_bytes: int
    moved_bytes_interval: Interval | None
    moved_bytes_bounds: NotRequired[Bounds | None]
    restore_records: int
    restore_bytes: int


class ErrorCandidate(TypedDict):
    """What the app prints first in one of the shapes the evidence allows."""

    error: str | None  # None: nothing crashes in that shape
    verdict: AppLevel
    check: str | None  # the check that fails first, or None
    condition: str  # when the app is of that shape


class AppCandidate(TypedDict):
    partitions: int
    verdict: AppLevel
    error: str | None
    # the client releases whose words ``error`` is (None without an error); absent in
    # reports of migcheck before the Kafka versions issue (26)
    error_releases: NotRequired[str | None]
    # when the app meets ``error`` (None without an error); absent before issue 41
    error_when: NotRequired[str | None]
    # the state left by the clean-up the error leads to, when the app would start again
    # and a store reads a changed topic directly (CORRUPT); absent before issue 41's runbooks
    after_cleanup: NotRequired[str | None]
    # what every remedy would lose (model/history.py): the change is not SAFE, so each
    # runbook and migrate rebuild the state, and a source lost records; absent before 68
    lost_history: NotRequired[str | None]
    # beside lost_history: whether every store's state can move instead (migcheck runbook
    # --strategy move-state), which reprocesses nothing; absent where lost_history is None,
    # and before issue 70
    move_state: NotRequired[bool]
    reasons: list[AppReason]
    subtopologies: list[SubtopologyVerdict]
    stores: list[StoreImpact] | None
    # where the evidence cannot tell whether topics are joined and that decides what the
    # app prints first (``error`` is then None): each first error with its condition, in
    # the order Kafka Streams checks them; None when ``error`` says it; absent before 53
    error_candidates: NotRequired[list[ErrorCandidate] | None]


#: What settles which of several candidate errors comes first.
TOPOLOGY_SETTLES = "--topology (the app's Topology#describe()) settles which"


def first_error(c: AppCandidate) -> str | None:
    """The first error of a candidate in one line, as ``app``, the gate's reasons and the
    runbook's header all quote it: the error, or the candidates with their conditions in
    the order Kafka Streams checks them, and what settles it; None when nothing crashes."""
    if c["error"]:
        return c["error"]
    cands = c.get("error_candidates")
    if not cands:
        return None
    each = "; ".join(
        f"({i}) if {x['condition']}: {x['error'] or 'no error, ' + x['verdict']}"
        for i, x in enumerate(cands, 1)
    )
    return (
        "whether topics are joined decides the first error, and the cluster does not show it "
        f"({TOPOLOGY_SETTLES}); in the order Kafka Streams checks them: {each}"
    )


class StateRoute(TypedDict):
    """The route one store's state can take (issue 70): moved (``migcheck runbook
    --strategy move-state``), with its changelog's size, or the reason it cannot."""

    store: str
    changelog: str
    movable: bool
    records: int | None  # offsets in range over the changelog's partitions; None: not movable
    # the brokers' log dirs, one copy of each partition; None: not movable, or no broker
    # described its log (DescribeLogDirs needs DESCRIBE on the cluster)
    bytes: int | None
    reason: str | None  # why it cannot move; None: movable


class AppState(TypedDict):
    mode: Mode
    sample_per_partition: int | None
    topics: list[TopicEntry]
    # each store's route (issue 70): moved or why not; absent before issue 70
    routes: NotRequired[list[StateRoute]]


class MoveTogether(TypedDict):
    topics: list[str]
    why: str


def together_said(group: MoveTogether) -> str:
    """A co-partitioned group as every report names it: its topics, and why."""
    return f"Move together: {', '.join(group['topics'])} ({group['why']})."


class AppReport(Kind):
    migcheck_version: str
    generated_at: str
    source: Source
    application_id: str
    # the stream processor judged: kafka-streams, ksqldb or quix-streams (a ReaderKind's
    # value); absent before issue 41, when every app was a Kafka Streams app
    framework: NotRequired[str]
    group: AppGroup
    protocol: str
    basis: str
    basis_note: str | None
    notes: list[str]
    topics: list[AppTopic]
    subtopologies: list[AppSubtopology]
    health: list[AppReason]
    # the source topics that must widen together (co-partitioned: a join), each group with
    # why (which join, from which evidence); absent before issue 71
    together: NotRequired[list[MoveTogether]]
    changes: list[str]
    candidates: list[AppCandidate]
    verdict: AppLevel
    state: AppState | None
