"""What proposes a partition change, read into :class:`~migcheck.model.gate.Proposal` s.

One module per form, each pure but for reading the files it is given:

- :mod:`.terraform`: ``--terraform-plan``, ``terraform show -json`` (or ``tofu``) output;
- :mod:`.manifests`: ``--manifests``, Strimzi ``KafkaTopic`` and Conduktor ``Topic`` YAML;
- :mod:`.gitops`: ``--kafka-gitops-plan``, a kafka-gitops plan;
- :mod:`.changes`: ``--change TOPIC=N``.

A malformed input is a :class:`~migcheck.errors.UsageError` of one line naming the file
and the place in it (:mod:`.common`); the CLI makes it exit 2.  The tools' own words for
a refused decrease are here for the judge to quote: :data:`STRIMZI_DECREASE` (with
:data:`STRIMZI_DECREASE_REASON`), :data:`CONDUKTOR_DECREASE`, :data:`GITOPS_DECREASE`
(already in a proposal's ``refused``) and Kafka's own :data:`KAFKA_DECREASE`.
"""

from __future__ import annotations

from collections.abc import Sequence

from migcheck.gate.inputs.changes import read_change
from migcheck.gate.inputs.gitops import GITOPS_DECREASE, read_gitops_plan
from migcheck.gate.inputs.manifests import (
    CONDUKTOR_DECREASE,
    KAFKA_DECREASE,
    STRIMZI_DECREASE,
    STRIMZI_DECREASE_REASON,
    read_manifests,
)
from migcheck.gate.inputs.terraform import TOPIC_RESOURCES, read_plan
from migcheck.model.gate import Proposal

__all__ = [
    "CONDUKTOR_DECREASE",
    "GITOPS_DECREASE",
    "KAFKA_DECREASE",
    "STRIMZI_DECREASE",
    "STRIMZI_DECREASE_REASON",
    "TOPIC_RESOURCES",
    "read_proposals",
]


def read_proposals(
    terraform_plans: Sequence[str] = (),
    manifests: Sequence[str] = (),
    gitops_plans: Sequence[str] = (),
    changes: Sequence[str] = (),
) -> list[Proposal]:
    """Every proposal of the inputs, in the order given: the Terraform plans, then the
    manifests, the kafka-gitops plans and the ``--change`` values.

    Raises :class:`~migcheck.errors.UsageError` (one line, naming the file and the place
    in it) for the first malformed input; nothing is judged from half the inputs.
    """
    proposals: list[Proposal] = []
    for path in terraform_plans:
        proposals.extend(read_plan(path))
    for path in manifests:
        proposals.extend(read_manifests(path))
    for path in gitops_plans:
        proposals.extend(read_gitops_plan(path))
    proposals.extend(read_change(text) for text in changes)
    return proposals
