"""How each framework names what it leaves on the cluster: the evidence of a reader's kind.

Pure.  A group's id and the topics named after it are often all a stopped app leaves
behind (the coordinator names no assignor while a group has no members), so each
framework's own naming rule is written here once, from its source:

- Kafka Streams: ``<application.id>-<name>-changelog`` / ``-repartition`` (and a
  foreign-key join's subscription topics), :func:`migcheck.model.topics.is_internal`;
  and the metadata of its commits, the partition time (TopicPartitionMetadata:
  base64 of a magic byte 1 or 2 and an 8-byte time), which an app without internal
  topics leaves behind too;
- ksqlDB: a persistent query's application id is ``_confluent-ksql-<service id>query_<id>``
  (QueryApplicationId), a transient one's ``..._transient_...``;
- Quix Streams: ``changelog__<group>--<topic>--<store>`` and
  ``repartition__<group>--<topic>--<operation>`` (its TopicManager);
- Faust (faust-streaming): its assignor's leader topic ``<app id>-__assignor-__leader``,
  and the assignor ``faust`` its members agree on; a table's changelog
  ``<app id>-<table>-changelog`` (Collection._changelog_topic_name), a ``group_by``'s
  topic ``<app id>-<topic>-<name>-repartition`` (Stream.group_by), named as Kafka
  Streams names its own, so the marks above tell them apart;
- Kafka Connect: a sink connector's group ``connect-<connector>``, its tasks' consumers'
  client ids ``connector-consumer-<connector>-<task>``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from dataclasses import dataclass

from migcheck.model.topics import is_internal

#: The assignment protocol Kafka Streams' members agree on in a classic group
#: (StreamsPartitionAssignor's name).
STREAMS_ASSIGNOR = "stream"
#: Faust's PartitionAssignor's name, as its members agree on it.
FAUST_ASSIGNOR = "faust"

_KSQL_QUERY = re.compile(r"^_confluent-ksql-(?P<service>.*?)(?P<what>query|transient)_(?P<id>.+)$")
_CONNECT_GROUP = "connect-"
_CONNECT_CLIENT = "connector-consumer-"


def ksqldb_query(group_id: str) -> str | None:
    """The query id when ``group_id`` is a ksqlDB query's application id, else None."""
    found = _KSQL_QUERY.match(group_id)
    return None if found is None else found["id"]


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


def connect_connector(group_id: str) -> str | None:
    """The sink connector's name when ``group_id`` follows Connect's naming, else None."""
    name = group_id.removeprefix(_CONNECT_GROUP)
    return name if name != group_id and name else None


def connect_client(client_id: str) -> bool:
    """Whether a member's client id is that of a Connect sink task's consumer."""
    return client_id.startswith(_CONNECT_CLIENT)
