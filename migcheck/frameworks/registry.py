"""The one table of stream processors: every framework migcheck judges, by its reader kind.

A new framework is a module beside this one (its naming, evidence, error, texts and
runbook in one :class:`~migcheck.frameworks.base.Framework`) and an entry here: in
:data:`FRAMEWORKS`, and in :data:`EVIDENCE_ORDER` where its evidence is to be tried.
"""

from __future__ import annotations

from collections.abc import Mapping

from migcheck.frameworks.base import Framework
from migcheck.frameworks.faust import FAUST
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.ksqldb import KSQLDB
from migcheck.frameworks.quix import QUIX_STREAMS
from migcheck.model.readers import OTHER_LABELS, ReaderKind
from migcheck.model.runbook import RunbookFacts, Step, check_name
from migcheck.runbook.actions import guard_history

#: Every framework, by the reader kind that names it.
FRAMEWORKS: Mapping[ReaderKind, Framework] = {
    f.kind: f for f in (KAFKA_STREAMS, KSQLDB, QUIX_STREAMS, FAUST)
}

#: The kinds that keep state per partition: an app of one of them is judged by what its
#: state does (``migcheck app``), not by the plain readers' verdicts.
STATEFUL_KINDS: frozenset[ReaderKind] = frozenset(FRAMEWORKS)

#: The order their evidence is tried in: the first that finds some names the kind.  A
#: ksqlDB query is a Kafka Streams app too, but its id says more; a Faust table's
#: changelog is named like a Kafka Streams store's, so Faust's own marks come first.
EVIDENCE_ORDER: tuple[Framework, ...] = (KSQLDB, FAUST, KAFKA_STREAMS, QUIX_STREAMS)

#: ``--framework``'s default: told apart by the evidence.
AUTO_FRAMEWORK = "auto"

#: The frameworks ``migcheck runbook`` writes a procedure for.
WITH_RUNBOOKS: tuple[ReaderKind, ...] = tuple(k for k, f in FRAMEWORKS.items() if f.runbook)


def label(kind: ReaderKind) -> str:
    """A reader of ``kind`` as a sentence names it: its framework's label, else the
    model's for the kinds that are not stream processors."""
    framework = FRAMEWORKS.get(kind)
    return framework.label if framework else OTHER_LABELS[kind]


def framework_said(value: str) -> Framework | None:
    """The framework ``--framework value`` names; None for ``auto`` (the evidence decides)."""
    return None if value == AUTO_FRAMEWORK else FRAMEWORKS[ReaderKind(value)]


def runbook_steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure of ``f.kind``'s framework; an id the steps cannot pass to
    Kafka's tools and into a state directory, or a plain group's (``--group``) they cannot
    pass to Kafka's tools, is refused (UsageError)."""
    check_name("application id", f.app_id, path=True)
    for group in dict.fromkeys(g for g, _ in f.group_reads):
        check_name("group id", group)
    procedure = FRAMEWORKS[f.kind].runbook
    if procedure is None:
        raise ValueError(f"{f.kind} has no runbook")  # the command refused it before
    return guard_history(f, procedure(f))
