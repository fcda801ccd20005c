"""Faust apps judged by `migcheck app`, and borne out by the real framework.

The app is fixtures/faust/counter.py on faust-streaming from PyPI
(tests/support/faustapp.py): a table counting per key, with Faust's RocksDB store, on
FINDINGS.md's scenario (799 records of 400 keys on a 3-partition input placed by Kafka's
Java producer).  Expected outcomes are the app's: its errors on stderr, the counts it
prints, against counts computed from the records produced; and kafka-python's murmur2
for the keys that move.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from faustapp import FaustApp, true_counts
from kafkatest import Kafka
from oracles import run_cli
from runbookops import plain_tools, run_script
from streamsapp import moved_keys, phase1, phase2
from trimming import offsets, trim

from migcheck.cli import main

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]


def _here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``migcheck ARGS`` run by the real CLI in this process on the test session's Spark
    (the ``spark`` fixture), as test_copy runs its copies: as a process, a command that
    reads with Spark started one of its own (a JVM and its Python workers), and beside a
    load ``app --state --full`` took 133 s, and each refused runbook (which detects the
    changelog's partitioner) 113 and 160 s.  Spark's own output stays out of stderr."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), exit_.value.code, out, err)


def _runbook_here(
    capsys: pytest.CaptureFixture[str], app: FaustApp, script: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``migcheck runbook`` for ``app`` at 6 partitions, in this process (:func:`_here`)."""
    return _here(capsys, "runbook", "--bootstrap-server", app.kafka.bootstrap,
                 "--application-id", app.app_id, "--topic", app.input, "--to", "6",
                 "--state-dir", str(app.data), "--format", "sh", "--output", str(script),
                 *extra)  # fmt: skip


def _app_report(
    capsys: pytest.CaptureFixture[str], app: FaustApp, tmp_path: Path, *extra: str
) -> tuple[int, dict]:
    out = tmp_path / "app.json"
    r = _here(capsys, "app", "--bootstrap-server", app.kafka.bootstrap, "--application-id",
              app.app_id, "--topic", app.input, "--to", "6", "--format", "json",
              "--output", str(out), *extra)  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(out.read_text(encoding="utf-8"))


def _alter(app: FaustApp, partitions: int = 6, topic: str | None = None) -> None:
    rc, out, err = app.kafka.tool("kafka-topics", "--bootstrap-server", app.kafka.bootstrap,
                                  "--alter", "--topic", topic or app.input, "--partitions",
                                  str(partitions))  # fmt: skip
    assert rc == 0, out + err


@pytest.mark.spark
def test_a_stopped_faust_app_is_judged_crash_and_its_table_fails_at_the_first_write(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Also, on the same run, issue 70 item 4: once retention deleted what it counted,
    the runbook refuses to move its table, in one line saying why, before any script
    exists."""
    app = FaustApp(kafka)
    app.produce(phase1())
    first = app.run_until(tmp_path / "first", len(phase1()))
    assert first.code == 0, first.stderr[-3000:]
    assert first.last() == true_counts(phase1())  # the real app counts right today

    rc, report = _app_report(capsys, app, tmp_path)
    assert (rc, report["verdict"], report["framework"]) == (1, "CRASH", "faust")
    (cand,) = report["candidates"]
    assert cand["error"].startswith("faust.exceptions.PartitionsMismatch: The source topic ")
    assert repr(app.changelog_topic) in cand["error"] and repr(app.input) in cand["error"]
    assert cand["error_releases"] == "faust-streaming 0.1 to 0.15"
    roles = {t["topic"]: t["role"] for t in report["topics"]}
    assert roles == {app.input: "source", app.changelog_topic: "changelog"}
    _faust_move_refused(app, tmp_path, capsys)
    _alter(app)
    app.produce(phase2())
    second = app.run(idle=4)
    # the real framework's words are the ones migcheck quoted, at the first table write
    assert cand["error"] in second.stderr, second.stderr[-3000:]
    assert second.counts == [], "a table write passed Faust's check after the alter"
    # the worker runs on: its supervisor restarts the agent, which crashes again, and each
    # record it crashed on is committed, never counted
    assert second.stderr.count("Crashed reason=PartitionsMismatch") >= 2, second.stderr[-3000:]
    assert app.committed() > len(phase1())


def _faust_move_refused(app: FaustApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The input trimmed to its ends: auto does not pick move-state and refuses the
    reprocess of the trimmed source without naming the move; move-state asked is refused
    in one line saying why Faust's tables are not moved (their workers restarted under
    exactly_once, which a real worker did not hold under load: docs/runbooks.md)."""
    kafka, app_id = app.kafka, re.escape(app.app_id)
    trim(kafka, app.input, offsets(kafka, app.input, "-1"), tmp_path / "delete.json")
    for asked, code, refused in (
        ((), 1, f"refused: --strategy new-topic would rebuild the state of {app_id} by "
         r"reprocessing .*; keep the whole history, or pass --accept-lost-history to "
         "reprocess without them"),
        (("--strategy", "move-state"), 2, f"error: --strategy move-state: {app_id} is a "
         "Faust application: its moved tables need the restarted workers under "
         r"processing_guarantee='exactly_once' \(the copy's transaction markers\), and a "
         r"real worker under it \(faust-streaming 0.15.3, aiokafka 0.14.0\) read a record "
         "twice or never in 3 of 10 runs beside a CPU load, so the move is not offered; "
         "keep the whole history and use another --strategy"),
    ):  # fmt: skip
        script = tmp_path / "refused.sh"
        r = _runbook_here(capsys, app, script, *asked)
        assert r.returncode == code and not script.exists(), r.stderr
        (line,) = [x for x in r.stderr.splitlines() if x.startswith("migcheck: ")]
        assert "Traceback" not in r.stderr, r.stderr
        assert re.fullmatch("migcheck: " + refused, line), line
        assert asked or "move-state" not in line, line


@pytest.mark.spark
def test_a_faust_changelog_widened_with_its_topic_is_judged_corrupt_and_miscounts_the_moved_keys(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Faust's error says to give the topics the same count: widened together, the check
    passes, and each moved key's state stays in its old partition's RocksDB store."""
    app = FaustApp(kafka)
    app.produce(phase1())
    assert app.run_until(tmp_path / "first", len(phase1())).last() == true_counts(phase1())
    rc, report = _app_report(capsys, app, tmp_path, "--topic", app.changelog_topic)
    assert (rc, report["verdict"]) == (1, "CORRUPT")
    (reason,) = report["candidates"][0]["reasons"]
    assert reason["stores"] == ["counts"] and "already has the new count" in reason["text"]

    _alter(app)
    _alter(app, topic=app.changelog_topic)
    app.produce(phase2())
    second = app.run_until(tmp_path / "second", len(phase2()))
    assert second.code == 0, second.stderr[-3000:]
    truth = true_counts(phase1() + phase2())
    wrong = {k for k, n in second.last().items() if n != truth[k]}
    assert wrong == moved_keys(3, 6)  # Java's murmur2 moves them; each counted from nothing
    assert all(second.last()[k] == true_counts(phase2())[k] for k in wrong)


@pytest.mark.spark
def test_a_faust_worker_running_through_the_alter_miscounts_the_moved_keys_then_dies(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The running case, the worker's metadata refresh made short (3 s, for 5 min by
    default): its RocksDB store keeps each partition's keys apart, so a moved key is
    counted from nothing in its new partition, until the changelog write fails."""
    app = FaustApp(kafka)
    app.produce(phase1())
    worker = app.start(tmp_path / "worker", refresh_ms=3000)
    try:
        worker.wait(len(phase1()))
        assert worker.counted() and dict(worker.counted()) == true_counts(phase1())
        moved_csv = tmp_path / "moved.csv"
        rc, report = _app_report(capsys, app, tmp_path, "--state", "--full", "--moved-keys-out",
                                 str(moved_csv))  # fmt: skip
        assert (rc, report["verdict"], report["group"]["members"]) == (1, "CRASH", 1)
        assert "Unrecognized partition" in report["candidates"][0]["error_when"]

        _alter(app)
        # its metadata refresh (3 s), then a rebalance onto the six partitions: records
        # produced before it, on a new partition, could be skipped (run I: the worker
        # counted the old partitions' records and ran on), so the producer waits for it
        assert worker.logged(["{0-5}", "Worker ready"], timeout=120)
        app.produce(phase2())
        # a moved key's changelog write: seconds on a quiet machine, more under the
        # suite's three workers (run U)
        exited = worker.exited(timeout=150)
    finally:
        ran = worker.stop()
    assert exited and ran.code != 0, (
        f"the running worker went on after the alter: {ran.stderr[-3000:]}"
    )
    assert "AssertionError: Unrecognized partition" in ran.stderr, ran.stderr[-3000:]

    moved = moved_keys(3, 6)
    with moved_csv.open(encoding="utf-8") as f:
        listed = {bytes.fromhex(r["key_hex"]).decode() for r in csv.DictReader(f)
                  if r["candidate_partitions"] == "6"}  # fmt: skip
    assert listed == moved
    before = true_counts(phase1())
    seen: dict[str, int] = {}
    wrong: set[str] = set()
    for key, n in ran.counts[len(phase1()) :]:  # each count printed after the alter
        seen[key] = seen.get(key, 0) + 1  # this key's records so far, not in the end
        assert n == (seen[key] if key in moved else before[key] + seen[key]), (key, n)
        if n != before[key] + seen[key]:
            wrong.add(key)
    assert wrong and wrong <= moved  # the moved keys it reached, counted from nothing


def test_the_faust_runbook_executed_leaves_every_count_true(kafka: Kafka, tmp_path: Path) -> None:
    """New topic (auto: a Faust table's state cannot be seen to stay clear of the topic):
    copy, wipe the datadir, delete the changelog, commit the start, restart on the new
    topic with its count, under processing_guarantee='exactly_once' as the runbook says.
    The real worker then counts every key right over both phases, and Faust created the
    changelog again with 6 partitions."""
    app = FaustApp(kafka)
    app.produce(phase1())
    first = app.run_until(tmp_path / "first", len(phase1()))
    assert first.code == 0 and first.last() == true_counts(phase1()), first.stderr[-3000:]
    new = f"{app.input}-p6"
    script = tmp_path / "runbook.sh"
    r = run_cli("runbook", "--bootstrap-server", kafka.bootstrap, "--application-id",
                app.app_id, "--topic", app.input, "--to", "6", "--state-dir", str(app.data),
                "--lag-timeout", "120", "--format", "sh", "--output", str(script))  # fmt: skip
    assert r.returncode == 0, r.stderr
    started = []

    def operator(line: str) -> bool:
        if "Switch every producer" in line:
            kafka.produce(new, [(k.encode(), v.encode(), None) for k, v in phase2()])
        if "Start every worker" in line:
            # the runbook names the only way Faust reads committed records only
            assert "processing_guarantee='exactly_once'" in line
            started.append(
                app.start(tmp_path / "worker", topic=new, partitions=6, guarantee="exactly_once")
            )
        return True

    env = {**os.environ, **plain_tools(), "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    try:
        code, output = run_script(script, env, operator, timeout=600)
    finally:
        ran = [worker.stop() for worker in started]
    assert code == 0, output
    assert len(ran) == 1 and ran[0].code == 0, ran and ran[0].stderr[-3000:]
    # every key's last count is its true count over both phases (the app's own output)
    assert ran[0].last() == true_counts(phase1() + phase2())
    assert kafka.partition_count(app.changelog_topic) == 6
