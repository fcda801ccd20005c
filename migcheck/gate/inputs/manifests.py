"""``--manifests``: the partition counts that Strimzi and Conduktor topic resources ask for.

A path is a YAML file or a directory, searched recursively for ``*.yaml`` and ``*.yml``
(in sorted order, so a report is the same on every machine).  A file may hold several
documents (``---``), and a ``kind: List`` document holds resources in ``items``.  The
resources read, by :data:`MANIFEST_KINDS`:

- Strimzi ``KafkaTopic`` (group ``kafka.strimzi.io``: ``v1beta2`` and ``v1``, and the
  older versions with the same spec): the topic is ``spec.topicName``, else
  ``metadata.name``; the count is ``spec.partitions``.  A KafkaTopic without
  ``spec.partitions`` proposes nothing: the operator creates such a topic with the
  broker's ``num.partitions`` and never changes its count after (BatchingTopicController
  treats a missing count, ``KafkaHandler.DEFAULT_PARTITIONS = -1``, as "no partition
  change").
- Conduktor ``kind: Topic`` (``apiVersion: kafka/v2``, and the earlier ``v2`` and
  ``v1``): the topic is ``metadata.name`` on the cluster ``metadata.cluster``; the count is
  ``spec.partitions``, which Conduktor requires.

Every other document is skipped (a ``Topic`` of another apiVersion, such as Redpanda's
``cluster.redpanda.com`` one, is not Conduktor's).  A manifest states the count it wants,
not the count the topic has, so ``before`` is None: the gate compares the count with the
live cluster, the truth the operator acts on.

What each operator does with a decrease, in its own words, for the gate to quote
(:data:`STRIMZI_DECREASE`, :data:`CONDUKTOR_DECREASE`):

- Strimzi's Topic Operator (strimzi-kafka-operator, the same in 0.49.0, 0.50.0, 1.0.0 and
  1.2.0: topic-operator/.../BatchingTopicController.java ``partitionChanges``): a count below the
  live one is ``TopicOperatorException.NotSupported("Decreasing partitions not
  supported")``, which the KafkaTopic's status shows as the condition ``Ready=False``,
  ``reason: NotSupported``, with that message.  The rest of the edit (configs, replicas)
  is still applied in the same reconciliation.
- Conduktor (docs.conduktor.io, "Conduktor's Kafka resources", Topic checks):
  "``spec.replicationFactor`` and ``spec.partitions`` are immutable and cannot be modified
  once the topic is created"; Conduktor's apply refuses the change.  Conduktor is closed
  source, so this is its documented rule rather than a message read from its code.  Its
  Terraform provider says the same of ``conduktor_console_topic_v2.partitions``: "Any
  change will require the Topic to be destroyed and re-created".  Were a decrease to reach
  Kafka itself, the broker's own refusal is :data:`KAFKA_DECREASE`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from migcheck.gate.inputs.common import count_at, list_at, mapping_at, problem, read_text, text_at
from migcheck.model.gate import Proposal, Source, SourceKind

FORM = "--manifests"

#: The message of Strimzi's ``Ready=False`` condition when a KafkaTopic asks for fewer
#: partitions than the topic has (its ``reason`` is :data:`STRIMZI_DECREASE_REASON`).
STRIMZI_DECREASE = "Decreasing partitions not supported"
STRIMZI_DECREASE_REASON = "NotSupported"
#: Conduktor's documented rule for a Topic's count, which refuses any change to it.
CONDUKTOR_DECREASE = (
    "spec.replicationFactor and spec.partitions are immutable and cannot be modified "
    "once the topic is created"
)
#: Kafka's own refusal (``InvalidPartitionsException``, KRaft's controller), with the
#: topic and both counts to fill in: what a decrease sent to the broker gets.
KAFKA_DECREASE = (
    "The topic {topic} currently has {before} partition(s); {after} would not be an increase."
)

STRIMZI_GROUP = "kafka.strimzi.io"
CONDUKTOR_API_VERSIONS = ("kafka/v2", "v2", "v1")

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class _Doc:
    """One resource and where it is: its file, and its place for messages and addresses."""

    file: str
    body: Mapping[str, Any]
    place: str  # "document 2" or "document 2, items[0]"; "" in a one-document file


def read_manifests(path: str) -> list[Proposal]:
    """The proposals of one ``--manifests`` path (a file, or a directory searched
    recursively), in file order, then document order."""
    return [p for file in _files(path) for p in _read_file(file)]


def _files(path: str) -> list[str]:
    p = Path(path)
    if p.is_dir():
        return [
            str(f)
            for f in sorted(p.rglob("*"))
            if f.suffix.lower() in YAML_SUFFIXES and f.is_file()
        ]
    if not p.exists():
        raise problem(path, "", f"no such file or directory ({FORM})")
    return [path]


def _read_file(file: str) -> list[Proposal]:
    docs = _load_all(file)
    many = len(docs) > 1
    proposals: list[Proposal] = []
    for i, body in enumerate(docs, start=1):
        for doc in _resources(file, body, f"document {i}" if many else ""):
            if (p := _proposal(doc)) is not None:
                proposals.append(p)
    return proposals


def _load_all(file: str) -> list[Any]:
    text = read_text(file, FORM)
    try:
        return list(yaml.safe_load_all(text))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise problem(file, place, f"not YAML ({e.problem or e.context})") from None
    except yaml.YAMLError as e:
        raise problem(file, "", f"not YAML ({str(e).splitlines()[0]})") from None
    except RecursionError:
        raise problem(file, "", "not YAML this tool can read (nested too deep)") from None


def _resources(file: str, body: Any, place: str) -> Iterator[_Doc]:
    """The resources of one document: itself, or the items of a ``kind: List``."""
    if not isinstance(body, Mapping):
        return  # an empty document, or YAML that is no Kubernetes-style resource
    if body.get("kind") == "List" and "items" in body:
        items = list_at(body["items"], file, _at(place, "items"))
        for j, item in enumerate(items):
            yield from _resources(file, item, _at(place, f"items[{j}]"))
        return
    yield _Doc(file, body, place)


def _at(place: str, field: str) -> str:
    """A field's place: ``document 2, spec.partitions`` (or just the field)."""
    return f"{place}, {field}" if place else field


@dataclass(frozen=True)
class ManifestKind:
    """A topic resource a manifest may hold: how to tell it, and how to read it."""

    source: SourceKind
    kind: str
    matches: Callable[[str], bool]  # on the document's apiVersion
    read: Callable[[_Doc], Proposal | None]


def _proposal(doc: _Doc) -> Proposal | None:
    api, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return None
    for mk in MANIFEST_KINDS:
        if mk.kind == kind and mk.matches(api):
            return mk.read(doc)
    return None


def _field(doc: _Doc, section: str, key: str) -> Any:
    """``section.key`` of the document (None when absent); a section that is not a
    mapping is a one-line error."""
    value = doc.body.get(section)
    if value is None:
        return None
    return mapping_at(value, doc.file, _at(doc.place, section)).get(key)


def _address(kind: str, name: str, doc: _Doc, extra: str = "") -> str:
    where = ", ".join(x for x in (extra, doc.place) if x)
    return f"{kind}/{name} ({where})" if where else f"{kind}/{name}"


def _strimzi(doc: _Doc) -> Proposal | None:
    name = text_at(_field(doc, "metadata", "name"), doc.file, _at(doc.place, "metadata.name"))
    partitions = _field(doc, "spec", "partitions")
    if partitions is None:
        return None  # the broker's default at creation, never changed after
    count = count_at(partitions, doc.file, _at(doc.place, "spec.partitions"))
    topic_name = _field(doc, "spec", "topicName")
    topic = (
        name
        if topic_name is None
        else text_at(topic_name, doc.file, _at(doc.place, "spec.topicName"))
    )
    source = Source(SourceKind.STRIMZI, doc.file, _address("KafkaTopic", name, doc))
    return Proposal(topic, None, count, source)


def _conduktor(doc: _Doc) -> Proposal | None:
    name = text_at(_field(doc, "metadata", "name"), doc.file, _at(doc.place, "metadata.name"))
    cluster = _field(doc, "metadata", "cluster")
    count = count_at(_field(doc, "spec", "partitions"), doc.file, _at(doc.place, "spec.partitions"))
    extra = f"cluster {cluster}" if isinstance(cluster, str) and cluster else ""
    source = Source(SourceKind.CONDUKTOR, doc.file, _address("Topic", name, doc, extra))
    return Proposal(name, None, count, source)


#: The topic resources read from manifests.
MANIFEST_KINDS: tuple[ManifestKind, ...] = (
    ManifestKind(
        SourceKind.STRIMZI,
        "KafkaTopic",
        lambda api: api.split("/")[0] == STRIMZI_GROUP,
        _strimzi,
    ),
    ManifestKind(
        SourceKind.CONDUKTOR, "Topic", lambda api: api in CONDUKTOR_API_VERSIONS, _conduktor
    ),
)
