"""A real Kafka Streams count app on a topic that retention trimmed to its end (here with
kafka-delete-records, as issue 70 measured it): ``runbook --strategy auto`` moves its state
instead of rebuilding it, and loses nothing.

The app counts two rounds; every record it counted is then deleted from its input.  The
runbook, written after the trim, picks move-state; executed with ``--execute --yes`` as an
operator would (the app restarted under the new id when the script says so), it copies the
counts' changelog into the new id's at 6 partitions and commits the new group's offsets at
the barrier.  The restarted app holds every key's whole count before it reads a record, and
after a third round every key's count is its whole history, counted from the records this
test produced, never from migcheck.  The old app's changelog and group are still there: the
way back.  That count app's move killed midway and resumed, and its move onto a copy of the
input (``--into``), are in test_runbook_move_copies.py (the two heaviest: one file held one
xdist worker for ten minutes); the helpers both files share are tests/support/movestate.py.

The same on a set of topics and a store behind a repartition topic (``join-rekey``: orders
left-joined with a table of customers, the joined values counted through
``<app>-rekey-group-repartition``), both topics trimmed: the two stores move as one set, at
one barrier; the counts' changelog is placed by the store key, the new id's internal topics
come at 6, every re-keyed count is exact, and new orders join customers that only the
moved table holds.

The same on the streams protocol (KIP-1071): the new id's offsets are committed with
kafka-consumer-groups before its first member joins (an empty classic group, which that
member's join converts into a streams group, keeping them: FINDINGS.md), and a round counted
after the trim shows that the new group starts at the barrier, not at the log start.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kafkatest import Kafka
from movestate import auto_script, counted_and_trimmed, counts, dumped, exact, partitions
from runbookops import execute_yes, execute_yes_apps
from streamsapp import KEYS, StreamsApp, joined_counts, phase1, phase2
from trimming import group_offsets, offsets

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.usefixtures("on_connect_server")]


def test_a_joined_apps_state_moves_as_one_set_and_every_rekeyed_count_joins(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issues 70 and 71: join-rekey left-joins orders with ``builder.table(customers)`` and
    counts the joined values behind a repartition topic.  Both topics are trimmed to their
    ends, so neither the table nor the counts can be rebuilt: ``runbook --topic orders
    --topic customers`` (auto) moves both stores as one set, altered in place at one
    barrier.  The counts' changelog was placed by the joined value under the repartition
    topic's 3 partitions, the table's by the customer key; the new id's internal topics
    come at 6.  A third round's orders join customers that only the moved table holds.
    A count app of the orders alone moves in the same runbook (issue 71: several apps),
    each app at its own barrier, the topics altered once."""
    app = StreamsApp(kafka, "join-rekey")
    other = StreamsApp(kafka, "count", shared_input=app.input)
    other.state_dir = app.state_dir  # the state.dir both apps share on this host
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    history = [*phase1(), *phase2()]
    produced = joined_counts(history)
    ends = counted_and_trimmed(
        app, history, produced, tmp_path, also=(app.table,), readers=(other,)
    )
    table_ends = offsets(kafka, app.table, "-1")
    script = auto_script(app, tmp_path, capsys, also=(app.table,), readers=(other,))

    old_id, new_id = app.app_id, f"{app.app_id}-p6"
    app.app_id, other.app_id = new_id, f"{other.app_id}-p6"
    code, out, dumps = execute_yes_apps(script, [app, other], tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    # restored from the moved changelogs before reading a record: every joined count
    exact(counts(dumped(dumps[new_id])), produced)
    exact(counts(dumped(dumps[other.app_id])), Counter(k for k, _ in history))
    for internal in ("counts-changelog", "rekey-group-repartition",
                     f"{app.table}-STATE-STORE-0000000000-changelog"):  # fmt: skip
        assert partitions(kafka, f"{new_id}-{internal}") == "6", internal
    barrier = {(app.input, str(p), str(o)) for p, o in ends.items()}
    barrier |= {(app.table, str(p), str(o)) for p, o in table_ends.items()}
    assert barrier <= set(group_offsets(kafka, new_id))

    # a third round: each order joins its customer from the moved table, whose topic holds
    # none of them, and is counted on top of the whole history
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    exact(counts(after.state), produced + joined_counts(more))
    assert set(after.values("counts").values()) == {1}  # no value's count split over tasks
    assert partitions(kafka, f"{old_id}-counts-changelog") == "3"
    counted = other.run()
    assert counted.code == 0, counted.stderr[-2000:]
    exact(counts(counted.state), Counter(k for k, _ in history + more))


def test_a_streams_protocol_app_moves_its_state_and_its_new_group_starts_at_the_barrier(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """KIP-1071: the new id's offsets are committed with kafka-consumer-groups before its
    first member joins, which makes it an empty classic group; the first streams member's
    join converts it into a streams group and keeps them (FINDINGS.md).  A round counted
    after the trim lies between the log start and the barrier: a new group that started
    anywhere but at the barrier would count it twice."""
    app = StreamsApp(kafka, "count", protocol="streams")
    history = [*phase1(), *phase2()]
    produced = Counter(key for key, _ in history)
    counted_and_trimmed(app, history, produced, tmp_path)
    after_trim = phase2()
    app.produce(app.input, after_trim)
    counted = app.run()
    assert counted.code == 0, counted.stderr[-2000:]
    produced += Counter(key for key, _ in after_trim)
    assert counts(counted.state) == produced
    script = auto_script(app, tmp_path, capsys)

    app.app_id = f"{app.app_id}-p6"
    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    # restored from the moved changelog, and read on from the barrier: nothing twice
    exact(counts(dumped(dump)), produced)
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    exact(counts(after.state), produced + Counter(key for key, _ in more))


#: Why a refused store cannot move, as the runbook's line ends for each of item 3's kinds.
_OWN_CHANGELOG = (
    "only key-value stores that log to a changelog of their own can be moved so far; keep the "
    "whole history and use another --strategy"
)
_STREAM_TIME = (
    "their results follow stream time, which a merged task does not share with its old tasks"
)


def test_each_store_that_cannot_move_is_refused_in_its_own_line(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 3's refusals on real apps: a store with logging disabled, a table that reads its
    source topic as its changelog (topology.optimization), a window and a session store.
    Each app runs once, at the same time, over a few records of one shared input: its
    group then exists (an app never run is no app to migcheck), and Kafka Streams creates
    the changelogs it keeps with its own cleanup.policy."""
    shared = kafka.create_topic("move-state-refusals", 3)
    apps = {
        t: StreamsApp(kafka, t, shared_input=shared)
        for t in ("count-nolog", "source-changelog", "windowed", "session")
    }
    apps["windowed"].produce(shared, phase1()[:30])
    with ThreadPoolExecutor(len(apps)) as pool:
        for t, ran in zip(apps, pool.map(StreamsApp.run, apps.values()), strict=True):
            assert ran.code == 0, f"{t}: {ran.stderr[-2000:]}"
    said = {
        "count-nolog": "the store counts logs to no changelog (logging disabled: there is no "
        "{app}-counts-changelog), so its state is nowhere to move from: " + _OWN_CHANGELOG,
        "source-changelog": "the table source-table reads its source topic as its changelog "
        "(topology.optimization: there is no {app}-source-table-changelog): " + _OWN_CHANGELOG,
        "windowed": "{app}-wcounts-changelog is a window or session store's changelog "
        f"(cleanup.policy compact,delete): {_STREAM_TIME}: {_OWN_CHANGELOG}",
        "session": "{app}-scounts-changelog is a window or session store's changelog "
        f"(cleanup.policy compact,delete): {_STREAM_TIME}: {_OWN_CHANGELOG}",
    }
    for t, app in apps.items():
        topology = app.describe(tmp_path / f"{t}.txt")
        p = app.migcheck(
            "runbook", "--topic", shared, "--to", "6", "--topology", str(topology),
            "--strategy", "move-state", here=capsys,
        )  # fmt: skip
        line = said[t].format(app=app.app_id)
        assert (p.returncode, p.stderr) == (
            1,
            f"migcheck: refused: --strategy move-state for {app.app_id}: {line}\n",
        ), p.stderr
        assert p.stdout == ""
    assert partitions(kafka, shared) == "3"  # nothing changed
