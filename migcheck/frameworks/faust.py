"""Faust (faust-streaming): its naming, its evidence, its error, and its runbook.

Naming: its assignor's leader topic ``<app id>-__assignor-__leader``, and the assignor
``faust`` its members agree on; a table's changelog ``<app id>-<table>-changelog``
(Collection._changelog_topic_name), a ``group_by``'s topic
``<app id>-<topic>-<name>-repartition`` (Stream.group_by), named as Kafka Streams names
its own, so the marks above tell them apart (its evidence is tried before Kafka
Streams').

The runbook: no reset tool, and a changelog Faust creates itself.

What differs from Kafka Streams, as faust-streaming 0.15 behaves (``tests/integration/
test_faust.py`` runs it):

- a table's changelog is ``<app id>-<table>-changelog`` whatever the source topic is
  called, so a copy into a new topic keeps the old changelog's name: it must be deleted,
  or Faust refuses it (``PartitionsMismatch``: a changelog of another count than its
  source) at the first table write;
- Faust creates a missing changelog with the app's ``topic_partitions`` (8 by default)
  or the table's ``partitions``: the restarted worker must say the new count, or it
  creates the changelog with the wrong one and refuses it again;
- the state is the worker's datadir (``<app id>-data`` by default, one RocksDB database
  per table and partition): deleted, with the changelog gone, the tables are rebuilt
  from the reprocess alone;
- its consumer starts a partition without a committed offset where
  ``consumer_auto_offset_reset`` says: the start of the new topic is committed for the
  group, so the reprocess reads everything whatever the app says.

Moving the tables instead (``--strategy move-state``, :func:`faust_move_state`) is
written, as faust-streaming 0.15.3's source shows it, but not offered
(:data:`FAUST_MOVE_REFUSAL`): it needs the restarted workers under ``exactly_once`` (last
point below), and a real worker under it, restarted on the moved tables, read a record of
the next round twice or never in 3 of 10 runs beside a CPU load (no rebalance; the moved
table and the barrier exact), and once never exited after SIGTERM.  Safety fails closed:
``moved_id`` stays None until Faust's ``exactly_once`` holds.  The procedure:

- tables/base.py ``Collection._send_changelog`` writes each changelog record to the
  partition of the source record that changed the table (``event.message.partition``;
  ``Table.on_key_set`` through ``partition_for_key``), and
  ``_verify_source_topic_partitions`` refuses a changelog of another count than its
  source (``PartitionsMismatch``).  So a table keyed by the source record's key, as the
  same bytes, has its changelog placed by the producers' partitioner of that key, which
  ``migcheck copy`` proves from the records; it refuses a table keyed otherwise (a value's
  field, or the key as other bytes: Table._serializer_from_type writes a key as JSON
  unless ``key_type`` is bytes, ``"k2"`` for the key ``k2``, and no partitioner placed
  them all), so the move fails closed before anything changes (a real worker's
  str-keyed table was refused so);
- a new app id gives new changelogs (``<new id>-<table>-changelog``), filled beforehand
  at the new count, and a new group, whose offsets are committed at the barrier;
- the datadir (``{conf.name}-data`` by default, faust/types/_env.py) holds each table's
  RocksDB databases by table and partition (stores/rocksdb.py ``partition_path``:
  ``<datadir>/v1/tables/<table>-<partition>.db``), not by app id, with the changelog
  offsets they were read to: the new id's workers start with an empty one, and the old
  one stays, the way back;
- migcheck copy writes in transactions: each moved partition ends with a transaction
  marker, which tables/recovery.py steps over only under ``exactly_once``
  (``detect_aborted_tx``); under ``at_least_once`` the recovery waits for it forever (a
  real 0.15.3 worker did), so the new id's workers run under ``exactly_once``;
- a table behind a ``group_by`` is not moved: its changelog must have its repartition
  topic's count, which the app sets and Faust never checks
  (:func:`migcheck.apps.movable.unmovable` refuses it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from migcheck.frameworks.base import Framework
from migcheck.kafka.groups import GroupInfo
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import RunbookFacts, Step, StepRole, Strategy
from migcheck.model.topics import is_repartition_name
from migcheck.runbook.actions import (
    READ_COMMITTED_WHY,
    alter_step,
    commit_start,
    delete_changelogs,
    internal_topics_back,
    move_state_steps,
    new_topic_step,
    prechecks,
    reading,
    restart,
    rewind,
    stop,
    wipe_state,
)

#: Faust's PartitionAssignor's name, as its members agree on it.
FAUST_ASSIGNOR = "faust"


def faust_leader_topic(group_id: str) -> str:
    """The topic Faust's assignor creates for an app's leader election."""
    return f"{group_id}-__assignor-__leader"


FAUST_CHANGELOG_SUFFIX = "-changelog"
FAUST_REPARTITION_SUFFIX = "-repartition"


def faust_changelog(app_id: str, table: str) -> str:
    """A Faust table's changelog: ``f"{app.conf.id}-{self.name}-changelog"``."""
    return f"{app_id}-{table}{FAUST_CHANGELOG_SUFFIX}"


def faust_topics(app_id: str, topics: Iterable[str]) -> list[str]:
    """The topics named as Faust names an app's table changelogs and group-by topics
    (never its leader topic, which holds no state and is read by no stream)."""
    prefix = f"{app_id}-"
    suffixes = (FAUST_CHANGELOG_SUFFIX, FAUST_REPARTITION_SUFFIX)
    return sorted(
        t
        for t in topics
        if t.startswith(prefix) and any(_named(t[len(prefix) :], s) for s in suffixes)
    )


def _named(rest: str, suffix: str) -> bool:
    return rest.endswith(suffix) and len(rest) > len(suffix)


def faust_table(app_id: str, topic: str) -> str | None:
    """The table whose changelog ``topic`` is, by Faust's rule; None for any other topic."""
    prefix = f"{app_id}-"
    rest = topic[len(prefix) :]
    if not (topic.startswith(prefix) and _named(rest, FAUST_CHANGELOG_SUFFIX)):
        return None
    return rest[: -len(FAUST_CHANGELOG_SUFFIX)]


#: faust-streaming's E_SOURCE_PARTITIONS_MISMATCH (faust/tables/base.py), the text of the
#: PartitionsMismatch a table raises: the same in 0.1.0, 0.6.0, 0.10.0, 0.11.0, 0.13.0 and
#: 0.15.3, and the text a real 0.15.3 app raised (fixtures/faust/FINDINGS.md).
FAUST_MISMATCH = """\
The source topic {source_topic!r} for table {table_name!r}
has {source_n} partitions, but the changelog
topic {change_topic!r} has {change_n} partitions.

Please make sure the topics have the same number of partitions
by configuring Kafka correctly.
"""


def faust_invalid(
    protocol: Protocol, topic: str, expected: int, actual: int, *, source: str, app_id: str
) -> str:
    """Faust's PartitionsMismatch, as a table raises it at its first write of a record of
    ``source`` (Collection._verify_source_topic_partitions): the source's count against
    its changelog's, both names as Python's repr() writes them."""
    text = FAUST_MISMATCH.format(
        source_topic=source,
        table_name=faust_table(app_id, topic) or topic,
        source_n=expected,
        change_topic=topic,
        change_n=actual,
    )
    return f"faust.exceptions.PartitionsMismatch: {text.rstrip()}"


def _evidence(group: GroupInfo, topics: Collection[str]) -> Sequence[str]:
    facts = []
    if group.protocol == FAUST_ASSIGNOR:
        facts.append(f"its members use Faust's assignor {FAUST_ASSIGNOR!r}")
    leader = faust_leader_topic(group.group_id)
    if leader in topics:
        facts.append(f"Faust's leader topic {leader} exists")
    return facts


def _increase(group: str, topic: str, to: str) -> str:
    return (
        "its tables raise PartitionsMismatch at their first write once their changelog's "
        f"count no longer matches the topic's; migcheck app --application-id {group} "
        f"--topic {topic} --to {to} judges it"
    )


# --- the runbook -----------------------------------------------------------------------

_STOP_WHY = (
    "Every worker must be down before the change: a running worker would keep writing its "
    "tables and their changelogs, and the offsets below can be committed only while the "
    "group has no members. A Faust worker leaves the group when it stops (SIGTERM)."
)

_ALTER_WHY = (
    "In place is correct only when no table reads the topic directly: a table behind a "
    "group_by keeps its partitioning (Faust never checks a repartition topic's count)."
)
_SPLIT = (
    "Each moved key's old records stay in its old partition, so the reprocess counts them "
    "in another partition's table than its new records."
)


def faust_steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure for ``f.strategy``.

    New topic: copy, wipe the datadir, delete the changelogs, commit the new topic's
    start, restart with the new count.  In place with a table fed directly (written only
    with --accept-split-history): alter, wipe, delete the changelogs, send the group back
    to the start, restart; each moved key's history then splits.  In place otherwise: the
    alter, and the new partitions' start committed.  Move-state: the tables moved, not
    rebuilt (:func:`faust_move_state`).
    """
    if f.strategy is Strategy.MOVE_STATE:
        return faust_move_state(f)
    head = [prechecks(f), stop(f, _STOP_WHY, _what(f))]
    rebuild = [_wipe(f), *([_delete_changelogs(f)] if f.internal else [])]
    if f.strategy is Strategy.NEW_TOPIC:
        return [*head, new_topic_step(f), *rebuild, _offsets(f, 0), _restart(f)]
    if f.split_keys is not None:
        return [
            *head,
            alter_step(f, _ALTER_WHY, _SPLIT),
            *rebuild,
            rewind(f, "empty tables"),
            _restart(f),
        ]
    return [*head, alter_step(f, _ALTER_WHY, _SPLIT), _offsets(f, f.partitions), _restart(f)]


def _what(f: RunbookFacts) -> str:
    """The app as the stop step names it."""
    return f"the Faust application (consumer group {f.app_id})"


def _wipe(f: RunbookFacts) -> Step:
    where = f.state_dir or f"{f.app_id}-data"
    return wipe_state(
        f,
        f"On every worker, delete {where} (the app's datadir, '{{conf.id}}-data' by "
        "default, relative to the worker's working directory): it holds every table's "
        "RocksDB databases, partitioned as before.",
        "A table left on disk keeps the old partitioning and its changelog offsets, and "
        "would be read instead of being rebuilt from the reprocess.",
        path=f.state_dir,
        role=StepRole.REPROCESS,
    )


def _delete_changelogs(f: RunbookFacts) -> Step:
    return delete_changelogs(
        f,
        f"Faust names a table's changelog after the app, not its topic, so the restarted "
        f"worker would find them with {f.partitions} partitions and refuse them "
        f"(PartitionsMismatch): deleted, Faust creates them again with the count the "
        f"worker says.",
    )


def _offsets(f: RunbookFacts, first: int) -> Step:
    return commit_start(
        f,
        first,
        "Faust starts a partition without a committed offset where the app's "
        "consumer_auto_offset_reset says (earliest by default, latest where the app says "
        "so). The group has no members now, so Kafka's tool commits the start of each "
        "partition that has no offset, and the reprocess reads every record.",
    )


def _restart(f: RunbookFacts) -> Step:
    source = f"with app.topic({f.target!r}) in place of {f.topic!r}, " if f.copied else ""
    copied = f.copied
    committed = (
        " Through the copy, also processing_guarantee='exactly_once', at least until the "
        "lag has drained: faust-streaming reads committed records only then (its consumer "
        "reads uncommitted ones otherwise)."
    )
    start = (
        f"Start every worker {source}the same app id, and topic_partitions={f.to} (and "
        f"partitions={f.to} on each Table that names a count): Faust creates the "
        "changelogs with that count." + (committed if copied else "")
    )
    topics = internal_topics_back(f, "its changelogs exist with their counts: ")
    return restart(
        f,
        "Faust creates its changelogs, rebuilds its tables from the start, the lag drains "
        "to 0, and migcheck app finds it healthy." + (f" {READ_COMMITTED_WHY}" if copied else ""),
        start,
        topics if f.expected_internal else None,
    )


# --- moving the tables (--strategy move-state) ---------------------------------------

_MOVE_STOP_WHY = (
    "Every worker must be down before its tables move: a running worker would keep "
    "writing its tables and their changelogs, and the offsets it commits as it stops are "
    "the barrier. A Faust worker leaves the group when it stops (SIGTERM)."
)

#: Where Faust writes a changelog record (tables/base.py), so what ``migcheck copy`` proves.
_PLACED = (
    "Faust writes each changelog record to the partition of the source record that "
    "changed the table (Collection._send_changelog: event.message.partition): for a table "
    "keyed by the source record's key, as the same bytes, where the producers' partitioner "
    "put that key under the old count."
)


#: Why the workers restart under exactly_once (tables/recovery.py, faust-streaming 0.15.3).
_MOVED_IN_TRANSACTIONS = (
    "migcheck copy writes in transactions, so each moved changelog partition ends with a "
    "transaction marker, which no consumer is given: Faust's recovery steps over it only "
    "in a transaction (Recovery's detect_aborted_tx, under exactly_once); under "
    "at_least_once it waits for a record at that offset forever, and the worker never "
    "gets ready."
)


#: Why Faust's tables are not moved (the module's docstring has the evidence).
FAUST_MOVE_REFUSAL = (
    "its moved tables need the restarted workers under processing_guarantee="
    "'exactly_once' (the copy's transaction markers), and a real worker under it "
    "(faust-streaming 0.15.3, aiokafka 0.14.0) read a record twice or never in 3 of 10 runs "
    "beside a CPU load, so the move is not offered"
)


def faust_move_state(f: RunbookFacts) -> list[Step]:
    """The tables moved, not rebuilt, in the order every framework's move takes
    (:func:`~migcheck.runbook.actions.move_state_steps`): the workers drain and stop at a
    barrier, each table's changelog is copied into ``f.moved_app_id``'s at the new count,
    the input is altered, and the workers restart under the new id with an empty datadir,
    restoring each table from its moved changelog and reading on from the barrier."""
    moved = replace(f, app_id=f.moved_app_id)
    return move_state_steps(
        f,
        stopped=stop(f, _MOVE_STOP_WHY, _what(f)),
        placed=_PLACED,
        refused="a table keyed by other bytes than the source key's, which only its records "
        "show: Faust writes a table's key as JSON unless its key_type is bytes, or the "
        "table is keyed by a value's field",
        wipe=_moved_datadir(f),
        restarted=restart(
            moved,
            "Faust restores each table from its moved changelog (from its start: the new "
            "datadir holds no offsets) and reads on from the barrier: its changelogs have "
            "the new count, the lag drains to 0, and migcheck app finds it healthy. "
            f"{_MOVED_IN_TRANSACTIONS}",
            f"Start every worker with the app id {f.moved_app_id!r} in place of "
            f"{f.app_id!r} (the same code and settings otherwise), {reading(f)}, with "
            f"topic_partitions={f.to} (and partitions={f.to} on each Table that names a "
            "count), the empty datadir above, and processing_guarantee='exactly_once' "
            "(keep it).",
            internal_topics_back(moved, "the new id's changelogs have their counts: "),
        ),
    )


def _moved_datadir(f: RunbookFacts) -> Step:
    """The new id's datadir found empty; the old one is left as it is (the way back), so
    the script deletes nothing here, whatever --state-dir names."""
    old = f.state_dir or f"{f.app_id}-data"
    return wipe_state(
        replace(f, state_dir=None),
        f"On every worker, make sure the datadir the workers start with under "
        f"{f.moved_app_id} is empty or absent: Faust's default '{{conf.name}}-data' gives "
        f"{f.moved_app_id}-data; an app that sets datadir to a path of its own needs a new "
        f"one. Leave {old} (the old id's) as it is.",
        "Faust keeps each table's RocksDB databases in the datadir by table and partition, "
        "not by app id, with the changelog offsets they were read to: a worker given the "
        "old datadir would read the old partitioning's tables instead of restoring them "
        "from the moved changelogs.",
    )


def faust_internal(
    app_id: str, internal: Iterable[str], to: int
) -> tuple[tuple[str, ...], dict[str, int]]:
    """The changelogs the runbook deletes, and those the restarted worker creates with
    the new count: the same names (a group_by's topic keeps its count, as Faust never
    checks it, and is left alone)."""
    changelogs = tuple(sorted(t for t in internal if faust_table(app_id, t) is not None))
    return changelogs, dict.fromkeys(changelogs, to)


FAUST = Framework(
    kind=ReaderKind.FAUST,
    name="Faust",
    label="a Faust application",
    takes_topology=False,
    internal_topics=faust_topics,
    internal=lambda app_id, name: f"{app_id}-{name}",  # a table's changelog <table>-changelog
    changelog=faust_changelog,
    is_repartition=is_repartition_name,
    checks_repartition=False,  # a group_by's topic keeps the count it was created with
    changelog_by_key=False,  # a table writes a key to its source record's partition
    invalid=faust_invalid,
    releases=lambda p: "faust-streaming 0.1 to 0.15",
    fails_when="at the first table write after the worker starts again (Faust checks once "
    "per source topic per process); the agent then crashes at every record, its supervisor "
    "restarting it, and each record it crashed on is committed unprocessed while the worker "
    "runs on. A worker running through the alter is no safer: once its consumer's metadata "
    "refresh (consumer_metadata_max_age_ms, 5 min by default) brings the new partitions, it "
    "counts the moved keys from empty state (a RocksDB store keeps state per partition) "
    "until its first changelog write to a new partition fails in aiokafka with "
    '"AssertionError: Unrecognized partition" and the worker exits',
    unseen="a Faust table's changelog shows its state; a stream without a table keeps "
    "none, but an agent may keep state of its own that no topic shows",
    names_source=True,
    evidence=_evidence,
    increase=_increase,
    runbook=faust_steps,
    online_refusal="a shadow would be the same app under another id (Faust names its "
    "changelogs after the app), but migcheck offers a shadow route only once it has run one "
    "against the real framework, and has not for Faust yet; use --strategy new-topic",
    leftovers=lambda app_id, _topic, _target, to, internal, _rebuilt: faust_internal(
        app_id, internal, to
    ),  # whatever the target: a changelog is named after the app
    # once a worker under exactly_once holds (the docstring): Kafka Streams' <id>-p<N>, a new
    # id giving new changelogs and a new group, the old ones left as the way back
    moved_id=None,
    move_refusal=FAUST_MOVE_REFUSAL,
    crash_words="{name}'s tables fail at their first write after a restart, and a running "
    "worker dies once it sees the new partitions",
    logs_every_store=True,
)
