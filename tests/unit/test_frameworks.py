"""Quix Streams, ksqlDB and Faust apps as migcheck models them, by hand.

Names and errors are Quix Streams' own: its TopicManager names an internal topic
``<type>__<group>--<stream id>--<suffix>`` (its docstring, ``_internal_name``), nests
a repartition topic's name as ``repartition.<topic>.<operation>``
(``_format_nested_name``), joins a stream's topic names sorted with ``--``
(``stream_id_from_strings``), and raised the quoted TopicConfigurationMismatch in a
real 3.28.1 app of the issue.  Faust's are faust-streaming's (faust/tables/base.py,
faust/streams.py, faust/assignor), copied below from its 0.15.3 release.  Verdicts are what
those rules make of a change.
"""

from __future__ import annotations

import pytest

from migcheck.apps.build import Facts, from_names
from migcheck.apps.discovery import Word, _framework
from migcheck.apps.rules import AppLevel, Check, verdict
from migcheck.cli.app import app_cmd
from migcheck.frameworks.faust import FAUST, faust_table, faust_topics
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.ksqldb import KSQLDB
from migcheck.frameworks.quix import QUIX_STREAMS, QuixTopic, quix_nested, quix_topic
from migcheck.frameworks.registry import FRAMEWORKS
from migcheck.model.readers import Protocol

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
    return from_names(Facts(GROUP, sources, internal, framework=QUIX_STREAMS)).app


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


# --- Faust (faust-streaming) ----------------------------------------------------------

FAUST_APP = "faust-counter"

#: faust-streaming 0.15.3, faust/tables/base.py, verbatim: the message of the
#: PartitionsMismatch a table raises at its first write of a source's record.
FAUST_SOURCE_TEXT = """\
The source topic {source_topic!r} for table {table_name!r}
has {source_n} partitions, but the changelog
topic {change_topic!r} has {change_n} partitions.

Please make sure the topics have the same number of partitions
by configuring Kafka correctly.
"""


def _faust_changelog(table: str) -> str:
    """faust/tables/base.py: ``f"{self.app.conf.id}-{self.name}-changelog"``."""
    return f"{FAUST_APP}-{table}-changelog"


def _faust(sources: dict[str, int], internal: dict[str, int]):
    return from_names(Facts(FAUST_APP, sources, internal, framework=FAUST)).app


def test_faust_names_its_changelogs_and_group_by_topics_as_its_source_does() -> None:
    topics = [
        _faust_changelog("counts"),
        # Stream.group_by: the app's prefix, the topic, f"-{name}-repartition"
        f"{FAUST_APP}-orders-user_id-repartition",
        f"{FAUST_APP}-__assignor-__leader",  # the leader topic: no state, no stream
        "other-counts-changelog",
        f"{FAUST_APP}--changelog",  # no table's name
        "orders",
    ]
    assert faust_topics(FAUST_APP, topics) == [
        _faust_changelog("counts"),
        f"{FAUST_APP}-orders-user_id-repartition",
    ]
    assert FAUST.changelog(FAUST_APP, "counts") == _faust_changelog("counts")
    assert faust_table(FAUST_APP, _faust_changelog("per-user-counts")) == "per-user-counts"
    assert faust_table(FAUST_APP, "orders") is None


def test_a_faust_changelog_left_at_the_old_count_crashes_in_faust_s_words() -> None:
    app = _faust({"orders": 3}, {_faust_changelog("counts"): 3})
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].check == Check.CHANGELOG
    faust_says = FAUST_SOURCE_TEXT.format(
        source_topic="orders",
        table_name="counts",
        source_n=6,
        change_topic=_faust_changelog("counts"),
        change_n=3,
    )
    # the traceback's last line and those after it, as a real 0.15.3 worker printed them
    assert v.reasons[0].text == f"faust.exceptions.PartitionsMismatch: {faust_says}".rstrip()
    assert "'orders' for table 'counts'\nhas 6 partitions" in v.reasons[0].text
    assert FAUST.releases(Protocol.CLASSIC) == "faust-streaming 0.1 to 0.15"
    assert verdict(app, {"orders": 3}).level == AppLevel.SAFE


def test_the_faust_error_names_the_source_that_no_longer_matches() -> None:
    app = _faust({"clicks": 3, "orders": 3}, {_faust_changelog("counts"): 3})
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.CRASH
    assert v.reasons[0].text.startswith(
        "faust.exceptions.PartitionsMismatch: The source topic 'orders' for table 'counts'\n"
    )


def test_a_faust_changelog_widened_with_its_source_misroutes_state_silently() -> None:
    """Faust's own advice ("make sure the topics have the same number of partitions")
    passes its check, while each moved key's state stays in its old partition."""
    changelog = _faust_changelog("counts")
    app = _faust({"orders": 3}, {changelog: 3})
    v = verdict(app, {"orders": 6, changelog: 6})
    assert v.level == AppLevel.CORRUPT
    assert v.reasons[0].check == Check.UNCHECKED_STATE
    assert v.reasons[0].stores == ("counts",)


def test_a_faust_stream_without_a_table_keeps_no_faust_state() -> None:
    app = _faust({"orders": 3, "clicks": 4}, {_faust_changelog("counts"): 3})
    assert verdict(app, {"clicks": 8}).level == AppLevel.SAFE


def test_a_faust_group_by_topic_keeps_its_count_so_its_table_is_safe() -> None:
    repartition = f"{FAUST_APP}-orders-user_id-repartition"
    app = _faust({"orders": 3}, {repartition: 8, _faust_changelog("by_user"): 8})
    assert app.fixed == {"orders-user_id-repartition": 8}
    v = verdict(app, {"orders": 6})
    assert v.level == AppLevel.SAFE
    stateful = next(s for s in app.topology.subtopologies if s.stores)
    assert stateful.source_topics == ("orders-user_id-repartition",)


def test_a_faust_app_without_a_group_is_told_by_its_leader_topic() -> None:
    """faust/assignor/leader_assignor.py: ``f"{self.app.conf.id}-__assignor-__leader"``."""
    topics = {f"{FAUST_APP}-__assignor-__leader", _faust_changelog("counts"), "orders"}
    assert _framework(FAUST_APP, None, topics, Word(), []) is FAUST
    # nothing named after it: no framework is assumed (issue 69); discovery asks the user
    assert _framework(FAUST_APP, None, {"orders"}, Word(), []) is None
    assert _framework(FAUST_APP, None, {"orders"}, Word(topology=True), []) is KAFKA_STREAMS


def test_framework_accepts_faust() -> None:
    option = next(p for p in app_cmd.params if p.name == "framework")
    assert "faust" in option.type.choices  # type: ignore[attr-defined]
