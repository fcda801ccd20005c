"""Quix Streams apps judged by `migcheck app`, and borne out by the real framework.

The app is fixtures/quix/counter.py on quixstreams from PyPI (tests/support/quixapp.py),
counting the 799 records of FINDINGS.md's scenario on a 3-partition input placed by
Kafka's Java producer (murmur2, as Quix's own producer places keys).  Expected outcomes
are the app's: its crash on stderr, the counts it emits, against counts computed from the
records produced; and kafka-python's murmur2 for the keys that move.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from quixapp import QuixApp, true_counts
from streamsapp import moved_keys, phase1, phase2

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


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
    assert {t["topic"]: t["role"] for t in report["topics"]}[app.changelog_topic] == "changelog"
    # the Kafka Streams runbook is not a Quix app's: refused in one line
    r = run_cli("runbook", "--bootstrap-server", kafka.bootstrap, "--application-id", app.group,
                "--topic", app.input, "--to", "6")  # fmt: skip
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "is a Quix Streams application" in r.stderr
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
        time.sleep(15)  # started, recovered, counted
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        _alter(app)
        app.produce(phase2())
        deadline = time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(1)
    finally:
        ran = QuixApp.stop(proc)
    assert ran.code != 0, "the running app went on after the alter"
    assert "PartitionAssignmentError" in ran.stderr, ran.stderr[-3000:]
