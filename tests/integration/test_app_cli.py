"""`migcheck app` (and `migcheck plan` live) as a user runs it: bad input, saved reports,
Markdown, read-only, and the figures of a real app that has run once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from streamsapp import KEYS, StreamsApp, moved_keys, ran_once

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def count_app(kafka: Kafka) -> StreamsApp:
    """One real count-per-key app that has run once: 3 partitions and its changelog."""
    return ran_once(kafka)


def _app(app: StreamsApp, *args: str):
    return run_cli(
        "app", "--bootstrap-server", app.kafka.bootstrap, "--application-id", app.app_id, *args
    )


def _one_line_error(p, *words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("migcheck: error: ") and "Traceback" not in p.stderr
    for word in words:
        assert word in p.stderr, p.stderr


def test_bad_input_is_one_line_and_exit_2(count_app: StreamsApp, tmp_path: Path) -> None:
    topic = count_app.input
    _one_line_error(_app(count_app, "--topic", topic, "--to", "2"), "below the current 3")
    _one_line_error(_app(count_app, "--topic", "no-such-topic", "--to", "6"), "does not exist")
    other = count_app.kafka.create_topic("unrelated", 3)
    _one_line_error(_app(count_app, "--topic", other, "--to", "6"), "is not read by application")
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "Topologies:\n   Sub-topology: 0\n    Spout: x (topics: [a])\n", encoding="utf-8"
    )
    _one_line_error(
        _app(count_app, "--topology", str(bad), "--topic", topic, "--to", "6"), "line 3"
    )
    p = run_cli(
        "app",
        "--bootstrap-server",
        count_app.kafka.bootstrap,
        "--application-id",
        "nobody",
        "--topic",
        topic,
        "--to",
        "6",
    )
    _one_line_error(p, "no stream processor's application 'nobody'")


def test_saved_report_renders_again(count_app: StreamsApp, tmp_path: Path) -> None:
    saved = tmp_path / "app.json"
    p = _app(
        count_app,
        "--topic",
        count_app.input,
        "--to",
        "6,3",
        "--format",
        "json",
        "--output",
        str(saved),
    )
    assert p.returncode == 1, p.stderr
    report = json.loads(saved.read_text(encoding="utf-8"))
    assert [c["verdict"] for c in report["candidates"]] == ["CRASH", "SAFE"]  # 3 is no change
    assert report["verdict"] == "CRASH"  # the largest candidate's
    md = run_cli("render", str(saved), "--format", "markdown")
    assert md.returncode == 0, md.stderr
    changelog = f"{count_app.app_id}-counts-changelog"
    assert md.stdout.startswith(f"# migcheck app: {count_app.app_id}")  # no Markdown specials
    assert f"Existing internal topic {changelog} has invalid partitions" in md.stdout
    text = run_cli("render", str(saved), "--format", "text")
    assert "Verdict: CRASH" in text.stdout and "6 partitions: CRASH" in text.stdout


def _offsets(kafka: Kafka, topic: str, time: str) -> int:
    """The sum over partitions of an offset, by Kafka's own kafka-get-offsets."""
    rc, out, err = kafka.tool(
        "kafka-get-offsets", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--time", time
    )
    assert rc == 0, err
    return sum(int(line.rsplit(":", 1)[1]) for line in out.split())


def test_plan_of_a_stopped_app_with_standbys(count_app: StreamsApp) -> None:
    kafka = count_app.kafka
    changelog = f"{count_app.app_id}-counts-changelog"
    records = _offsets(kafka, changelog, "-1") - _offsets(kafka, changelog, "-2")
    p = run_cli(
        "plan",
        "--bootstrap-server",
        kafka.bootstrap,
        "--application-id",
        count_app.app_id,
        "--instances",
        "2",
        "--standby-replicas",
        "1",
        "--format",
        "json",
    )
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["assignment"] == "predicted" and plan["members"][0]["tasks"] is None
    assert "has no member" in plan["notes"][-1]
    assert (plan["tasks"], plan["threads"], plan["tasks_per_instance"]) == (3, 2, [2, 1])
    assert plan["standby"]["tasks"] == 3  # one standby of each of the 3 stateful tasks
    assert plan["standby"]["restore_records"] == records > 0


def test_state_of_a_logged_store(count_app: StreamsApp) -> None:
    p = _app(
        count_app, "--topic", count_app.input, "--to", "6", "--state", "--full", "--format", "json"
    )
    assert p.returncode == 1, p.stderr
    (store,) = json.loads(p.stdout)["candidates"][0]["stores"]
    changelog = f"{count_app.app_id}-counts-changelog"
    assert (store["store"], store["logged"], store["analyzed_topic"]) == ("counts", True, changelog)
    assert (store["partitions"], store["new_partitions"]) == (3, 6)
    assert store["moved_keys"] == len(moved_keys(3, 6))  # one live entry per key
    assert store["restore_records"] == len(KEYS)


def test_an_app_yet_to_run_reads_what_its_topology_says(kafka: Kafka, tmp_path: Path) -> None:
    """No group yet, only its changelog: the app is what its --topology says, for ``app``
    and ``runbook`` alike (the runbook once refused the topic the topology reads: found
    by bench-scan's (s3))."""
    topic = kafka.create_topic("yet-to-run", 3)
    kafka.produce(topic, [(f"k{i}".encode(), b"v", None) for i in range(50)])
    describe = Path(__file__).parents[2] / "fixtures" / "java" / "streams" / "describe"
    topology = tmp_path / "count.txt"
    topology.write_text((describe / "count.txt").read_text().replace("[orders]", f"[{topic}]"))
    app_id = kafka.unique("not-yet-run")
    code, _, err = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--create",
                              "--topic", f"{app_id}-counts-changelog", "--partitions", "3",
                              "--config", "cleanup.policy=compact")  # fmt: skip
    assert code == 0, err  # as Kafka Streams creates it, before its group commits
    given = ("--bootstrap-server", kafka.bootstrap, "--application-id", app_id,
             "--topology", str(topology), "--topic", topic, "--to", "6")  # fmt: skip
    app = run_cli("app", *given, "--format", "json")
    assert app.returncode in (0, 1), app.stderr
    runbook = run_cli("runbook", *given, "--output", str(tmp_path / "runbook.md"))
    assert runbook.returncode == 0, runbook.stderr
    assert topic in (tmp_path / "runbook.md").read_text()
