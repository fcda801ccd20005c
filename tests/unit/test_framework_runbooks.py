"""The Quix Streams, ksqlDB and Faust runbooks, without a cluster: order, commands,
shellcheck.

Names are written here as each framework documents them (Quix's TopicManager:
``changelog__<group>--<topic>--<store>``; ksqlDB's query application id
``_confluent-ksql-<service id>query_<query id>``; Faust's ``<app id>-<table>-changelog``,
Collection._changelog_topic_name), never taken from migcheck.  tests/integration/
test_quix.py and test_faust.py execute the Quix and Faust runbooks on the real frameworks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migcheck.frameworks.faust import faust_internal
from migcheck.frameworks.quix import quix_internal
from migcheck.frameworks.registry import FRAMEWORKS, WITH_RUNBOOKS
from migcheck.frameworks.registry import runbook_steps as steps
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import (
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    Strategy,
)
from migcheck.report.runbook import render_markdown, render_sh

SHELLCHECK = Path(sys.executable).parent / "shellcheck"
GROUP = "quix-counter"
KSQL_APP = "_confluent-ksql-default_query_CTAS_COUNTS_5"


def _quix(**changes: object) -> RunbookFacts:
    base: dict[str, object] = {
        "kind": ReaderKind.QUIX_STREAMS,
        "app_id": GROUP,
        "bootstrap": "broker-1:9092",
        "command_config": None,
        "topic": "orders",
        "partitions": 3,
        "to": 6,
        "new_topic": "orders-p6",
        "strategy": Strategy.NEW_TOPIC,
        "protocol": "classic",
        "internal": (f"changelog__{GROUP}--orders--default",),
        "expected_internal": {f"changelog__{GROUP}--orders-p6--default": 6},
        "state_dir": "/srv/quix/state",
    }
    return RunbookFacts(**{**base, **changes})  # type: ignore[arg-type]


def _ksql(**changes: object) -> RunbookFacts:
    return _quix(
        kind=ReaderKind.KSQLDB,
        app_id=KSQL_APP,
        internal=(f"{KSQL_APP}-Aggregate-Aggregate-Materialize-changelog",),
        expected_internal={},
        state_dir=None,
        **changes,
    )


def _faust(**changes: object) -> RunbookFacts:
    faust: dict[str, object] = {
        "kind": ReaderKind.FAUST,
        "app_id": "faust-counter",
        "internal": ("faust-counter-counts-changelog",),
        "expected_internal": {"faust-counter-counts-changelog": 6},
        "state_dir": "/srv/faust/faust-counter-data",
    }
    return _quix(**{**faust, **changes})


def _commands(facts: RunbookFacts) -> list[str]:
    return [
        " ".join(a.argv if isinstance(a, Run) else (a.shown.argv if a.shown else ()))
        for s in steps(facts)
        for a in s.actions
        if isinstance(a, Run) or (isinstance(a, Check) and a.shown)
    ]


def test_every_framework_with_a_runbook_is_in_the_registry() -> None:
    assert (
        set(WITH_RUNBOOKS)
        == set(FRAMEWORKS)
        == {
            ReaderKind.KAFKA_STREAMS,
            ReaderKind.KSQLDB,
            ReaderKind.QUIX_STREAMS,
            ReaderKind.FAUST,
        }
    )


def test_quix_new_topic_wipes_commits_the_start_then_deletes_the_old_changelog() -> None:
    titles = [s.title for s in steps(_quix())]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Create orders-p6 and copy the history into it",
        "Wipe the local state",
        "Commit the start of every partition of orders-p6 for the group",
        "Restart the application on orders-p6",
        "Delete the old internal topics",
    ]
    commands = _commands(_quix())
    assert f"rm -rf -- /srv/quix/state/{GROUP}" in commands
    assert any(
        c.startswith("kafka-consumer-groups")
        and f"--group {GROUP} --topic orders-p6 --to-earliest --execute" in c
        for c in commands
    )
    assert commands[-1] == (
        f"kafka-topics --bootstrap-server broker-1:9092 --delete --if-exists --topic "
        f"changelog__{GROUP}--orders--default"
    )
    offsets = next(a for s in steps(_quix()) for a in s.actions
                   if isinstance(a, Check) and a.function == ShellCheck.ENSURE_OFFSETS)  # fmt: skip
    assert offsets.args[1:] == ("orders-p6", "0", "6", "required", GROUP)
    restart = steps(_quix())[5]
    assert any(
        isinstance(a, Manual) and "app.topic('orders-p6')" in a.text for a in restart.actions
    )


def test_quix_in_place_without_a_direct_store_is_the_alter_and_the_new_partitions_start() -> None:
    facts = _quix(strategy=Strategy.IN_PLACE, internal=(), expected_internal={})
    titles = [s.title for s in steps(facts)]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Alter orders to 6 partitions in place",
        "Commit the start of partitions 3-5 of orders for the group",
        "Restart the application on orders",
    ]
    assert not any(s.destructive for s in steps(facts))


def test_quix_in_place_with_split_history_deletes_the_changelog_before_the_restart() -> None:
    facts = _quix(strategy=Strategy.IN_PLACE, split_keys=205,
                  expected_internal={f"changelog__{GROUP}--orders--default": 6})  # fmt: skip
    titles = [s.title for s in steps(facts)]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Alter orders to 6 partitions in place",
        "Wipe the local state",
        "Delete the changelogs",
        "Send the group back to the start of orders",
        "Restart the application on orders",
    ]
    assert "splits the history of 205 keys" in steps(facts)[2].why


@pytest.mark.parametrize(
    ("target", "rebuilt", "old", "expected"),
    [
        # through a new topic: everything named after orders is an orphan
        ("orders-p6", False,
         ["changelog__g--orders--default", "repartition__g--orders--by_user",
          "changelog__g--repartition.orders.by_user--default"],
         {"changelog__g--orders-p6--default": 6}),
        # in place, state rebuilt: orders' own changelog comes back at 6
        ("orders", True, ["changelog__g--orders--default"], {"changelog__g--orders--default": 6}),
        # in place, nothing rebuilt: nothing to delete or wait for
        ("orders", False, [], {}),
    ],
)  # fmt: skip
def test_quix_internal_follows_quix_naming(
    target: str, rebuilt: bool, old: list[str], expected: dict[str, int]
) -> None:
    internal = [
        "changelog__g--orders--default",
        "repartition__g--orders--by_user",
        "changelog__g--repartition.orders.by_user--default",
        "changelog__g--payments--default",  # another stream's: never touched
        "changelog__g2--orders--default",  # another group's
    ]
    got_old, got_expected = quix_internal("g", "orders", target, 6, internal, rebuilt)
    assert sorted(got_old) == sorted(old)
    assert got_expected == expected


def test_the_ksqldb_runbook_terminates_and_creates_the_query_again() -> None:
    titles = [s.title for s in steps(_ksql())]
    assert titles == [
        "Pre-checks",
        "Keep the query's statement",
        "Stop the application",
        "Create orders-p6 and copy the history into it",
        "Create the query again",
    ]
    manual = [a.text for s in steps(_ksql()) for a in s.actions if isinstance(a, Manual)]
    assert any("EXPLAIN CTAS_COUNTS_5;" in t for t in manual)
    assert any("TERMINATE CTAS_COUNTS_5;" in t for t in manual)
    assert any("KAFKA_TOPIC='orders-p6'" in t for t in manual)
    assert any("SET 'auto.offset.reset'='earliest';" in t for t in manual)
    in_place = [s.title for s in steps(_ksql(strategy=Strategy.IN_PLACE))]
    assert "Alter orders to 6 partitions in place" in in_place
    # ksqlDB owns the query's app: no reset tool, no state directory of the operator's
    assert not any("kafka-streams-application-reset" in c for c in _commands(_ksql()))
    assert not any(c.startswith("rm ") for c in _commands(_ksql()))


@pytest.mark.parametrize(
    "facts",
    [_quix(), _quix(strategy=Strategy.IN_PLACE, split_keys=3),
     _quix(strategy=Strategy.IN_PLACE, internal=()), _ksql(), _ksql(strategy=Strategy.IN_PLACE),
     _faust(), _faust(strategy=Strategy.IN_PLACE, split_keys=3),
     _faust(strategy=Strategy.IN_PLACE, internal=(), expected_internal={})],
)  # fmt: skip
def test_the_scripts_are_shellcheck_clean_and_say_the_framework(
    tmp_path: Path, facts: RunbookFacts
) -> None:
    path = tmp_path / "runbook.sh"
    path.write_text(render_sh(facts, steps(facts), "0.1.0", "2026-11-28T00:00:00+00:00"))
    p = subprocess.run([str(SHELLCHECK), str(path)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode()
    markdown = render_markdown(facts, steps(facts), "0.1.0", "2026-11-28T00:00:00+00:00")
    label = {ReaderKind.QUIX_STREAMS: "Quix Streams application", ReaderKind.KSQLDB: "ksqlDB query",
             ReaderKind.FAUST: "Faust application"}[facts.kind]  # fmt: skip
    assert f"under the {label} " in markdown.splitlines()[2]
    # printed without --execute: every step shown, nothing run
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    run = subprocess.run(["bash", str(path)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("== Step") == len(steps(facts))
    assert not (tmp_path / "work").exists()
    lines = run.stdout.splitlines()
    assert lines[0].startswith("DRY RUN: nothing was changed") and lines[-1] == lines[0]
    assert "Runbook complete" not in run.stdout


@pytest.mark.parametrize(
    ("facts", "number"),
    [
        (_quix(members=2), 2),
        (_ksql(members=2), 3),
        (_ksql(members=2, strategy=Strategy.IN_PLACE), 3),
        (_faust(members=2), 2),
    ],
)
def test_the_header_names_the_step_that_stops_the_members(facts: RunbookFacts, number: int) -> None:
    """ksqlDB keeps the query's statement first, so its stop is step 3, not 2 (issue 54);
    the numbers are counted by hand from the titles the tests above pin."""
    markdown = render_markdown(facts, steps(facts), "0.1.0", "2026-11-28T00:00:00+00:00")
    assert f"The group has 2 members now: step {number} stops them." in markdown
    assert steps(facts)[number - 1].title == "Stop the application"


def test_faust_new_topic_wipes_the_datadir_deletes_the_changelog_and_commits_the_start() -> None:
    titles = [s.title for s in steps(_faust())]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Create orders-p6 and copy the history into it",
        "Wipe the local state",
        "Delete the changelogs",
        "Commit the start of every partition of orders-p6 for the group",
        "Restart the application on orders-p6",
    ]
    commands = _commands(_faust())
    # the datadir as given (Faust's is <id>-data by default), not <state dir>/<app id>
    assert "rm -rf -- /srv/faust/faust-counter-data" in commands
    assert (
        "kafka-topics --bootstrap-server broker-1:9092 --delete --if-exists --topic "
        "faust-counter-counts-changelog"
    ) in commands
    restart = steps(_faust())[6]
    start = next(a.text for a in restart.actions if isinstance(a, Manual))
    assert "app.topic('orders-p6')" in start and "topic_partitions=6" in start
    wait = ShellCheck.WAIT_INTERNAL_TOPICS
    back = next(a for a in restart.actions if isinstance(a, Check) and a.function is wait)
    assert back.args == ("faust-counter-counts-changelog=6",)


def test_faust_in_place_with_split_history_rewinds_after_deleting_the_changelog() -> None:
    titles = [s.title for s in steps(_faust(strategy=Strategy.IN_PLACE, split_keys=7))]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Alter orders to 6 partitions in place",
        "Wipe the local state",
        "Delete the changelogs",
        "Send the group back to the start of orders",
        "Restart the application on orders",
    ]


def test_faust_internal_is_the_apps_changelogs_by_fausts_naming() -> None:
    internal = [
        "faust-counter-counts-changelog",
        "faust-counter-orders-by_user-repartition",  # a group_by's: keeps its count
        "faust-counter-__assignor-__leader",  # the leader topic: no state
        "other-app-counts-changelog",  # another app's
    ]
    assert faust_internal("faust-counter", internal, 6) == (
        ("faust-counter-counts-changelog",),
        {"faust-counter-counts-changelog": 6},
    )


def _streams(**changes: object) -> RunbookFacts:
    streams: dict[str, object] = {
        "kind": ReaderKind.KAFKA_STREAMS,
        "app_id": "shop-counter",
        "internal": ("shop-counter-counts-changelog",),
        "expected_internal": {"shop-counter-counts-changelog": 6},
        "state_dir": "/srv/streams",
    }
    return _quix(**{**streams, **changes})


#: Each framework's own setting that makes it read committed records only, as its
#: documentation names it: Kafka Streams' consumer prefix (StreamsConfig.consumerPrefix),
#: librdkafka's isolation.level (Quix keeps its default), faust-streaming's consumer,
#: read_committed only under processing_guarantee='exactly_once' (0.15.3,
#: transport/drivers/aiokafka.py), and ksqlDB's ksql.streams. prefix for a SET.
READ_COMMITTED = {
    ReaderKind.KAFKA_STREAMS: (_streams, "consumer.isolation.level=read_committed"),
    ReaderKind.QUIX_STREAMS: (_quix, "isolation.level=read_committed"),
    ReaderKind.FAUST: (_faust, "processing_guarantee='exactly_once'"),
    ReaderKind.KSQLDB: (_ksql, "SET 'ksql.streams.consumer.isolation.level'='read_committed';"),
}


@pytest.mark.parametrize("kind", list(READ_COMMITTED), ids=lambda k: k.value)
def test_an_app_restarted_on_the_copy_reads_committed_records_only(kind: ReaderKind) -> None:
    """A killed copy leaves aborted records in the new topic: the restart through the copy
    names the framework's setting, and says why; in place, nothing was copied."""
    build, setting = READ_COMMITTED[kind]
    restarts = ("Restart the application on orders-p6", "Create the query again")
    (last,) = [s for s in steps(build()) if s.title in restarts]
    starts = " ".join(a.text for a in last.actions if isinstance(a, Manual))
    assert setting in starts
    assert "aborted transactions" in last.why
    in_place = build(strategy=Strategy.IN_PLACE)
    texts = [a.text for s in steps(in_place) for a in s.actions if isinstance(a, Manual)]
    assert not any("read_committed" in t or "exactly_once" in t for t in texts)


ONLINE = {
    "strategy": Strategy.ONLINE,
    "outputs": ("totals",),
    "downstream": ("dashboard",),
    "groups": ("billing",),
}


def test_ksqldb_online_keeps_the_statement_then_one_migrate_step_names_every_reader() -> None:
    facts = _ksql(**ONLINE)
    (step,) = [s for s in steps(facts) if s.title == "Migrate online"]
    check, run = step.actions  # the history read again right before the shadow's reprocess
    assert isinstance(check, Check) and check.function is ShellCheck.HISTORY_INTACT
    assert isinstance(run, Run)
    argv = " ".join(run.argv)
    assert argv.startswith("migcheck migrate --bootstrap-server ")
    for words in (f"--application-id {facts.app_id}", "--output-topic totals",
                  "--downstream-group dashboard", "--group billing", "--topic orders --to 6",
                  "--checkpoint @orders-p6.migrate.json"):  # fmt: skip
        assert words in argv
    # nothing is stopped, reset or deleted: the app keeps serving until its shadow takes over
    titles = [s.title for s in steps(facts)]
    assert titles == ["Pre-checks", "Keep the query's statement", "Migrate online"]
    assert not any(s.destructive for s in steps(facts))


def test_the_online_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    path = tmp_path / "runbook.sh"
    facts = _ksql(**ONLINE)
    path.write_text(render_sh(facts, steps(facts), "0.1.0", "2026-11-29T00:00:00+00:00"))
    p = subprocess.run([str(SHELLCHECK), str(path)], capture_output=True)
    assert p.returncode == 0, p.stdout.decode()
    markdown = render_markdown(facts, steps(facts), "0.1.0", "2026-11-29T00:00:00+00:00")
    assert "migcheck migrate" in markdown and "Stop the application" not in markdown


def test_each_shadow_line_names_the_settings_that_keep_its_state_exact_and_barrier_quick() -> None:
    from migcheck.model.migrate import ShadowStart

    start = ShadowStart("shop", "shop-p6", (("orders", "orders-p6"),), (("totals", "totals-p6"),))
    streams = FRAMEWORKS[ReaderKind.KAFKA_STREAMS].shadow
    assert streams is not None
    line = streams(start)
    for words in ("application.id=shop-p6", "reading orders-p6 in place of orders",
                  "totals -> totals-p6", "consumer.isolation.level=read_committed",
                  "commit.interval.ms=1000 or less", "state directory empty"):  # fmt: skip
        assert words in line
    ksql = FRAMEWORKS[ReaderKind.KSQLDB].shadow
    assert ksql is not None
    query = ShadowStart("_confluent-ksql-default_query_CTAS_COUNTS_5", "",
                        (("orders", "orders-p6"),), (("totals", "totals-p6"),))  # fmt: skip
    line = ksql(query)
    for words in ("query CTAS_COUNTS_5", "EXPLAIN CTAS_COUNTS_5;", "stream over orders-p6",
                  "'ksql.streams.consumer.isolation.level'='read_committed'",
                  "'auto.offset.reset'='earliest'", "totals -> totals-p6",
                  "SHOW QUERIES;"):  # fmt: skip
        assert words in line
