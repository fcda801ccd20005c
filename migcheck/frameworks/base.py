"""What migcheck knows of a stream processor, as one :class:`Framework` per module.

Kafka Streams, ksqlDB (each persistent query runs as a Kafka Streams application), Quix
Streams and Faust keep each key's state in a local store of the task that owns its
partition, logged to a changelog topic partitioned alike.  What is alike, that state
stays with the partition its key hashed to, is judged once by
:mod:`migcheck.apps.rules`; what differs is each framework's module: its naming and
the evidence that tells its groups apart, the error it raises in which releases' words
and when, the texts ``readers`` and ``app`` say of it, and its runbook procedure.

Pure.  :mod:`migcheck.frameworks.registry` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migcheck.frameworks.topology import Topology
from migcheck.kafka.groups import GroupInfo
from migcheck.model.migrate import ShadowStart
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import RunbookFacts, Step

#: A framework's evidence: the facts of a group and the cluster's topic names that show
#: its kind, or ().
Evidence = Callable[[GroupInfo, Collection[str]], Sequence[str]]
#: (app id, topic, target, new count, internal topics, rebuilt) to the internal topics a
#: runbook deletes and those the restarted app creates with their counts.
Leftovers = Callable[
    [str, str, str, int, Iterable[str], bool], tuple[tuple[str, ...], dict[str, int]]
]


@dataclass(frozen=True)
class NamedShape:
    """An app's shape as its topics' names alone show it, for a framework whose names are
    the whole model: its sub-topologies, the repartition topics whose count it fixed, and
    whether its stores are all known (each logs to a changelog that names it)."""

    topology: Topology
    fixed: Mapping[str, int]
    stores_known: bool


#: (application id, the source topics' counts, the internal topics' counts) to the shape.
NamesModel = Callable[[str, Mapping[str, int], Mapping[str, int]], NamedShape]


@dataclass(frozen=True)
class Framework:
    """What a stream processor does with its internal topics, as its source shows it.

    Names in the app model are an internal topic's name without the framework's prefix
    (Kafka Streams: without ``<application.id>-``); :attr:`internal` gives the topic.
    """

    kind: ReaderKind
    name: str
    #: one of its apps as a sentence names it ("... is a Kafka Streams application")
    label: str
    #: whether a Kafka Streams Topology#describe() (--topology) describes its apps; if
    #: not, its internal topics' names are the whole model
    takes_topology: bool
    #: (application id, the cluster's topics) to the app's internal topics among them
    internal_topics: Callable[[str, Iterable[str]], list[str]]
    #: (application id, a name in the model) to the topic on the cluster
    internal: Callable[[str, str], str]
    #: (application id, store) to the store's changelog topic
    changelog: Callable[[str, str], str]
    #: whether a name in the model is a repartition topic's
    is_repartition: Callable[[str], bool]
    #: whether it checks a repartition topic's count (else it keeps the count it was
    #: created with: the app sized it, as Kafka Streams' ``Repartitioned`` does)
    checks_repartition: bool
    #: whether a changelog's records are placed by its state key's hash, as the source's
    #: are, so that its keys measure what moves (Quix places each on its source record's
    #: partition, its key prefixed: the source topic measures it instead)
    changelog_by_key: bool
    #: the error for a changelog (or checked repartition topic) of the wrong count:
    #: ``invalid(protocol, topic, expected, actual)``, and with :attr:`names_source`
    #: the keywords ``source`` and ``app_id`` too
    invalid: Callable[..., str]
    #: the releases whose words :attr:`invalid` quotes
    releases: Callable[[Protocol], str]
    #: when the app meets that error, in words
    fails_when: str
    #: why state may be unseen where no changelog shows it, and what settles it
    unseen: str
    #: the facts of a group (and the cluster's topic names) that show it is this
    #: framework's, () when none do: tried in :data:`~migcheck.frameworks.registry.
    #: EVIDENCE_ORDER`
    evidence: Evidence
    #: what a partition increase does to one of its apps, for ``readers``: (group id,
    #: topic, new count or "N")
    increase: Callable[[str, str, str], str]
    #: the clean-up its error leads an operator to: it lets the app start again, and
    #: splits the history of a store fed directly by the altered topic
    cleanup: str = "the reset tool, and an empty state directory"
    #: whether :attr:`invalid` names the source topic whose record meets the check, and
    #: the table (Faust's error does)
    names_source: bool = False
    #: when an app on the streams protocol (KIP-1071) meets the error, if not :attr:`fails_when`
    streams_fails_when: str | None = None
    #: its procedure for ``migcheck runbook`` (None: the command refuses it in one line)
    runbook: Callable[[RunbookFacts], list[Step]] | None = None
    #: (app id, internal topic, each source's new name) to that internal topic's name
    #: once the app reads its sources under their new names (a new-topic runbook's
    #: restart), where a name derives from a source's; None: names do not change
    renamed: Callable[[str, str, Mapping[str, str]], str] | None = None
    #: whether :attr:`runbook` widens a set of topics in one change (``RunbookFacts.also``,
    #: issue 71); otherwise ``runbook`` refuses a repeated ``--topic`` in one line
    runbook_sets: bool = False
    #: the online migration's MANUAL line that starts one of its apps' shadow on the new
    #: topic; None: ``migrate`` and ``--strategy online`` refuse it, saying
    #: :attr:`online_refusal`
    shadow: Callable[[ShadowStart], str] | None = None
    #: why there is no shadow route for it (ends the refusal's line)
    online_refusal: str = ""
    #: (app id, new count) to the id its shadow runs under, where the operator names it;
    #: None: the framework names it itself, and ``migrate`` finds it once started
    shadow_id: Callable[[str, int], str] | None = None
    #: (app id, new count) to the id its app restarts under once its state has moved
    #: (``runbook --strategy move-state``); None: the move is refused, saying
    #: :attr:`move_refusal`
    moved_id: Callable[[str, int], str] | None = None
    #: why its apps' state cannot move (the refusal's line, after the app's label)
    move_refusal: str = "moving its state is not proven on the real framework yet"
    #: (app id, topic, target, new count, its internal topics, whether its state is
    #: rebuilt) to the internal topics the runbook deletes and those the restarted app
    #: creates, with their counts; None: those the reset deletes, sized by the model
    leftovers: Leftovers | None = None
    #: ``app``'s CRASH in its words where its check is lazy (``{name}``: its name)
    crash_words: str | None = None
    #: without :attr:`takes_topology`, its topics' names to the app's shape; None: the
    #: shape is inferred as a Kafka Streams app's is, from names, counts and the group
    names_model: NamesModel | None = None
    #: whether every store logs to a changelog (Faust's tables always do), so that an
    #: inferred model knows every store
    logs_every_store: bool = False

    def failing_when(self, protocol: Protocol) -> str:
        """When the app meets its error under ``protocol``, in words."""
        if protocol == Protocol.STREAMS and self.streams_fails_when:
            return self.streams_fails_when
        return self.fails_when


def some(topics: Sequence[str], shown: int = 2) -> str:
    """A few topic names for the evidence, and how many more there are."""
    more = len(topics) - shown
    return ", ".join(topics[:shown]) + (f" and {more} more" if more > 0 else "")
