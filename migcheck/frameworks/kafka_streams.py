"""Kafka Streams: its naming, its evidence, its error in its releases' words, and its runbook.

Naming: ``<application.id>-<name>-changelog`` / ``-repartition`` (and a foreign-key
join's subscription topics), :func:`migcheck.model.topics.is_internal`; and the metadata
of its commits, the partition time (TopicPartitionMetadata: base64 of a magic byte 1 or
2 and an 8-byte time), which an app without internal topics leaves behind too.

The runbook: in place, ``kafka-topics --alter``, then the reset, which sends the app
back to the earliest offsets and deletes its internal topics, then an empty local state;
correct when no store reads the topic directly.  A new topic, for a store that does:
after an in-place alter each moved key's old records stay in its old partition while its
new records arrive in the new one, so reprocessing splits the key's history over two
tasks.  Reprocessing is correct only when every key's whole history sits in the
partition the new count gives it: a copy into a new, wider topic with the producers'
partitioner (``migcheck copy``), then the reset, then an empty local state.  Both need
the full history: a source whose log start offset is above 0 has lost records a
reprocess needs.

Pure.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from migcheck.frameworks.base import Framework, some
from migcheck.kafka.groups import GroupInfo
from migcheck.model.migrate import ShadowStart
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import (
    Run,
    RunbookFacts,
    ShellHelper,
    Step,
    StepRole,
    Strategy,
)
from migcheck.model.topics import CHANGELOG_SUFFIX, is_internal, is_repartition_name
from migcheck.runbook.actions import (
    READ_COMMITTED_WHY,
    alter_step,
    group_is_empty,
    internal_topics_back,
    kafka,
    move_state_steps,
    new_topic_step,
    prechecks,
    reading,
    restart,
    stop,
    wipe_state,
)
from migcheck.runbook.online import app_migrate_step
from migcheck.words import listing

#: The assignment protocol Kafka Streams' members agree on in a classic group
#: (StreamsPartitionAssignor's name).
STREAMS_ASSIGNOR = "stream"


RESET_HINT = (
    "Use 'org.apache.kafka.tools.StreamsResetter' tool "
    "to clean up invalid topics before processing."
)


def streams_topics(group_id: str, topics: Iterable[str]) -> list[str]:
    """The topics named as Kafka Streams names an application's internal topics."""
    return sorted(t for t in topics if is_internal(group_id, t))


def streams_commit_metadata(metadata: str) -> bool:
    """Whether a commit's metadata is Kafka Streams' partition time."""
    try:
        raw = base64.b64decode(metadata, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) >= 9 and raw[0] in (1, 2)


def streams_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    """The error Kafka Streams raises for an internal topic of the wrong size.

    Classic: InternalTopicManager's StreamsException in the group leader, worded alike
    by Kafka Streams 3.9.2 and 4.3.1 (their jars' format strings are the same, and a
    real 3.9.2 app crashed with this text: FINDINGS.md, "Kafka 3.9 and 4.3"), so the
    quote holds whatever the client's version.  Streams protocol (4.1 on; 3.x has only
    the classic one): the broker reports INCORRECTLY_PARTITIONED_TOPICS and the client
    throws a TopologyException, as Kafka 4.3 prints it.
    """
    if protocol == Protocol.STREAMS:
        return (
            f"Invalid topology: Existing topic {topic} has different number of partitions: "
            f"expected {expected}, found {actual}"
        )
    return (
        f"Existing internal topic {topic} has invalid partitions: "
        f"expected: {expected}; actual: {actual}. {RESET_HINT}"
    )


def streams_releases(protocol: Protocol) -> str:
    """The classic texts are the same in the jars of 3.9.2 and 4.3.1 and in a real crash
    of each (FINDINGS.md, "Kafka 3.9 and 4.3"); the streams protocol exists from 4.1."""
    first = "4.1" if protocol == Protocol.STREAMS else "3.9"
    return f"Kafka Streams {first} to 4.3"


def _streams_internal(app_id: str, name: str) -> str:
    return f"{app_id}-{name}"


def _streams_changelog(app_id: str, store: str) -> str:
    return f"{app_id}-{store}{CHANGELOG_SUFFIX}"


def _evidence(group: GroupInfo, topics: Collection[str]) -> Sequence[str]:
    if group.group_type == "streams":
        return ("a streams group (KIP-1071)",)
    if group.protocol == STREAMS_ASSIGNOR:
        return (f"its members use Kafka Streams' assignor {STREAMS_ASSIGNOR!r}",)
    if group.members and group.protocol:
        return ()  # a running group whose assignor is someone else's
    internal = streams_topics(group.group_id, topics)
    if internal:
        return (f"internal topics named by Kafka Streams' rule: {some(internal)}",)
    metadata = group.commit_metadata
    if metadata and all(map(streams_commit_metadata, metadata)):
        return ("its commits carry Kafka Streams' metadata (the partition time)",)
    return ()


def _increase(group: str, topic: str, to: str) -> str:
    return f"migcheck app --application-id {group} --topic {topic} --to {to} judges it"


# --- the runbook -----------------------------------------------------------------------

#: Why the Kafka Streams app stops first, and why the check waits.
_CLOSE_WHY = (
    "A Kafka Streams member of a classic group does not leave it on close(): the broker "
    "drops it when its session.timeout.ms (45 s by default) runs out."
)
STOP_WHY = (
    "Every instance must be down before the change and the reset: the reset refuses an "
    f"active group, and a running instance would keep writing state. {_CLOSE_WHY}"
)
#: Why the app stops before its state moves.
MOVE_STOP_WHY = (
    "Every instance must be down before its state moves: a running instance would keep "
    "writing state, and the offsets it commits as it closes are the barrier. "
    f"{_CLOSE_WHY}"
)

#: Why in place is correct for a Kafka Streams app, when it is.
ALTER_WHY = (
    "In place is correct only when no store reads the topic directly: a store behind a "
    "repartition topic is fed by its own key, and the reset recreates the internal "
    "topics with the new counts."
)


def steps(f: RunbookFacts) -> list[Step]:
    """Kafka Streams' ordered procedure for ``f.strategy`` (the id is checked by
    :func:`migcheck.frameworks.registry.runbook_steps`, every framework's way in)."""
    if f.strategy is Strategy.ONLINE:
        shadow = (
            "a shadow of the app: the same app with "
            f"application.id={streams_shadow_id(f.app_id, f.to)}"
        )
        return [prechecks(f), app_migrate_step(f, shadow)]
    if f.strategy is Strategy.MOVE_STATE:
        return move_state(f)
    change = new_topic_step(f) if f.strategy == Strategy.NEW_TOPIC else alter_step(f, ALTER_WHY)
    return [prechecks(f), stop(f, STOP_WHY), change, _reset(f), _local_state(f), _restart(f)]


#: Where a Kafka Streams changelog record sits, so what ``migcheck copy`` proves of it.
_PLACED = (
    "Each changelog record sits on the partition of the task that wrote it: for a store "
    "keyed by the record key, where the producers' partitioner put that key under the old "
    "count."
)


def move_state(f: RunbookFacts) -> list[Step]:
    """The state moved, not rebuilt (:func:`~migcheck.runbook.actions.move_state_steps`):
    the app drains, repartition topics included, and stops at a barrier, its changelogs
    are copied into ``f.moved_app_id``'s at the new count, the input is altered in place
    (or, with --into, copied into a new topic that the producers switch to, the input left
    as it was), and the app restarts under the new id from the barrier, restoring its
    stores from the moved changelogs.  Kafka Streams refuses a changelog of the old count
    under the same application.id, so the new id's topics are new, and the old app's stay
    as the way back.  Nothing is reprocessed: a trimmed history is fine."""
    moved = replace(f, app_id=f.moved_app_id)
    return move_state_steps(
        f,
        stopped=stop(f, MOVE_STOP_WHY),
        placed=_PLACED,
        refused="a custom StreamPartitioner's changelog, which only its records show",
        wipe=_moved_state_dir(moved),
        restarted=restart(
            moved,
            "It restores each store from its moved changelog and reads on from the barrier: "
            "its internal topics have the new counts, the lag drains to 0, and migcheck app "
            "finds it healthy.",
            f"Start the application with application.id={f.moved_app_id} in place of "
            f"{f.app_id} (the same code and configs otherwise), {reading(f)}.",
            internal_topics_back(moved, "the new id's internal topics have their counts: "),
        ),
        repartition=[t for t in f.internal if is_repartition_name(t)],
    )


def _moved_state_dir(moved: RunbookFacts) -> Step:
    where = moved.state_dir or "${java.io.tmpdir}/kafka-streams"
    return wipe_state(
        moved,
        f"On every instance, make sure {where}/{moved.app_id} (state.dir/application.id of "
        "the new id) is empty or absent; leave the old id's directory as it is.",
        "The app must restore its stores from the moved changelogs, not from a local "
        "state of an earlier try.",
    )


def streams_renamed(app_id: str, internal: str, renames: Mapping[str, str]) -> str:
    """``internal``'s name once the app reads each source of ``renames`` under its new name.

    Why: an unnamed source KTable (``builder.table(topic)``) names its store after its
    topic, ``<topic>-STATE-STORE-<n>``, and so its changelog; restarted on a copy, the app
    creates ``<app>-<copy>-STATE-STORE-<n>-changelog`` instead (a real stream-table join,
    tests/integration/test_app_joins.py).  Every other internal name is the topology's own."""
    for old, new in renames.items():
        prefix = f"{app_id}-{old}-STATE-STORE-"
        if internal.startswith(prefix):
            return f"{app_id}-{new}-STATE-STORE-{internal.removeprefix(prefix)}"
    return internal


def streams_shadow_id(app_id: str, to: int) -> str:
    """The shadow is the same app under its own application.id, so that its group, its
    internal topics and its state start empty."""
    return f"{app_id}-p{to}"


def streams_shadow(s: ShadowStart) -> str:
    """The shadow is the same app under another application.id, so that its group, its
    internal topics and its state start empty, fed by the new topic from the start.  It
    reads committed records only (a killed copy leaves aborted ones), and commits often,
    so that it reaches lag 0 at the barrier within the cut-over's few seconds.  A shadow
    seeded with moved state (``s.moved``) starts after the switch instead: its offsets
    are committed at the barrier, and it restores its stores from the moved changelogs."""
    if s.moved:
        return (
            f"start a shadow of app {s.app_id}: the same app with "
            f"application.id={s.shadow_id}, reading {s.reading} (its "
            f"offsets there are committed at the barrier), writing each output to its "
            f"shadow ({s.output_pairs}), with consumer.isolation.level=read_committed, its "
            f"state directory empty: its state is moved, not rebuilt, and it restores each "
            f"store from its moved changelog ({', '.join(s.moved)}) before it reads on; "
            "answer y once it runs"
        )
    return (
        f"start a shadow of app {s.app_id}: the same app with application.id={s.shadow_id}, "
        f"reading {s.reading}, writing each output to its shadow "
        f"({s.output_pairs}), with consumer.isolation.level=read_committed and "
        "commit.interval.ms=1000 or less (or processing.guarantee=exactly_once_v2), its "
        "state directory empty; the old app keeps serving; answer y once it runs"
    )


#: The reset tool's flag for the config file as written: the one every reset tool of Kafka
#: 3.6 to 4.3 accepts.  4.2 deprecates it for --command-config, which 3.x to 4.1 refuse;
#: the script passes the flag the installed tool lists (runbook_prelude.sh, reset_tool).
RESET_CONFIG_FLAG = "--config-file"


def _reset(f: RunbookFacts) -> Step:
    inputs = ",".join(dict.fromkeys([*f.topics, *f.targets]))
    args = ["--application-id", f.app_id, "--input-topics", inputs]
    if f.internal:
        args += ["--internal-topics", ",".join(f.internal)]
    tool = kafka(f, "kafka-streams-application-reset", *args, config_flag=RESET_CONFIG_FLAG)
    # a reset that deleted the internal topics and then failed must be able to run again
    reset = Run(tool.argv, kafka_tool=True, via=ShellHelper.RESET_TOOL)
    dry = Run((*tool.argv, "--dry-run"), kafka_tool=True, via=ShellHelper.RESET_TOOL)
    flag = (
        f" Its config flag depends on the tool's version: Kafka 4.2 and later take "
        f"--command-config (and deprecate {RESET_CONFIG_FLAG}), 3.x to 4.1 know only "
        f"{RESET_CONFIG_FLAG}, shown here; the script asks the installed tool's --help."
        if f.command_config
        else ""
    )
    return Step(
        "Reset the application",
        "The reset tool sends the app back to the earliest offsets of its inputs and deletes "
        "its internal topics (named here, as found on the cluster), so they come back with "
        f"{f.to}-partition counts. It runs once: its dry run first, then for real.{flag}",
        (
            group_is_empty(f, f"the group {f.app_id} still has no members"),
            dry,
            reset,
        ),
        destructive=True,
        role=StepRole.REPROCESS,
    )


def _local_state(f: RunbookFacts) -> Step:
    where = f.state_dir or "${java.io.tmpdir}/kafka-streams"
    return wipe_state(
        f,
        f"On every instance, delete {where}/{f.app_id} (state.dir/application.id), or have "
        "the app call KafkaStreams#cleanUp() before start(): the reset tool does not touch "
        "local state.",
        "A store left on disk would be restored from, and keep the old partitioning.",
    )


def _restart(f: RunbookFacts) -> Step:
    copied = f.copied
    return restart(
        f,
        "Its internal topics come back with the new counts, the lag drains to 0, and "
        "migcheck app finds it healthy." + (f" {READ_COMMITTED_WHY}" if copied else ""),
        f"Start the application {f.app_id} reading {_instead(f)}, with "
        f"{READ_COMMITTED} (exactly_once_v2 sets it already)."
        if copied
        else f"Start the application {f.app_id}.",
        internal_topics_back(f, "the internal topics come back with their counts: "),
    )


def _instead(f: RunbookFacts) -> str:
    """Each topic the app reads after the change, and the one it replaces."""
    return listing([f"{f.target_of(w)} (instead of {w.topic})" for w in f.widened])


#: The setting that makes a Kafka Streams app read committed records only; under
#: at-least-once (the default) its consumer reads uncommitted ones.
READ_COMMITTED = "consumer.isolation.level=read_committed"


_STREAMS_UNSEEN = (
    "without --topology a store with logging disabled, or a source topic used as a "
    "changelog, cannot be ruled out (pass the app's Topology#describe() with --topology "
    "to decide)"
)

KAFKA_STREAMS = Framework(
    kind=ReaderKind.KAFKA_STREAMS,
    name="Kafka Streams",
    label="a Kafka Streams application",
    takes_topology=True,
    internal_topics=streams_topics,
    internal=_streams_internal,
    changelog=_streams_changelog,
    is_repartition=is_repartition_name,
    checks_repartition=True,
    changelog_by_key=True,
    invalid=streams_invalid,
    releases=streams_releases,
    fails_when="at the app's next rebalance: its next start, or a running app's next "
    "metadata refresh",
    unseen=_STREAMS_UNSEEN,
    evidence=_evidence,
    increase=_increase,
    runbook=steps,
    runbook_sets=True,
    renamed=streams_renamed,
    shadow=streams_shadow,
    shadow_id=streams_shadow_id,
    moved_id=streams_shadow_id,  # the shadow's id: a moved state restarts under it too
    # Kafka Streams 4.3.1 on a 4.3.1 broker, stopped and running (FINDINGS.md, "Streams
    # protocol through an alter, stopped and running")
    streams_fails_when="at its next heartbeat, when the broker reports "
    "INCORRECTLY_PARTITIONED_TOPICS: a stopped app as it starts, a running one within "
    "seconds of the alter (group.streams.heartbeat.interval.ms, 5 s by default); Kafka "
    "Streams' default uncaught-exception handler then shuts the client down (ERROR), while "
    "a handler that returns REPLACE_THREAD stalls it (every new thread fails alike; the app "
    "stays in REBALANCING with no tasks, its group NotReady, until the topic is fixed)",
)
