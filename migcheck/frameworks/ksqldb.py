"""ksqlDB: a persistent query is a Kafka Streams application with its own id and owner.

Naming: a persistent query's application id is ``_confluent-ksql-<service id>query_<id>``
(QueryApplicationId), a transient one's ``..._transient_...``; its internal topics are
Kafka Streams'.

The runbook: TERMINATE the query, change the source, CREATE it again.  A persistent
query is a Kafka Streams app, but ksqlDB owns it: no reset tool and no state directory
are the operator's.  ksqlDB's documented way to change
what a query reads is to ``TERMINATE`` it (ksqlDB then removes its internal topics and
its local state) and ``CREATE`` it again, which starts a new query, under a new id, with
new internal topics sized from its sources.  With ``auto.offset.reset`` set to
``earliest`` it reads its source again from the start.

The choice between a new topic and in place is Kafka Streams' (a store fed directly by
the topic splits each moved key's history), and so are the steps that move data; no
ksqlDB server runs here, so the statements are manual steps written for the operator.

Its state is not moved (``runbook --strategy move-state``): ksqlDB names a new query's
id and creates its internal topics as the query starts, so no new id's changelogs can be
filled before it, and no ksqlDB server runs here to prove a move on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from migcheck.frameworks.kafka_streams import KAFKA_STREAMS, streams_invalid, streams_releases
from migcheck.kafka.groups import GroupInfo
from migcheck.model.migrate import ShadowStart
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import Manual, RunbookFacts, Step, StepRole, Strategy
from migcheck.runbook.actions import (
    READ_COMMITTED_WHY,
    alter_step,
    new_topic_step,
    prechecks,
    stop,
)
from migcheck.runbook.online import app_migrate_step

_KSQL_QUERY = re.compile(r"^_confluent-ksql-(?P<service>.*?)(?P<what>query|transient)_(?P<id>.+)$")


def ksqldb_query(group_id: str) -> str | None:
    """The query id when ``group_id`` is a ksqlDB query's application id, else None."""
    found = _KSQL_QUERY.match(group_id)
    return None if found is None else found["id"]


def _ksqldb_invalid(protocol: Protocol, topic: str, expected: int, actual: int) -> str:
    return f"the query goes to ERROR: {streams_invalid(protocol, topic, expected, actual)}"


def _evidence(group: GroupInfo, topics: Collection[str]) -> Sequence[str]:
    query = ksqldb_query(group.group_id)
    if query is None:
        return ()
    return (f"its id is ksqlDB's for query {query} (_confluent-ksql-<service id>query_<id>)",)


def _increase(group: str, topic: str, to: str) -> str:
    return "its persistent query goes to ERROR once its internal topics' counts no longer match"


# --- the runbook -----------------------------------------------------------------------

_STOP_WHY = (
    "The query must not run while its source changes. ksqlDB closes the query's Kafka "
    "Streams app on TERMINATE and deletes its internal topics; its members may stay in "
    "the group until their session.timeout.ms runs out."
)

_ALTER_WHY = (
    "In place is correct only when no store reads the topic directly: the new query "
    "rebuilds every store behind a repartition topic by its own key."
)


def ksqldb_steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure for ``f.strategy``: the statement kept, the query terminated,
    the source widened (a copy or the alter), the query created again."""
    query = ksqldb_query(f.app_id) or f.app_id
    if f.strategy is Strategy.ONLINE:
        shadow = f"the shadow query: {query}'s statement over {f.new_topic}, into new sinks"
        return [prechecks(f), _statement(query), app_migrate_step(f, shadow)]
    stopped = stop(f, _STOP_WHY, f"the query {query}: in the ksqlDB CLI, TERMINATE {query};")
    change = _copy(f) if f.strategy == Strategy.NEW_TOPIC else alter_step(f, _ALTER_WHY)
    return [prechecks(f), _statement(query), stopped, change, _recreate(f, query)]


def _statement(query: str) -> Step:
    return Step(
        "Keep the query's statement",
        "TERMINATE forgets the query: its statement is what creates it again.",
        (
            Manual(
                f"In the ksqlDB CLI run EXPLAIN {query}; and keep the statement it prints "
                "(CREATE ... AS SELECT ...) and the sink it writes to."
            ),
        ),
    )


def _copy(f: RunbookFacts) -> Step:
    copy = new_topic_step(f)
    declare = Manual(
        f"In the ksqlDB CLI declare a stream over {f.new_topic} with the columns and formats "
        f"of the stream over {f.topic} (DESCRIBE <stream> EXTENDED; shows them): CREATE "
        f"STREAM <name> (<columns>) WITH (KAFKA_TOPIC='{f.new_topic}', KEY_FORMAT=..., "
        "VALUE_FORMAT=...);"
    )
    return Step(copy.title, copy.why, (*copy.actions, declare))


def _recreate(f: RunbookFacts, query: str) -> Step:
    source = f"the stream over {f.new_topic} in place of the one over {f.topic}"
    copied = f.copied
    reads = source if copied else f"{f.topic}, as before"
    committed = "SET 'ksql.streams.consumer.isolation.level'='read_committed'; " if copied else ""
    return Step(
        "Create the query again",
        "The new query gets a new id and new internal topics sized from its sources "
        f"({f.to} partitions), and reads its source from the start into empty state. "
        "ksqlDB gives a new sink the partition count of its source and refuses an existing "
        "sink topic of another count: drop the old sink first (DROP TABLE|STREAM <sink>; "
        "keeps its topic), and name the sink's count (WITH (PARTITIONS=n)) to keep it."
        + (f" {READ_COMMITTED_WHY}" if copied else ""),
        (
            Manual(
                f"In the ksqlDB CLI: SET 'auto.offset.reset'='earliest'; {committed}then the "
                f"kept statement, reading {reads}."
            ),
            Manual(
                f"SHOW QUERIES; shows the new query RUNNING; migcheck app --application-id "
                f"<its application id> --topic {f.target} --to {f.to} finds it healthy "
                f"(the old query {query} is gone)."
            ),
        ),
        role=StepRole.REPROCESS,
    )


def ksqldb_shadow(s: ShadowStart) -> str:
    """The shadow is a new persistent query: the kept statement over a stream declared on
    the new topic, into a new sink on the shadow's output topic.  ksqlDB names the query
    (and so its application id) itself, so ``migrate`` finds it as the one query reading
    the new topic, unless it is named."""
    query = ksqldb_query(s.app_id) or s.app_id
    streams = ", and ".join(
        f"a stream over {new} with the columns and formats of the one over {old}"
        for old, new in s.inputs
    )
    return (
        f"start the shadow of query {query} in the ksqlDB CLI: declare {streams}; SET "
        "'auto.offset.reset'='earliest'; SET "
        "'ksql.streams.consumer.isolation.level'='read_committed'; SET "
        "'ksql.streams.commit.interval.ms'='1000'; then the kept statement (EXPLAIN "
        f"{query};) reading that stream, each sink a new one WITH (KAFKA_TOPIC=...) on its "
        f"shadow ({s.output_pairs}); the old query keeps serving; answer y once SHOW QUERIES; "
        "shows it RUNNING"
    )


#: A persistent query is a Kafka Streams application: the same names and checks.
KSQLDB = replace(
    KAFKA_STREAMS,
    kind=ReaderKind.KSQLDB,
    name="ksqlDB",
    label="a ksqlDB query",
    invalid=_ksqldb_invalid,
    releases=lambda p: f"{streams_releases(p)}, the client inside ksqlDB (not run here)",
    fails_when="at the query's next rebalance; ksqlDB's query monitor then keeps "
    "restarting it, and it fails the same way each time",
    cleanup="TERMINATE and the query created again from the earliest offsets",
    streams_fails_when=None,
    evidence=_evidence,
    increase=_increase,
    runbook=ksqldb_steps,
    shadow=ksqldb_shadow,
    moved_id=None,
    move_refusal="ksqlDB names a new query's id and creates its internal topics itself as "
    "the query starts, so there are no changelogs of a new id to move the state into "
    "first, and no ksqlDB server runs here to prove a move on",
)
