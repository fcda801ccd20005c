"""The runbook for a ksqlDB persistent query: TERMINATE it, change the source, CREATE it again.

Pure: :class:`RunbookFacts` in, steps out.  A persistent query is a Kafka Streams app
whose id is ``_confluent-ksql-<service id>query_<query id>``, but ksqlDB owns it: no
reset tool and no state directory are the operator's.  ksqlDB's documented way to change
what a query reads is to ``TERMINATE`` it (ksqlDB then removes its internal topics and
its local state) and ``CREATE`` it again, which starts a new query, under a new id, with
new internal topics sized from its sources.  With ``auto.offset.reset`` set to
``earliest`` it reads its source again from the start.

The choice between a new topic and in place is Kafka Streams' (a store fed directly by
the topic splits each moved key's history), and so are the steps that move data; no
ksqlDB server runs here, so the statements are manual steps written for the operator.
"""

from __future__ import annotations

from migcheck.model.runbook import (
    Manual,
    RunbookFacts,
    Step,
    Strategy,
)
from migcheck.readers.naming import ksqldb_query
from migcheck.runbook.actions import alter_step, new_topic_step, prechecks, stop

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
    reads = source if f.target != f.topic else f"{f.topic}, as before"
    return Step(
        "Create the query again",
        "The new query gets a new id and new internal topics sized from its sources "
        f"({f.to} partitions), and reads its source from the start into empty state. "
        "ksqlDB gives a new sink the partition count of its source and refuses an existing "
        "sink topic of another count: drop the old sink first (DROP TABLE|STREAM <sink>; "
        "keeps its topic), and name the sink's count (WITH (PARTITIONS=n)) to keep it.",
        (
            Manual(
                "In the ksqlDB CLI: SET 'auto.offset.reset'='earliest'; then the kept "
                f"statement, reading {reads}."
            ),
            Manual(
                f"SHOW QUERIES; shows the new query RUNNING; migcheck app --application-id "
                f"<its application id> --topic {f.target} --to {f.to} finds it healthy "
                f"(the old query {query} is gone)."
            ),
        ),
    )
