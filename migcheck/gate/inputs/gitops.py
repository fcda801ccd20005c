"""``--kafka-gitops-plan``: the topics a kafka-gitops plan changes.

The input is the JSON that ``kafka-gitops plan -o plan.json`` writes: ``topicPlans[]``,
each with ``name``, ``action`` (``ADD``, ``UPDATE``, ``REMOVE``, ``NO_CHANGE``) and
``topicDetailsPlan`` with ``partitions``, ``previousPartitions`` and
``partitionsAction`` (devshawn/kafka-gitops, domain/plan/TopicPlan.java and
TopicDetailsPlan.java; the partition fields came with "Synchronize topic replicas +
partitions" (#52), on master after release 0.2.15, whose plans never change a count).

What each topic plan proposes:

- ``partitionsAction: UPDATE``: before is ``previousPartitions`` (the count kafka-gitops
  read from the cluster when it planned), after is ``partitions``.
- ``action: REMOVE``: kafka-gitops deletes a topic that is not in the desired state
  (unless run with ``--no-delete``): the proposal ``destroys``, with no after count.
- ``action: ADD`` creates a new topic (no records, no readers): skipped, as are topics
  whose partitions do not change (``NO_CHANGE``, or no ``topicDetailsPlan``).

kafka-gitops refuses a decrease when it plans (manager/PlanManager.java ``planTopics``):
it throws ``ValidationException`` with :data:`GITOPS_DECREASE` and writes no plan, and
the CLI prints it as ``[INVALID] ...``.  A plan that holds a decrease anyway (written by
hand, or by another version) gets that refusal in ``refused``, in kafka-gitops' words.
"""

from __future__ import annotations

from collections.abc import Mapping
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

FORM = "--kafka-gitops-plan"

#: kafka-gitops' refusal of a decrease at plan time, with the topic and counts to fill in.
GITOPS_DECREASE = (
    "Removing the partition number is not supported by Apache Kafka "
    "(topic: {topic} ({before} -> {after}))"
)

#: kafka-gitops' PlanAction values.
ACTIONS = ("ADD", "UPDATE", "REMOVE", "NO_CHANGE")


def read_gitops_plan(path: str) -> list[Proposal]:
    """The proposals of one kafka-gitops plan file, in its order."""
    doc = mapping_at(load_json(path, FORM), path, "(top level)")
    if "topicPlans" not in doc:
        raise problem(path, "topicPlans", "missing: not a kafka-gitops plan")
    plans = list_at(doc["topicPlans"], path, "topicPlans")
    return [p for i, tp in enumerate(plans) if (p := _proposal(tp, f"topicPlans[{i}]", path))]


def _action(value: Any, path: str, place: str) -> str:
    if value not in ACTIONS:
        raise problem(path, place, f"{shown(value)} is not one of {', '.join(ACTIONS)}")
    return str(value)


def _proposal(tp: Any, place: str, path: str) -> Proposal | None:
    tp = mapping_at(tp, path, place)
    topic = text_at(tp.get("name"), path, f"{place}.name")
    action = _action(tp.get("action"), path, f"{place}.action")
    source = Source(SourceKind.KAFKA_GITOPS, path, place)
    if action == "REMOVE":
        return Proposal(topic, None, None, source, True, "REMOVE: not in the desired state")
    details = tp.get("topicDetailsPlan")
    if action == "ADD" or details is None:
        return None
    return _partitions(
        topic, mapping_at(details, path, f"{place}.topicDetailsPlan"), place, path, source
    )


def _partitions(
    topic: str, details: Mapping[str, Any], place: str, path: str, source: Source
) -> Proposal | None:
    at = f"{place}.topicDetailsPlan"
    how = _action(details.get("partitionsAction"), path, f"{at}.partitionsAction")
    if how == "NO_CHANGE":
        return None
    if how != "UPDATE":
        raise problem(path, f"{at}.partitionsAction", f"{how} is not a change of an existing topic")
    before = count_at(details.get("previousPartitions"), path, f"{at}.previousPartitions")
    after = count_at(details.get("partitions"), path, f"{at}.partitions")
    refused = (
        GITOPS_DECREASE.format(topic=topic, before=before, after=after) if after < before else None
    )
    return Proposal(topic, before, after, source, refused=refused)
