"""``runbook --strategy move-state`` for each framework (issue 70, item 4): a Faust app's
tables move through the steps Kafka Streams' stores take, under Faust's own names; Quix
Streams and ksqlDB are refused, each in one line that says why.  Every expected value is
written by hand (the real Faust worker's proof: tests/integration/test_faust.py)."""

from __future__ import annotations

import pytest
from runbookfacts import moved_facts
from streamsmodel import app_facts

from migcheck.apps.build import from_names
from migcheck.apps.discovery import Discovery
from migcheck.apps.movable import store_routes, unmovable
from migcheck.errors import Refused, UsageError
from migcheck.frameworks.registry import FRAMEWORKS, runbook_steps
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.readers import Protocol, ReaderKind
from migcheck.model.runbook import (
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    StateMove,
    StepRole,
)


def _faust(internal: dict[str, str], kind: ReaderKind = ReaderKind.FAUST) -> Discovery:
    """The app ``shop`` on ``orders`` (3 partitions), its internal topics (name to
    cleanup.policy) on the cluster, as discovery finds a stopped app of ``kind``."""
    facts = app_facts(
        "shop", {"orders": 3}, dict.fromkeys(internal, 3), Protocol.CLASSIC,
        framework=FRAMEWORKS[kind],
    )  # fmt: skip
    topics = {t: TopicMeta(t, policy, 3) for t, policy in internal.items()}
    return Discovery(facts, None, topics)


def _refusal(internal: dict[str, str], kind: ReaderKind = ReaderKind.FAUST) -> Exception | None:
    disc = _faust(internal, kind)
    return unmovable(disc, from_names(disc.facts), None)


#: The one line a Faust app's move gets, whatever its tables (written here by hand).
FAUST_REFUSED = (
    "--strategy move-state: shop is a Faust application: its moved tables need the "
    "restarted workers under processing_guarantee='exactly_once' (the copy's transaction "
    "markers), and a real worker under it (faust-streaming 0.15.3, aiokafka 0.14.0) read a "
    "record twice or never in 3 of 10 runs beside a CPU load, so the move is not offered; "
    "keep the whole history and use another --strategy"
)


@pytest.mark.parametrize(
    "internal",
    [
        {"shop-counts-changelog": "compact"},  # a table logged to its changelog
        # behind a group_by, whose repartition topic's count Faust never checks
        {
            "shop-counts-changelog": "compact",
            "shop-orders-shop.count.by_word-repartition": "delete",
        },
        {"shop-hourly-changelog": "compact,delete"},  # windowed (Table.using_window)
    ],
)
def test_a_faust_table_is_refused_in_one_line_saying_why(internal: dict[str, str]) -> None:
    """Faust's move needs its workers restarted under exactly_once, which a real worker
    did not hold under load (test_faust's evidence, docs/runbooks.md): refused before
    anything else about the app, whatever its tables."""
    refused = _refusal(internal)
    assert isinstance(refused, UsageError) and not isinstance(refused, Refused)
    assert str(refused) == FAUST_REFUSED
    disc = _faust(internal)
    routes = store_routes(disc, from_names(disc.facts))  # app --state says it per store
    assert routes and all(
        r.reason == FAUST_REFUSED.removeprefix("--strategy move-state: ") for r in routes
    )


@pytest.mark.parametrize(
    ("kind", "internal", "said"),
    [
        (ReaderKind.QUIX_STREAMS, {"changelog__shop--orders--counts": "compact"},
         "--strategy move-state: shop is a Quix Streams application: Quix restores a "
         "changelog record only while the source offset in its __processed_tp_offsets__ "
         "header is below the committed offset of the same partition number "
         "(state/recovery.py, _should_apply_changelog), so a record moved to another "
         "partition (every record on a new one, committed at 0) would be skipped at restore "
         "and its state silently lost; a move would have to rewrite that header, which "
         "migcheck does not; keep the whole history and use another --strategy"),
        (ReaderKind.KSQLDB, {"shop-counts-changelog": "compact"},
         "--strategy move-state: shop is a ksqlDB query: ksqlDB names a new query's id and "
         "creates its internal topics itself as the query starts, so there are no "
         "changelogs of a new id to move the state into first, and no ksqlDB server runs "
         "here to prove a move on; keep the whole history and use another --strategy"),
    ],
)  # fmt: skip
def test_quix_streams_and_ksqldb_are_refused_in_one_line_saying_why(
    kind: ReaderKind, internal: dict[str, str], said: str
) -> None:
    refused = _refusal(internal, kind)
    assert isinstance(refused, UsageError)
    assert str(refused) == said
    assert "\n" not in said


def _faust_facts() -> RunbookFacts:
    return moved_facts(
        kind=ReaderKind.FAUST,
        app_id="shop",
        moved_app_id="shop-p6",
        state_dir="/srv/faust/shop-data",
        internal=("shop-counts-changelog",),
        moves=(
            StateMove(
                "counts",
                "shop-counts-changelog",
                "shop-p6-counts-changelog",
                6,
                {"cleanup.policy": "compact"},
                1200,
            ),
        ),
        expected_internal={"shop-p6-counts-changelog": 6},
    )


def test_a_faust_move_takes_kafka_streams_steps_under_faust_names() -> None:
    steps = runbook_steps(_faust_facts())
    assert [s.title for s in steps] == [
        "Pre-checks",
        "Pause the producers and let the application drain",
        "Stop the application",
        "Record the barrier",
        "Move the state into shop-p6's changelogs",
        "Alter orders to 6 partitions in place",
        "Commit shop-p6's offsets at the barrier",
        "Wipe the local state",
        "Restart the application on orders",
    ]
    assert all(s.role is not StepRole.REPROCESS for s in steps)  # nothing is reprocessed
    manual = [a.text for s in steps for a in s.actions if isinstance(a, Manual)]
    assert manual[1] == "Stop every instance of the Faust application (consumer group shop)."
    assert manual[-1] == (
        "Start every worker with the app id 'shop-p6' in place of 'shop' (the same code and "
        "settings otherwise), reading orders, with topic_partitions=6 (and partitions=6 on "
        "each Table that names a count), the empty datadir above, and "
        "processing_guarantee='exactly_once' (keep it)."
    )
    # Faust's recovery steps over the marker that ends a moved partition only so
    assert "Faust's recovery steps over it only in a transaction" in steps[-1].why
    assert manual[-2] == (
        "On every worker, make sure the datadir the workers start with under shop-p6 is "
        "empty or absent: Faust's default '{conf.name}-data' gives shop-p6-data; an app that "
        "sets datadir to a path of its own needs a new one. Leave /srv/faust/shop-data (the "
        "old id's) as it is."
    )
    # the old datadir is the way back: the script deletes no datadir
    assert not [a for s in steps for a in s.actions if isinstance(a, Run) and a.argv[0] == "rm"]
    (move,) = [s for s in steps if s.title.startswith("Move the state")]
    assert "Faust writes each changelog record to the partition of the source" in move.why
    assert "(a table keyed by other bytes than the source key's, which only its" in move.why
    (topics,) = [
        a for a in steps[-1].actions
        if isinstance(a, Check) and a.function is ShellCheck.WAIT_INTERNAL_TOPICS
    ]  # fmt: skip
    assert topics.args == ("shop-p6-counts-changelog=6",)
