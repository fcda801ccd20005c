"""Joined topics: `migcheck app`, the gate and the runbook quote the error a real app prints
first, on both protocols, and say so honestly where the cluster cannot tell.

The app is fixtures/java/streams' ``join-rekey``: ``orders`` left-joined with
``builder.table(customers)`` (unnamed, so its store is named after the topic), re-keyed and
counted through a repartition topic.  Widening ``orders`` alone, Kafka Streams checks
co-partitioning before the repartition topic on both protocols (CHECK_ORDERS); widening
``customers`` too, the first internal topic of the wrong count (classic: the repartition
topic; the streams protocol: the first in the broker's HashSet, which depends on the
random application id).  The expected lines are the app's own ``CRASH:`` lines, never
migcheck's: each test asks migcheck first, then alters and runs the app.

A join with no repartition topic (``join-nochangelog``) is the classic protocol's
UNCHECKED_JOIN: nothing checks it, and the app stalls in REBALANCING until task.timeout.ms
ends it with a TimeoutException that does not name the cause (FINDINGS.md; the test
watches the stall for 20 s).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafkatest import Kafka, read_as_group, read_records, subscribe_once_known
from oracles import run_cli
from runbookops import execute_yes_apps
from streamsapp import (
    CLASSIC_TOPOLOGY,
    KEYS,
    STREAMS_EXCEPTION,
    TOPOLOGY_EXCEPTION,
    Live,
    StreamsApp,
    joined_counts,
    phase1,
    phase2,
    quoted_crash,
)

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]

RUNNING = "STATE-CHANGE REBALANCING -> RUNNING"


def _started(kafka: Kafka, topology: str, protocol: str) -> StreamsApp:
    """A real app with its table and the first records produced; classic members of a
    crashed run leave within 10 s (session.timeout.ms), so the next run does not wait."""
    session = 10_000 if protocol == "classic" else None
    app = StreamsApp(kafka, topology, protocol=protocol, session_timeout_ms=session)
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    app.produce(app.input, phase1())
    return app


def _app(app: StreamsApp, *args: str, topics: tuple[str, ...] = ()) -> dict:
    """``migcheck app``'s candidate for 6 partitions of ``topics`` (default the input)."""
    changed = [a for t in topics or (app.input,) for a in ("--topic", t)]
    p = app.migcheck("app", *args, *changed, "--to", "6", "--format", "json")
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    assert report["verdict"] == "CRASH"
    (cand,) = report["candidates"]
    return {**cand, "basis": report["basis"]}


def _gate_reader(app: StreamsApp, *args: str) -> dict:
    """The gate's judgement of this app, for the input widened to 6 (it blocks)."""
    bootstrap = ("--bootstrap-server", app.kafka.bootstrap)
    p = run_cli("gate", *bootstrap, *args, "--change", f"{app.input}=6", "--format", "json")
    assert p.returncode == 1, p.stderr
    (change,) = json.loads(p.stdout)["changes"]
    (reader,) = [r for r in change["readers"] if r["id"] == app.app_id]
    return reader


def _gate_reasons(app: StreamsApp, *args: str) -> list[str]:
    """The gate's reasons for this app, which crashes (MC201)."""
    reader = _gate_reader(app, *args)
    assert reader["verdict"] == "CRASH" and reader["rules"] == ["MC201"]
    return reader["reasons"]


def _plan_reasons(app: StreamsApp, *args: str) -> dict[str, list[str]]:
    """The gate's reasons for this app on a plan that widens both sides of its join to 6,
    by change: each cites MC201 first (it crashes, on its repartition topic)."""
    bootstrap = ("--bootstrap-server", app.kafka.bootstrap)
    plan = ("--change", f"{app.input}=6", "--change", f"{app.table}=6")
    p = run_cli("gate", *bootstrap, *args, *plan, "--format", "json")
    assert p.returncode == 1, p.stderr
    reasons = {}
    for change in json.loads(p.stdout)["changes"]:
        (reader,) = [r for r in change["readers"] if r["id"] == app.app_id]
        assert reader["verdict"] == "CRASH" and reader["rules"][0] == "MC201", reader
        reasons[change["topic"]] = reader["reasons"]
    return reasons


def _runbook_first_error(app: StreamsApp, *args: str) -> str:
    """The first error the runbook quotes: widening one side of the join alone, it refuses
    in one line (issue 71), naming the other side and what the app would print."""
    p = app.migcheck("runbook", *args, "--topic", app.input, "--to", "6", "--format", "sh")
    assert p.returncode == 1 and p.stdout == "", p.stderr
    said = (
        f"migcheck: refused: runbook would widen one side of a join: {app.app_id} joins "
        f"{app.input} with {app.table}, which must widen together (co-partitioned), or the "
        "app fails with: "
    )
    assert p.stderr.startswith(said) and p.stderr.count("\n") == 1, p.stderr
    error, then = p.stderr.removeprefix(said).split("; widen them in one change: ")
    assert then.strip() == (
        f"migcheck runbook --application-id {app.app_id} --topic {app.input} --topic "
        f"{app.table} --to 6"
    )
    return error


#: How long the app must stay in REBALANCING, with no task and no error, after the alter.
STALL = 20


def _first_of(live: Live, texts: tuple[str, ...], since: float, seconds: float) -> str | None:
    """The first line holding one of ``texts`` within ``seconds`` after ``since``, if any."""
    end = since + seconds
    while time.monotonic() < end and live.proc.poll() is None:
        for text in texts:
            if live.first(text, since) is not None:
                return text
        time.sleep(0.2)
    return next((t for t in texts if live.first(t, since) is not None), None)


def test_classic_dies_on_co_partitioning_before_the_repartition_topic(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Running, the group's tasks show orders and customers read by one sub-topology: the
    first error, certain.  Stopped, the cluster shows no such thing: the candidates, in
    Kafka's order, naming --topology; the first is the real one.  With --topology: the
    real line, as the gate's reason and the runbook's header quote it too."""
    app = _started(kafka, "join-rekey", "classic")
    topology = ("--topology", str(app.describe(tmp_path / "join-rekey.txt")))
    with app.live() as live:
        live.wait_for(RUNNING, 60)
        running = _app(app)
        running_gate = _gate_reasons(app)
        first = live.finish()
    assert first.crash is None and first.code == 0, first.stderr[-2000:]
    stopped = _app(app)
    given = _app(app, *topology)
    both = _app(app, *topology, topics=(app.input, app.table))
    stopped_gate = _gate_reasons(app)
    gate = _gate_reasons(app, "--topology", f"{app.app_id}={topology[1]}")
    together = _plan_reasons(app, "--topology", f"{app.app_id}={topology[1]}")
    header = _runbook_first_error(app, *topology)

    app.alter(app.input, 6)
    app.produce(app.input, phase2())
    second = app.run()
    real = quoted_crash(second.crash, CLASSIC_TOPOLOGY)
    assert real.startswith("Topics not co-partitioned: [{")
    assert running["basis"] == "inferred" and running["error"] == real  # the tasks settle it
    assert running_gate == [real]
    assert given["error"] == real and gate == [real] and header == real
    # stopped, without --topology: no single error; the real one first, on its condition
    assert stopped["error"] is None
    (joined, not_joined) = stopped["error_candidates"]
    assert (joined["error"], joined["check"]) == (real, "copartition")
    assert "are joined (co-partitioned)" in joined["condition"]
    assert not_joined["check"] == "repartition" and "not joined" in not_joined["condition"]
    assert f"{app.app_id}-rekey-group-repartition" in not_joined["error"]
    (said,) = stopped_gate  # the gate says the same: both, in that order, and what settles it
    assert said.index(real) < said.index(not_joined["error"]) and "--topology" in said

    app.alter(app.table, 6)  # co-partitioned again: the repartition topic comes first
    third = app.run()
    assert quoted_crash(third.crash, STREAMS_EXCEPTION) == both["error"], third.crash
    assert f"{app.app_id}-rekey-group-repartition" in both["error"]
    # a plan that widens both sides: each change judged with the other, as the app meets
    # them (issue 71), quoting the error the app really printed, never co-partitioning
    # (then the split state its clean-up would leave, as app says: the table store reads
    # its topic directly)
    said = [both["error"], *([both["after_cleanup"]] if both.get("after_cleanup") else [])]
    assert together == {app.input: said, app.table: said}
    assert not any("co-partitioned" in r for reasons in together.values() for r in reasons)


def test_streams_protocol_dies_on_co_partitioning_then_in_the_brokers_order(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Stopped, the streams group's broker still describes the topology: the first error
    is certain without --topology too.  With both sides widened, the broker names the
    first internal topic of its HashSet, which migcheck computes from the names."""
    app = _started(kafka, "join-rekey", "streams")
    first = app.run()
    assert first.crash is None and first.code == 0, first.stderr[-2000:]
    topology = ("--topology", str(app.describe(tmp_path / "join-rekey.txt")))
    broker = _app(app)
    given = _app(app, *topology)
    both = _app(app, *topology, topics=(app.input, app.table))
    gate = _gate_reasons(app)
    header = _runbook_first_error(app)

    app.alter(app.input, 6)
    app.produce(app.input, phase2())
    second = app.run()
    real = quoted_crash(second.crash, TOPOLOGY_EXCEPTION)
    assert real.startswith("Invalid topology: Following topics do not have the same number")
    assert broker["basis"] == "broker" and broker["error"] == given["error"] == real
    assert gate == [real] and header == real
    # at its next heartbeat: the default handler ends the client, REPLACE_THREAD stalls it
    assert "REPLACE_THREAD stalls it" in broker["error_when"]

    app.alter(app.table, 6)
    third = app.run()
    assert quoted_crash(third.crash, TOPOLOGY_EXCEPTION) == both["error"]
    assert both["error"].startswith(f"Invalid topology: Existing topic {app.app_id}-")


def test_a_join_without_a_repartition_topic_is_never_checked_and_stalls(
    kafka: Kafka, tmp_path: Path
) -> None:
    """``join-nochangelog`` has no internal topic at all.  Classic checks co-partitioning
    only in its repartition topics' setup, so nothing fails at the rebalance: the app stays
    in REBALANCING with no task, and would die only after task.timeout.ms (FINDINGS.md).
    Stopped, its group shows two topics of one count and nothing else: joined they stall
    it, not joined their state may hide unseen; both are named."""
    app = _started(kafka, "join-nochangelog", "classic")
    first = app.run()
    assert first.crash is None and first.code == 0, first.stderr[-2000:]
    topology = app.describe(tmp_path / "join-nochangelog.txt")
    given = _app(app, "--topology", str(topology))
    stopped = _app(app)
    # the gate cites the stall's own rule (docs/rules.md, MC203), which the app bears out below
    stall = _gate_reader(app, "--topology", f"{app.app_id}={topology}")
    assert (stall["verdict"], stall["rules"]) == ("STALL", ["MC203"]), stall
    assert stall["reasons"] == [given["error"]]

    app.alter(app.input, 6)
    app.produce(app.input, phase2())
    with app.live(max_seconds=60) as live:  # killed at the end: a stalled close takes 30 s
        started = live.wait_for("STATE-CHANGE CREATED -> REBALANCING", 60)
        # the stall, not the 5-minute timeout: anything else ends the wait at once
        ended = _first_of(live, ("-> RUNNING", "CRASH: ", "ERROR"), since=started, seconds=STALL)
        assert ended is None, live.text("err")[-2000:]
        assert live.proc.poll() is None and "TASKS REBALANCING active=[]" in live.text("err")
    (reason,) = [r for r in given["reasons"] if r["level"] == "CRASH"]
    assert reason["check"] == "unchecked-join" and "stays in REBALANCING" in given["error"]
    assert stopped["error"] is None
    joined, not_joined = stopped["error_candidates"]
    assert (joined["check"], joined["error"]) == ("unchecked-join", given["error"])
    assert (not_joined["verdict"], not_joined["error"]) == ("CORRUPT", None)


def _dumped(dump: str) -> list[tuple[str, ...]]:
    """The store entries an app's run printed (its STATE lines)."""
    return [tuple(ln.split("\t")[1:4]) for ln in dump.splitlines() if ln.startswith("STATE\t")]


def _counts(state: Iterable[tuple[str, ...]]) -> Counter[str]:
    """The ``counts`` store of an app's dump, by key."""
    return Counter({k: int(v) for s, k, v in state if s == "counts"})


def test_one_runbook_widens_both_sides_of_a_join_and_every_count_joins(
    kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 71: ``runbook --topic orders --topic customers`` copies both sides of the join
    (auto: the join's table store reads them directly), and a second app that counts the
    orders alone (its topology inferred) moves in the same procedure: each app stops, the
    topics are copied once, each is reset and restarted on the copies it reads.
    Executed, every count is its whole history's and every new order joins its customer,
    on 6 partitions."""
    app = _started(kafka, "join-rekey", "classic")
    other = StreamsApp(kafka, "count", shared_input=app.input, session_timeout_ms=10_000)
    other.state_dir = app.state_dir  # the state.dir both apps share on this host
    first, counted = app.run(), other.run()
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]
    assert Counter({k: int(v) for s, k, v in first.state if s == "counts"}) == joined_counts(
        phase1()
    )
    assert _counts(counted.state) == Counter(k for k, _ in phase1())
    topology = app.describe(tmp_path / "join-rekey.txt")
    args = ("runbook", "--application-id", other.app_id, "--topic", app.input, "--topic",
            app.table, "--to", "6", "--topology", f"{app.app_id}={topology}", "--format", "sh",
            "--state-dir", str(app.state_dir))  # fmt: skip
    # a plain group reads the orders too: this runbook would strand it, so it is refused
    # until the operator names it to move with the apps
    billing = kafka.unique("billing")
    consumer = read_as_group(kafka, app.input, billing, len(phase1()))
    refused = app.migcheck(*args, here=capsys)  # in this process: refused before any Spark
    consumer.close()
    assert refused.returncode == 1 and refused.stdout == "", refused.stderr
    assert refused.stderr.startswith(
        f"migcheck: refused: {app.input} is also read by {billing} ("
    ), refused.stderr
    assert (
        refused.stderr.count("\n") == 1
        and (
            f"and once its producers switch to {app.input}-p6 they read no new record; pass "
            "--group for each plain group (it moves with the app)"
        )
        in refused.stderr
    )
    p = app.migcheck(*args, "--group", billing)
    assert p.returncode == 0, p.stderr
    header = " ".join(ln.removeprefix("# ") for ln in p.stdout.splitlines() if ln[:2] == "# ")
    assert "strategy new-topic: it ends up reading" in header, header
    assert f"The plain groups {billing} move to {app.input}-p6 and" in header, header
    assert f"{app.app_id} and the apps {other.app_id} (each stops, the topics" in header
    pair = ", ".join(sorted((app.input, app.table)))
    assert f"Move together: {pair} (joined in sub-topology 0, from the --topology" in header
    copies = [ln for ln in p.stdout.splitlines() if ln.lstrip().startswith("run migcheck copy")]
    assert len(copies) == 4, p.stdout  # each side once, then its catch-up: for both apps
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")

    app.input, app.table = f"{app.input}-p6", f"{app.table}-p6"  # as the restart steps say
    other.input = app.input
    app.isolation_level = other.isolation_level = "read_committed"
    code, out, dumps = execute_yes_apps(script, [app, other], tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out and out.count("migcheck app: healthy") == 2, out
    counts = _counts(_dumped(dumps[app.app_id]))
    assert counts == joined_counts(phase1())  # the reprocess rebuilt every count
    assert _counts(_dumped(dumps[other.app_id])) == Counter(k for k, _ in phase1())

    # billing's consumers start on the copy, at their defaults: they read on from the
    # copy's end, where the runbook committed them
    moved = KafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=billing)
    subscribe_once_known(moved, app.input)
    later = [(k, f"s{j}") for j in range(3) for k in KEYS]  # each key's in order
    app.produce(app.input, later)  # the producers write on, into 6 partitions
    after, counted = app.run(), other.run()
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    assert _counts(after.state) == joined_counts(phase1() + later)  # no order unmatched
    assert _counts(counted.state) == Counter(k for k, _ in phase1() + later)
    read = read_records(moved, len(later))
    moved.close()
    assert Counter(read) == Counter(later)  # nothing of phase 1 again, nothing skipped
    for key in KEYS:
        assert [v for k, v in read if k == key] == ["s0", "s1", "s2"]
    internal = ("rekey-group-repartition", "counts-changelog")
    assert kafka.partition_counts(f"{app.app_id}-({'|'.join(internal)})") == {
        f"{app.app_id}-{t}": 6 for t in internal
    }


def test_a_set_whose_sides_two_clients_placed_apart_is_refused(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Issue 71: the customers written by kcat (librdkafka's consistent partitioner, CRC-32)
    and the orders by Kafka's Java producer (murmur2): each key's two sides sit on
    different partition numbers, so the join already misses them.  The runbook of the
    set reads both and refuses in one line naming each side's partitioner."""
    app = StreamsApp(kafka, "join-rekey")
    lines = "".join(f"{k}\tc{i}\n" for i, k in enumerate(KEYS))
    kcat = ["kcat", "-P", "-b", kafka.bootstrap, "-t", app.table, "-K", "\t",
            "-X", "topic.partitioner=consistent"]  # fmt: skip
    subprocess.run(kcat, input=lines, text=True, check=True, timeout=60)
    app.produce(app.input, phase1())
    assert app.run().code == 0
    topology = app.describe(tmp_path / "join-rekey.txt")
    p = app.migcheck("runbook", "--topic", app.input, "--topic", app.table, "--to", "6",
                     "--topology", str(topology))  # fmt: skip
    assert p.returncode == 1 and p.stdout == "", p.stderr
    assert p.stderr == (
        f"migcheck: refused: the producers of {app.app_id}'s co-partitioned topics place keys "
        f"by different partitioners ({app.input} by murmur2, {app.table} by "
        "consistent_random), so a key's records sit on different partition numbers and its "
        "join already misses them; widening would carry that over: move the producers to "
        "one partitioner first (migcheck analyze --full names each topic's)\n"
    )
