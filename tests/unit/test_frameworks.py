"""Quix Streams and ksqlDB apps as migcheck models them, by hand.

Names and errors are Quix Streams' own: its TopicManager names an internal topic
``<type>__<group>--<stream id>--<suffix>`` (its docstring, ``_internal_name``), nests
a repartition topic's name as ``repartition.<topic>.<operation>``
(``_format_nested_name``), joins a stream's topic names sorted with ``--``
(``stream_id_from_strings``), and raised the quoted TopicConfigurationMismatch in a
real 3.28.1 app of the issue.  Verdicts are what those rules make of a change.
"""

from __future__ import annotations

import pytest

from migcheck.readers.naming import QuixTopic, quix_nested, quix_topic
from migcheck.streams.build import Facts, quix
from migcheck.streams.frameworks import FRAMEWORKS, KSQLDB, QUIX_STREAMS, Protocol
from migcheck.streams.rules import AppLevel, Check, verdict

GROUP = "quix-counter"
CHANGELOG = "changelog__quix-counter--orders--default"

#: The error a real Quix Streams 3.28.1 count app raised at its restart after its
#: 3-partition input was altered to 6 (the issue's words, stray trailing quote included).
QUIX_ERROR = (
    "TopicConfigurationMismatch: Invalid partition count for the changelog topic "
    '"changelog__quix-counter--orders--default": expected 6, got 3"'
)


@pytest.mark.parametrize(
    ("topic", "parsed"),
    [
        (CHANGELOG, QuixTopic("changelog", "orders", "default")),
        ("changelog__quix-counter--a--b--sums", QuixTopic("changelog", "a--b", "sums")),
        (
            "repartition__quix-counter--orders--by_user",
            QuixTopic("repartition", "orders", "by_user"),
        ),
        (
            "changelog__quix-counter--repartition.orders.by_user--default",
            QuixTopic("changelog", "repartition.orders.by_user", "default"),
        ),
        ("changelog__other--orders--default", None),  # another group's
        ("orders", None),
        ("quix-counter-counts-changelog", None),  # Kafka Streams' naming
    ],
)
def test_quix_internal_topics_read_as_its_topic_manager_names_them(
    topic: str, parsed: QuixTopic | None
) -> None:
    assert quix_topic(GROUP, topic) == parsed


def test_a_repartition_topic_nests_as_quix_nests_it() -> None:
    assert quix_nested(GROUP, "repartition__quix-counter--orders--by_user") == (
        "repartition.orders.by_user"
    )
    assert quix_nested(GROUP, "orders") == "orders"


def _quix(sources: dict[str, int], internal: dict[str, int]):
    return quix(Facts(GROUP, sources, internal, framework=QUIX_STREAMS)).app


def test_a_quix_changelog_left_at_the_old_count_crashes_with_quixs_words() -> None:
    app = _quix({"orders": 3}, {CHANGELOG: 3})
    assert app.changelog("orders--default") == CHANGELOG
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].check == Check.CHANGELOG
    assert v.reasons[0].text == QUIX_ERROR
    assert verdict(app, {"orders": 3}).level == AppLevel.SAFE


def test_a_quix_app_without_changelogs_may_hold_state_nothing_checks() -> None:
    app = _quix({"orders": 3}, {})
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CORRUPT
    assert v.reasons[0].check == Check.UNSEEN_STATE
    assert "use_changelog_topics=False" in v.reasons[0].text


def test_state_behind_a_group_by_keeps_its_tasks_quix_never_resizes_a_repartition_topic() -> None:
    repartition = "repartition__quix-counter--orders--by_user"
    changelog = "changelog__quix-counter--repartition.orders.by_user--default"
    app = _quix({"orders": 3}, {repartition: 3, changelog: 3})
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.SAFE
    stateful = next(s for s in app.topology.subtopologies if s.stores)
    assert stateful.source_topics == (repartition,)
    assert v.tasks[stateful.id] == (3, 3)


def test_a_stream_of_two_topics_checks_its_changelog_against_the_wider() -> None:
    app = _quix({"a": 3, "b": 3}, {"changelog__quix-counter--a--b--sums": 3})
    v = verdict(app, {"b": 6})
    assert v.level == AppLevel.CRASH
    assert "expected 6, got 3" in v.reasons[0].text


def test_a_ksqldb_query_fails_as_kafka_streams_does_said_as_the_query_going_to_error() -> None:
    text = KSQLDB.invalid(
        Protocol.CLASSIC, "_confluent-ksql-default_query_CSAS_X_1-Agg-changelog", 6, 3
    )
    assert text.startswith("the query goes to ERROR: Existing internal topic ")


def test_every_framework_is_registered_under_its_own_kind() -> None:
    assert {k: f.kind for k, f in FRAMEWORKS.items()} == {k: k for k in FRAMEWORKS}
    assert len({f.name for f in FRAMEWORKS.values()}) == len(FRAMEWORKS)
