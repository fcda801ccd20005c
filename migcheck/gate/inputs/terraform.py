"""``--terraform-plan``: the topics a Terraform (or OpenTofu) plan changes.

The input is ``terraform show -json PLANFILE`` (``tofu show -json`` writes the same
format), as HashiCorp's "JSON Output Format" page documents it: ``format_version`` (a
major version other than 0 or 1 is refused, as the page asks), and ``resource_changes[]``,
each with ``address``, ``mode``, ``type``, ``change.actions``, ``change.before``,
``change.after``, ``change.after_unknown``, ``change.replace_paths`` and an optional
``action_reason``.  Only managed resources of the types in :data:`TOPIC_RESOURCES` are
read, whatever module holds them (``address`` is kept whole); every other resource, and
``["no-op"]`` and ``["read"]`` changes, are skipped.

What each action proposes:

- ``["update"]``: the topic keeps its records; before and after are its counts (an update
  that leaves the count alone proposes nothing).
- a replace (``["delete", "create"]`` or ``["create", "delete"]``), or ``["delete"]``:
  the provider deletes the topic, and every record with it, whatever the counts.  The
  proposal ``destroys``, with Terraform's own reason (``action_reason`` and the
  ``replace_paths`` that forced it, e.g. ``replace_because_cannot_update: partitions``).
  A pure delete has no after count, unless the same plan creates a topic of that name at
  another address (a resource moved without a ``moved`` block): then the topic is deleted
  and created again, and after is the new count.
- ``["create"]`` of a new topic is skipped: a topic that does not exist yet has no
  records and no readers, so there is nothing to judge.

Both providers carry out a partition *decrease* by deleting and recreating the topic,
which the plan shows as a replace (verified in their source):

- Mongey/terraform-provider-kafka (v0.13.1, kafka/resource_kafka_topic.go):
  ``partitions`` is Required; its CustomizeDiff calls ``diff.ForceNew("partitions")``
  when the new count is below the old one; an increase is an in-place update
  (``AddPartitions``).  ``replication_factor`` is forced new too on a broker older than
  2.4, so a replace is read as such whatever its path.
- confluentinc/terraform-provider-confluent (v2.83.4,
  internal/provider/resource_kafka_topic.go): ``partitions_count`` is Optional with
  ``Default: 6``, and ``customdiff.ForceNewIfChange(partitions_count, new < old)``.  So
  deleting the line from a 12-partition topic plans after = 6 and a replace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from migcheck.gate.inputs.common import (
    count_at,
    list_at,
    load_json,
    mapping_at,
    problem,
    shown,
    text_at,
)
from migcheck.model.gate import Proposal, Source, SourceKind

FORM = "--terraform-plan"


@dataclass(frozen=True)
class TopicResource:
    """Where a provider's topic resource keeps the topic's name and partition count."""

    provider: str  # the provider's address as Terraform's provider_name writes it
    name: str  # the attribute holding the topic's name
    partitions: str  # the attribute holding the partition count
    #: the provider's default when the count is left out: the plan already shows it as
    #: the after count; kept so a report can say why a deleted line is a decrease
    default: int | None


#: The topic resources read, by resource type.
TOPIC_RESOURCES: Mapping[str, TopicResource] = {
    "kafka_topic": TopicResource("registry.terraform.io/mongey/kafka", "name", "partitions", None),
    "confluent_kafka_topic": TopicResource(
        "registry.terraform.io/confluentinc/confluent", "topic_name", "partitions_count", 6
    ),
}

#: The plan format's major versions this reader knows (HashiCorp: "reject any input
#: which reports an unsupported major version").
FORMAT_MAJORS = ("0", "1")

#: Actions that propose nothing for a topic.
_SKIPPED = (["no-op"], ["read"], ["create"])


@dataclass(frozen=True)
class _Change:
    """One topic resource's change, its place in the file kept for messages."""

    place: str  # resource_changes[i]
    address: str
    spec: TopicResource
    actions: list[str]
    change: Mapping[str, Any]
    reason: str  # action_reason, or ""


def read_plan(path: str) -> list[Proposal]:
    """The proposals of one ``terraform show -json`` file, in its order."""
    doc = mapping_at(load_json(path, FORM), path, "(top level)")
    _check_format(doc, path)
    changes = [c for i, rc in enumerate(_resource_changes(doc, path)) if (c := _topic(rc, i, path))]
    created = _created(changes)
    proposals: list[Proposal] = []
    for c in changes:
        if c.actions not in _SKIPPED and (p := _proposal(c, path, created)) is not None:
            proposals.append(p)
    return proposals


def _check_format(doc: Mapping[str, Any], path: str) -> None:
    version = doc.get("format_version")
    if not isinstance(version, str):
        raise problem(
            path, "format_version", f"{shown(version)}: not a plan from terraform show -json"
        )
    if version.split(".")[0] not in FORMAT_MAJORS:
        raise problem(path, "format_version", f"{shown(version)} is not a version this reads (1.x)")
    if "resource_changes" not in doc and "planned_values" not in doc:
        raise problem(
            path,
            "(top level)",
            "no resource_changes: a state, not a plan (terraform show -json PLANFILE)",
        )


def _resource_changes(doc: Mapping[str, Any], path: str) -> list[Any]:
    # Terraform leaves the key out when nothing changes.
    return list_at(doc.get("resource_changes", []), path, "resource_changes")


def _topic(rc: Any, i: int, path: str) -> _Change | None:
    """The change when ``rc`` is a managed topic resource of a known type, else None."""
    place = f"resource_changes[{i}]"
    rc = mapping_at(rc, path, place)
    rtype = rc.get("type")
    spec = TOPIC_RESOURCES.get(rtype) if isinstance(rtype, str) else None
    if spec is None or rc.get("mode") != "managed":
        return None
    address = text_at(rc.get("address"), path, f"{place}.address")
    if isinstance(rc.get("deposed"), str):
        address = f"{address} (deposed {rc['deposed']})"
    change = mapping_at(rc.get("change"), path, f"{place}.change")
    actions = list_at(change.get("actions"), path, f"{place}.change.actions")
    if not actions or not all(isinstance(a, str) for a in actions):
        raise problem(path, f"{place}.change.actions", f"{shown(actions)} is not a list of actions")
    reason = rc.get("action_reason")
    return _Change(place, address, spec, actions, change, reason if isinstance(reason, str) else "")


def _side(c: _Change, side: str, path: str) -> Mapping[str, Any]:
    return mapping_at(c.change.get(side), path, f"{c.place}.change.{side}")


def _name(c: _Change, side: str, path: str) -> str:
    return text_at(
        _side(c, side, path).get(c.spec.name), path, f"{c.place}.change.{side}.{c.spec.name}"
    )


def _count(c: _Change, side: str, path: str) -> int:
    """The count on one side; an after count unknown until apply is refused: no verdict
    can be given for a count nobody knows yet."""
    place = f"{c.place}.change.{side}.{c.spec.partitions}"
    values = _side(c, side, path)
    if side == "after" and values.get(c.spec.partitions) is None:
        unknown = c.change.get("after_unknown")
        if isinstance(unknown, Mapping) and unknown.get(c.spec.partitions) is True:
            raise problem(path, place, "unknown until apply (after_unknown): nothing to judge")
    return count_at(values.get(c.spec.partitions), path, place)


def _created(changes: list[_Change]) -> dict[str, _Change]:
    """The plan's creates, by the topic's name where the plan knows it (a create is read
    only when a delete of the same topic pairs with it)."""
    found: dict[str, _Change] = {}
    for c in changes:
        after = c.change.get("after")
        if c.actions == ["create"] and isinstance(after, Mapping):
            name = after.get(c.spec.name)
            if isinstance(name, str):
                found.setdefault(name, c)
    return found


def _proposal(c: _Change, path: str, created: dict[str, _Change]) -> Proposal | None:
    source = Source(SourceKind.TERRAFORM, path, c.address)
    if c.actions == ["update"]:
        before, after = _count(c, "before", path), _count(c, "after", path)
        if before == after:
            return None
        return Proposal(_name(c, "after", path), before, after, source)
    if "delete" not in c.actions:
        raise problem(path, f"{c.place}.change.actions", f"{shown(c.actions)} is not a plan action")
    topic, before = _name(c, "before", path), _count(c, "before", path)
    reason = _destroy_reason(c, path)
    if "create" in c.actions:
        return Proposal(topic, before, _count(c, "after", path), source, True, reason)
    if (again := created.get(topic)) is not None:
        after = _count(again, "after", path)
        return Proposal(
            topic, before, after, source, True, f"{reason}; created again as {again.address}"
        )
    return Proposal(topic, before, None, source, True, reason)


def _destroy_reason(c: _Change, path: str) -> str:
    """Terraform's own words for why it deletes: ``action_reason`` (else the action) and
    the attributes in ``replace_paths``."""
    reason = c.reason or ("replace" if "create" in c.actions else "delete")
    paths = c.change.get("replace_paths")
    if paths is None:
        return reason
    steps = list_at(paths, path, f"{c.place}.change.replace_paths")
    named = [
        _path_text(p, path, f"{c.place}.change.replace_paths[{i}]") for i, p in enumerate(steps)
    ]
    return f"{reason}: {', '.join(named)}" if named else reason


def _path_text(steps: Any, path: str, place: str) -> str:
    """One replace path as Terraform writes an attribute: ``config.retention_ms``, ``x[0]``."""
    text = ""
    for step in list_at(steps, path, place):
        if isinstance(step, int) and not isinstance(step, bool):
            text += f"[{step}]"
        elif isinstance(step, str):
            text += f".{step}" if text else step
        else:
            raise problem(path, place, f"{shown(step)} is not a path step")
    return text
