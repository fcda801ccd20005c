"""Quix Streams apps judged by `migcheck app`, and borne out by the real framework.

The app is fixtures/quix/counter.py on quixstreams from PyPI (tests/support/quixapp.py),
counting the 799 records of FINDINGS.md's scenario on a 3-partition input placed by
Kafka's Java producer (murmur2, as Quix's own producer places keys).  Expected outcomes
are the app's: its crash on stderr, the counts it emits, against counts computed from the
records produced; and kafka-python's murmur2 for the keys that move.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from quixapp import QuixApp, QuixRun, true_counts, until_counted
from runbookops import plain_tools, run_script
from streamsapp import KEYS, moved_keys, phase1, phase2

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.usefixtures("on_connect_server")]


def _app_report(app: QuixApp, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "app.json"
    r = run_cli("app", "--bootstrap-server", app.kafka.bootstrap, "--application-id", app.group,
                "--topic", app.input, "--to", "6", "--format", "json", "--output", str(out),
                *extra)  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(out.read_text(encoding="utf-8"))


def _alter(app: QuixApp, partitions: int = 6) -> None:
    rc, out, err = app.kafka.tool("kafka-topics", "--bootstrap-server", app.kafka.bootstrap,
                                  "--alter", "--topic", app.input, "--partitions",
                                  str(partitions))  # fmt: skip
    assert rc == 0, out + err


def test_a_quix_app_with_a_changelog_is_judged_crash_and_quix_refuses_to_start(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = QuixApp(kafka)
    app.produce(phase1())
    first = app.run()
    assert first.code == 0, first.stderr[-3000:]
    assert first.last() == true_counts(phase1())  # the real app counts right today

    rc, report = _app_report(app, tmp_path)
    assert (rc, report["verdict"], report["framework"]) == (1, "CRASH", "quix-streams")
    (cand,) = report["candidates"]
    assert app.changelog_topic in cand["error"]
    assert cand["error_releases"] == "Quix Streams 3.14 to 3.28"
    # the clean-up Quix's error leads to starts the app but splits the moved keys'
    # history: borne out by test_the_obvious_in_place_fix_splits_exactly_...
    assert cand["after_cleanup"].startswith("CORRUPT after the clean-up")
    assert f"{app.input}--default read {app.input} directly" in cand["after_cleanup"]
    assert {t["topic"]: t["role"] for t in report["topics"]}[app.changelog_topic] == "changelog"
    # --framework cannot overrule what the evidence shows
    r = run_cli("app", "--bootstrap-server", kafka.bootstrap, "--application-id", app.group,
                "--topic", app.input, "--to", "6", "--framework", "ksqldb")  # fmt: skip
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "is a Quix Streams application" in r.stderr and "not a ksqlDB query" in r.stderr

    _alter(app)
    app.produce(phase2())
    second = app.run()
    assert second.code != 0, "Quix started on a changelog of the old count"
    # the real framework's words are the ones migcheck quoted
    assert cand["error"] in second.stderr, second.stderr[-3000:]


def test_a_quix_app_without_changelogs_splits_exactly_the_moved_keys(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = QuixApp(kafka, changelog=False)
    app.produce(phase1())
    assert app.run().code == 0
    moved_csv = tmp_path / "moved.csv"
    # a stopped group without changelogs looks like any consumer group: the user says it
    rc, report = _app_report(app, tmp_path, "--framework", "quix-streams", "--state", "--full",
                             "--moved-keys-out", str(moved_csv))  # fmt: skip
    assert (rc, report["verdict"]) == (1, "CORRUPT")
    assert "use_changelog_topics=False" in report["candidates"][0]["reasons"][0]["text"]

    _alter(app)
    app.produce(phase2())
    second = app.run()
    assert second.code == 0, second.stderr[-3000:]
    truth = true_counts(phase1() + phase2())
    wrong = {k for k, n in second.last().items() if n != truth[k]}
    with moved_csv.open(encoding="utf-8") as f:
        listed = {bytes.fromhex(r["key_hex"]).decode() for r in csv.DictReader(f)
                  if r["candidate_partitions"] == "6"}  # fmt: skip
    assert wrong == listed == moved_keys(3, 6)


def test_a_running_quix_app_fails_at_its_next_metadata_refresh(kafka: Kafka) -> None:
    """The running case, its metadata refresh made short (3 s, for 5 min by default)."""
    app = QuixApp(kafka)
    app.produce(phase1())
    proc = app.start(refresh_ms=3000)
    try:
        until_counted(proc, len(phase1()))  # started, recovered, counted
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        _alter(app)
        app.produce(phase2())
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=90)  # its crash, at its next metadata refresh
    finally:
        ran = QuixApp.stop(proc)
    assert ran.code != 0, "the running app went on after the alter"
    assert "PartitionAssignmentError" in ran.stderr, ran.stderr[-3000:]


def _runbook(app: QuixApp, tmp_path: Path, fmt: str, *extra: str) -> tuple[int, Path, str]:
    out = tmp_path / f"runbook.{fmt}"
    r = run_cli("runbook", "--bootstrap-server", app.kafka.bootstrap, "--application-id",
                app.group, "--topic", app.input, "--to", "6", "--state-dir", str(app.state),
                "--lag-timeout", "120", "--format", fmt, "--output", str(out),
                *extra)  # fmt: skip
    return r.returncode, out, r.stderr


def _execute(script: Path, app: QuixApp, produce: tuple[str, list[tuple[str, str]]],
             topic: str, work: Path) -> tuple[int, str, QuixRun]:  # fmt: skip
    """Run the script as an operator: at the producers' switch (or, in place, before the
    restart) the producers write ``produce`` (topic, records); at the restart the real
    app starts on ``topic`` with Quix's default auto_offset_reset, latest."""
    started: list = []

    def operator(line: str) -> bool:
        if "Switch every producer" in line or (
            "Start the application" in line and produce[0] == app.input
        ):
            app.kafka.produce(produce[0], [(k.encode(), v.encode(), None) for k, v in produce[1]])
        if "Start the application" in line:
            # No idle stop: the app runs until stop() SIGTERMs it, as a deployment's does.
            # An idle stop raced that SIGTERM: one landing after Python's finalization had
            # put SIGTERM's default action back killed the app (exit -15, issue 52).
            started.append(app.start(topic=topic, offset_reset="latest"))
        return True

    env = {**os.environ, **plain_tools(), "MIGCHECK_RUNBOOK_DIR": str(work)}
    code, output = run_script(script, env, operator, timeout=600)
    assert len(started) == 1, output
    return code, output, QuixApp.stop(started[0], timeout=120)


def test_the_quix_runbook_executed_leaves_every_count_true(kafka: Kafka, tmp_path: Path) -> None:
    """New topic: copy, wipe, commit the start, restart, delete the old changelog."""
    app = QuixApp(kafka)
    app.produce(phase1())
    assert app.run().code == 0
    rc, md, err = _runbook(app, tmp_path, "markdown")
    assert rc == 0, err
    text = md.read_text(encoding="utf-8")
    assert "Quix Streams application" in text and "Application.clear\\_state()" in text
    new = f"{app.input}-p6"
    rc, script, err = _runbook(app, tmp_path, "sh")
    assert rc == 0, err

    code, output, ran = _execute(script, app, (new, phase2()), new, tmp_path / "work")
    assert code == 0, output
    assert ran.code == 0, ran.stderr[-3000:]
    # every key's last count is its true count over both phases (the app's own output)
    assert ran.last() == true_counts(phase1() + phase2())
    rc, out, _ = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    assert app.changelog_topic not in out.split(), "the old changelog was left behind"
    changelog = f"changelog__{app.group}--{new}--default"
    assert kafka.partition_count(changelog) == 6


def test_the_obvious_in_place_fix_splits_exactly_the_keys_the_refusal_lists(
    kafka: Kafka, tmp_path: Path
) -> None:
    """In place (alter, clear the state, delete the changelog, back to the start): the
    keys the runbook refuses to split are exactly those whose counts go wrong."""
    app = QuixApp(kafka)
    app.produce(phase1())
    assert app.run().code == 0
    rc, refusal, _ = _runbook(app, tmp_path, "markdown", "--strategy", "in-place")
    assert rc == 1
    listed = {ln.strip() for ln in refusal.read_text(encoding="utf-8").splitlines()} & set(KEYS)
    assert listed == moved_keys(3, 6)

    rc, script, err = _runbook(app, tmp_path, "sh", "--strategy", "in-place",
                               "--accept-split-history")  # fmt: skip
    assert rc == 0, err
    code, output, ran = _execute(script, app, (app.input, phase2()), app.input, tmp_path / "work")
    assert code == 0, output
    assert ran.code == 0, ran.stderr[-3000:]  # Quix starts: its changelog was recreated
    truth = true_counts(phase1() + phase2())
    wrong = {k for k, n in ran.last().items() if n != truth[k]}
    assert wrong == listed
