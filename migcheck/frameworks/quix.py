"""Quix Streams: its naming, its evidence, its error, and its runbook.

Naming: ``changelog__<group>--<topic>--<store>`` and
``repartition__<group>--<topic>--<operation>`` (its TopicManager).

The runbook for a Quix Streams app: what to run, in the order Quix needs, to widen its input.

Pure: :class:`RunbookFacts` in, steps out.  What differs from Kafka Streams' procedure,
as quixstreams 3.28's source and a real app show it (fixtures/quix/FINDINGS.md):

- There is no reset tool.  State lives in ``<state_dir>/<consumer_group>`` (``state_dir``
  is ``state`` by default, relative to the app's working directory):
  ``Application.clear_state()`` removes it (and refuses while partitions are assigned),
  or the folder is deleted.
- A stream's id is its topic's name, so its changelog ``changelog__<group>--<topic>--
  <store>`` belongs to that topic.  Read through a new topic ``T-pN``, the app creates new
  changelogs at N partitions, and the old ones are orphans, deleted once the app is found
  healthy.  Altered in place, the changelog keeps the old count and Quix refuses to start
  (TopicConfigurationMismatch) until it is deleted.
- The group has no offset on a new topic or a new partition, and Quix's default
  ``auto_offset_reset`` is ``latest``: the runbook commits their start before the restart,
  or the copied history (or what producers wrote to a new partition) is skipped.
- Quix never checks a repartition topic's count: a store behind a group-by keeps its
  partitioning, so when no store reads the topic directly the alter alone is correct.

Its state is not moved (``runbook --strategy move-state``, :data:`QUIX_MOVE_REFUSAL`):
state/recovery.py's ``RecoveryPartition.recover_from_changelog_message`` skips a
changelog record whose header ``__processed_tp_offsets__``
(``CHANGELOG_PROCESSED_OFFSETS_MESSAGE_HEADER``, state/metadata.py) holds an offset at or
above the committed offset of the same partition number of the source topic
(``_should_apply_changelog``), a guard against state written for records never
committed.  A record moved to another partition is judged against that partition's
offset: on a new partition, committed at 0, every one is skipped, and the state is lost
without a word.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migcheck.frameworks.base import Framework, NamedShape, some
from migcheck.frameworks.topology import Node, SubTopology, Topology
from migcheck.kafka.groups import GroupInfo
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import RunbookFacts, Step, StepRole, Strategy
from migcheck.runbook.actions import (
    READ_COMMITTED_WHY,
    alter_step,
    commit_start,
    delete_changelogs,
    delete_topic,
    internal_topics_back,
    new_topic_step,
    prechecks,
    restart,
    rewind,
    stop,
    wipe_state,
)


def quix_topics(group_id: str, topics: Iterable[str]) -> list[str]:
    """The topics named as Quix Streams names a consumer group's changelogs and repartitions."""
    prefixes = (f"changelog__{group_id}--", f"repartition__{group_id}--")
    return sorted(t for t in topics if t.startswith(prefixes))


@dataclass(frozen=True)
class QuixTopic:
    """A Quix Streams internal topic, as its name reads: ``<kind>__<group>--<stream id>--
    <suffix>``, the stream id the sorted names of the stream's topics joined by ``--``
    (a repartition topic's written ``repartition.<stream id>.<operation>``), the suffix
    a store's name (changelog) or a group-by's (repartition)."""

    kind: str  # "changelog" or "repartition"
    stream: str
    suffix: str


def quix_topic(group_id: str, topic: str) -> QuixTopic | None:
    """``topic`` read by Quix's naming rule for ``group_id`` (TopicManager._internal_name);
    None when it is no internal topic of that group's.  A store's name is the last part
    (Quix's stores are named by the user, without ``--`` in practice)."""
    for kind in ("changelog", "repartition"):
        rest = topic.removeprefix(f"{kind}__{group_id}--")
        if rest != topic:
            stream, sep, suffix = rest.rpartition("--")
            return QuixTopic(kind, stream if sep else "", suffix)
    return None


def quix_nested(group_id: str, topic: str) -> str:
    """The name Quix gives one of the group's internal topics inside another's name
    (TopicManager._format_nested_name): ``repartition__g--orders--op`` becomes
    ``repartition.orders.op``; any other topic keeps its name."""
    if f"__{group_id}--" in topic:
        return topic.replace(f"__{group_id}", "").replace("--", ".")
    return topic


def quix_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    """Quix Streams' TopicManager.changelog_topic, at the app's start: the changelog must
    have the count of its stream's widest topic.  The trailing quote is Quix's own."""
    return (
        f'TopicConfigurationMismatch: Invalid partition count for the changelog topic "{topic}": '
        f'expected {expected}, got {actual}"'
    )


def quix_changelog(group: str, store: str) -> str:
    """Quix names a changelog ``changelog__<group>--<stream id>--<store>``; the model's
    store is ``<stream id>--<store>``."""
    return f"changelog__{group}--{store}"


def _evidence(group: GroupInfo, topics: Collection[str]) -> Sequence[str]:
    internal = quix_topics(group.group_id, topics)
    return (f"topics named by Quix Streams' rule: {some(internal)}",) if internal else ()


def _increase(group: str, topic: str, to: str) -> str:
    return "Quix Streams refuses to start once its changelog's count no longer matches the topic's"


# --- the runbook -----------------------------------------------------------------------

#: Where Quix keeps state when the app names no ``state_dir``.
DEFAULT_STATE_DIR = "state"

_STOP_WHY = (
    "Every instance must be down before the change: a running app would keep writing "
    "state, and the offsets below can be committed only while the group has no members. "
    "Quix's consumer leaves the group when the app stops (SIGTERM or SIGINT)."
)

_ALTER_WHY = (
    "In place is correct only when no store reads the topic directly: Quix never checks a "
    "repartition topic's count, so a store behind a group-by keeps its partitioning and "
    "needs nothing more than the alter."
)
_SPLIT = (
    "Each moved key's old records stay in its old partition, so the reprocess counts them "
    "in another partition's state than its new records."
)


def quix_steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure for ``f.strategy``.

    New topic: copy, wipe the state, commit the new topic's start, restart, then delete
    the old internal topics.  In place with a store fed directly (written only with
    --accept-split-history): alter, wipe, delete the changelogs, send the group back to
    the start, restart; each moved key's history then splits.  In place otherwise: the
    alter, and the new partitions' start committed.
    """
    what = f"the Quix Streams application (consumer group {f.app_id})"
    head = [prechecks(f), stop(f, _STOP_WHY, what)]
    if f.strategy == Strategy.NEW_TOPIC:
        rest = [new_topic_step(f), _wipe(f), _offsets(f, 0), _restart(f)]
        return [*head, *rest, *([_cleanup(f)] if f.internal else [])]
    if f.split_keys is not None:
        rest = [
            alter_step(f, _ALTER_WHY, _SPLIT),
            _wipe(f),
            _recreate_changelogs(f),
            rewind(f, "empty state"),
            _restart(f),
        ]
        return [*head, *rest]
    return [*head, alter_step(f, _ALTER_WHY, _SPLIT), _offsets(f, f.partitions), _restart(f)]


def _wipe(f: RunbookFacts) -> Step:
    where = f"{f.state_dir or DEFAULT_STATE_DIR}/{f.app_id}"
    return wipe_state(
        f,
        f"On every instance, delete {where} (state_dir/consumer_group; state_dir is "
        f"'{DEFAULT_STATE_DIR}' by default, relative to the app's working directory), "
        "or have the app call Application.clear_state() before app.run().",
        "A store left on disk keeps the old partitioning and would be read instead of "
        "being rebuilt from the reprocess.",
        role=StepRole.REPROCESS,
    )


def _recreate_changelogs(f: RunbookFacts) -> Step:
    return delete_changelogs(
        f,
        f"They keep {f.partitions} partitions, and Quix refuses to start on a changelog of "
        f"another count than its topic (TopicConfigurationMismatch): deleted, they come back "
        f"with {f.to}.",
    )


def _offsets(f: RunbookFacts, first: int) -> Step:
    return commit_start(
        f,
        first,
        "Quix starts a partition without a committed offset where its auto_offset_reset "
        "says, latest by default: after the records already there, which it never reads. "
        "The group has no members now, so Kafka's tool commits the start of each partition "
        "that has no offset.",
    )


def _restart(f: RunbookFacts) -> Step:
    copied = f.copied
    start = (
        f"Start the application with app.topic({f.target!r}) in place of {f.topic!r}, the "
        "same consumer_group, and isolation.level=read_committed (librdkafka's default, "
        "which Quix keeps: check that consumer_extra_config does not change it)."
        if copied
        else "Start the application."
    )
    topics = internal_topics_back(f, "its changelogs exist with their counts: ")
    return restart(
        f,
        "Quix creates its changelogs with the count of their topic, rebuilds the state from "
        "the start, the lag drains to 0, and migcheck app finds it healthy."
        + (f" {READ_COMMITTED_WHY}" if copied else ""),
        start,
        topics if f.expected_internal else None,
    )


def _cleanup(f: RunbookFacts) -> Step:
    return Step(
        "Delete the old internal topics",
        f"They belong to {f.topic}'s stream, which no longer runs: the app found healthy "
        f"on {f.target}, nothing reads them.",
        tuple(delete_topic(f, topic) for topic in f.internal),
        destructive=True,
    )


def quix_internal(
    group: str, topic: str, target: str, to: int, internal: Iterable[str], rebuilt: bool
) -> tuple[tuple[str, ...], dict[str, int]]:
    """The group's internal topics the change leaves behind (to delete), and the
    changelogs the restarted app creates, with their count.

    Through a new topic (``target`` differs) every internal topic named after ``topic``'s
    streams is an orphan, and each changelog of ``topic``'s own stream comes back named
    after ``target``.  In place, when the state is ``rebuilt`` (a store fed directly),
    ``topic``'s changelogs are deleted and come back under their names; otherwise nothing
    changes (a group-by's topics keep their count)."""
    if target == topic and not rebuilt:
        return (), {}
    parsed = [(t, q) for t in sorted(internal) if (q := quix_topic(group, t)) is not None]
    own = {t: q.suffix for t, q in parsed if q.kind == "changelog" and q.stream == topic}
    expected = {quix_changelog(group, f"{target}--{store}"): to for store in own.values()}
    if target == topic:
        return tuple(own), expected
    return tuple(t for t, q in parsed if _of(q.stream, topic)), expected


def _of(stream: str, topic: str) -> bool:
    """Whether a Quix stream id names ``topic``: its own, one of a merged stream's parts
    (sorted names joined by ``--``), or a group-by of it (``repartition.<topic>.<op>``)."""
    return (
        stream == topic or topic in stream.split("--") or stream.startswith(f"repartition.{topic}.")
    )


def quix_shape(group: str, sources: Mapping[str, int], internal: Mapping[str, int]) -> NamedShape:
    """A Quix Streams app from its internal topics' names (its TopicManager's rule,
    :func:`quix_topic`): a sub-topology per stream, its sources the stream's topics, its
    stores those its changelogs name, its sinks the group-bys it writes; and one per
    source topic that shows no state, which may keep state without a changelog
    (``use_changelog_topics=False``).  Quix checks no repartition topic's count: each
    keeps the count it was created with, so each is fixed."""
    parsed = {t: quix_topic(group, t) for t in sorted(internal)}
    named = {quix_nested(group, t): t for t, q in parsed.items() if q and q.kind == "repartition"}
    subs: dict[str, SubTopology] = {}
    for topic, q in parsed.items():
        if q is None:
            continue
        sub = _stream_sub(subs, q.stream, _stream_topics(q.stream, sources, named))
        if q.kind == "changelog":
            sub.nodes.append(Node("processor", q.suffix, stores=(f"{q.stream}--{q.suffix}",)))
        else:
            sub.nodes.append(Node("sink", q.suffix, topics=(topic,)))
    for source in sorted(sources):
        if not any(source in s.source_topics for s in subs.values()):
            _stream_sub(subs, source, [source])
    fixed = {t: internal[t] for t in named.values()}
    # use_changelog_topics is app-wide: one changelog shows that every store has one
    logged = any(q and q.kind == "changelog" for q in parsed.values())
    return NamedShape(Topology(list(subs.values())), fixed, stores_known=logged)


def _stream_sub(subs: dict[str, SubTopology], stream: str, topics: Sequence[str]) -> SubTopology:
    if stream not in subs:
        source = Node("source", stream, topics=tuple(topics))
        subs[stream] = SubTopology(len(subs), nodes=[source])
    return subs[stream]


def _stream_topics(stream: str, sources: Mapping[str, int], named: Mapping[str, str]) -> list[str]:
    """The topics of a Quix stream id: a source, a repartition topic (by its nested name),
    or the sorted names of several topics joined by ``--``."""
    if stream in sources or stream in named:
        return [named.get(stream, stream)]
    return [named.get(part, part) for part in stream.split("--")]


#: Why a Quix Streams app's state cannot move (state/recovery.py, quixstreams 3.28.1).
QUIX_MOVE_REFUSAL = (
    "Quix restores a changelog record only while the source offset in its "
    "__processed_tp_offsets__ header is below the committed offset of the same partition "
    "number (state/recovery.py, _should_apply_changelog), so a record moved to another "
    "partition (every record on a new one, committed at 0) would be skipped at restore "
    "and its state silently lost; a move would have to rewrite that header, which "
    "migcheck does not"
)


QUIX_STREAMS = Framework(
    kind=ReaderKind.QUIX_STREAMS,
    name="Quix Streams",
    label="a Quix Streams application",
    takes_topology=False,
    internal_topics=quix_topics,
    internal=lambda group, name: name,  # the model holds a Quix topic's full name
    changelog=quix_changelog,
    is_repartition=lambda name: name.startswith("repartition__"),
    checks_repartition=False,
    changelog_by_key=False,
    invalid=quix_invalid,
    releases=lambda p: "Quix Streams 3.14 to 3.28",
    fails_when="at the app's next start; a running app at its next metadata refresh "
    "(librdkafka's topic.metadata.refresh.interval.ms, 5 min by default), when the new "
    "partitions' assignment fails with PartitionAssignmentError",
    unseen="a Quix app without changelog topics (use_changelog_topics=False) keeps its "
    "state where no topic shows it, so state cannot be ruled out",
    cleanup="Application.clear_state(), the changelog deleted and the group sent back to "
    "the earliest offsets",
    evidence=_evidence,
    increase=_increase,
    runbook=quix_steps,
    online_refusal="a shadow would be the same app under another consumer group (Quix names "
    "its changelogs after the group), but migcheck offers a shadow route only once it has "
    "run one against the real framework, and has not for Quix Streams yet; use --strategy "
    "new-topic",
    leftovers=quix_internal,
    names_model=quix_shape,
    move_refusal=QUIX_MOVE_REFUSAL,
)
