"""Which procedure a runbook follows: one entry per framework that has one.

Kafka Streams (:mod:`~migcheck.runbook.kafka_streams`: the reset tool), ksqlDB
(:mod:`~migcheck.runbook.ksqldb`: TERMINATE and CREATE again), Quix Streams
(:mod:`~migcheck.runbook.quix`: clear the state, delete the changelogs, commit the
start) and Faust (:mod:`~migcheck.runbook.faust`: wipe the datadir, delete the
changelogs, commit the start, restart with the new count).  A framework without an
entry gets no runbook: the command refuses it in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts, Step, check_name
from migcheck.runbook import kafka_streams
from migcheck.runbook.faust import faust_steps
from migcheck.runbook.ksqldb import ksqldb_steps
from migcheck.runbook.quix import quix_steps

#: Each framework's procedure, by the reader kind that names it.
RUNBOOKS: Mapping[ReaderKind, Callable[[RunbookFacts], list[Step]]] = {
    ReaderKind.KAFKA_STREAMS: kafka_streams.steps,
    ReaderKind.KSQLDB: ksqldb_steps,
    ReaderKind.QUIX_STREAMS: quix_steps,
    ReaderKind.FAUST: faust_steps,
}


def steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure of ``f.kind``'s framework; an id the steps cannot pass to
    Kafka's tools and into a state directory is refused (UsageError)."""
    check_name("application id", f.app_id, path=True)
    return RUNBOOKS[f.kind](f)
