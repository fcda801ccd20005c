"""migcheck against a Kafka 3.9 broker and its tools, as an operator still on 3.x runs them.

``scripts/kafka-local start --version 3.9.2`` runs the broker in a state directory of
its own (beside the session broker's), so the session's 4.x broker keeps running.  Keys
are placed by kcat (librdkafka's murmur2_random, Java's placement) and read back by kcat;
the expected moves come from kafka-python's murmur2 (``oracles.java_partition``), never
from migcheck.  The runbook's reset step is held to the real 3.9 reset tool, which knows
only ``--config-file`` (``tests/unit/test_reset_config_flag.py`` holds the pick to the
captured ``--help`` of 3.9.2, 4.1.1, 4.2.1 and 4.3.1).

The Streams fixture app runs as a Kafka Streams 3.9.2 client (compiled against 3.9.2's
jars, classic protocol, the only one 3.9 has) on that broker: the count app crashes after
the alter with the very text `migcheck app` quotes, and the runbook, executed with 3.9's
tools, leaves every count equal to the truth counted from the records produced.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafkatest import FIXTURE_SRC, KAFKA_LOCAL, REPO, Kafka, compile_fixture, state_dir
from oracles import java_partition
from runbookops import execute_yes
from streamsapp import StreamsApp, phase1, phase2

from migcheck.frameworks.kafka_streams import steps
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts
from migcheck.report.runbook import render_sh

pytestmark = pytest.mark.kafka

#: The 3.x release under test: the last 3.x line, the one operators upgrade from.
KAFKA_3 = "3.9.2"
UNIT_DATA = REPO / "tests" / "unit" / "data"


@dataclass(frozen=True)
class Broker:
    bootstrap: str
    env: dict[str, str]  # MIGCHECK_KAFKA_HOME: its state directory
    state: Path

    def local(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        """``scripts/kafka-local ARGS`` on this broker's state directory."""
        p = subprocess.run(
            [str(KAFKA_LOCAL), *args], input=stdin, capture_output=True, text=True,
            env=self.env, timeout=300, check=False,
        )  # fmt: skip
        return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def kafka3() -> Iterator[Broker]:
    """A Kafka 3.9 broker of this module's own, stopped at its end."""
    home = state_dir()
    state = home / f"kafka-{KAFKA_3}"
    env = {**os.environ, "MIGCHECK_KAFKA_HOME": str(state)}
    p = subprocess.run(
        [str(KAFKA_LOCAL), "start", "--version", KAFKA_3], capture_output=True, text=True,
        env=env, timeout=600, check=False,
    )  # fmt: skip
    if p.returncode != 0:
        pytest.fail(
            f"scripts/kafka-local start --version {KAFKA_3} failed (exit {p.returncode}): "
            f"{p.stderr.strip()[-3000:]}",
            pytrace=False,
        )
    broker = Broker(p.stdout.strip().splitlines()[-1], env, state)
    try:
        yield broker
    finally:
        broker.local("stop")


def test_the_broker_and_its_tools_are_kafka_3_9(kafka3: Broker) -> None:
    assert kafka3.local("version")[1].strip() == KAFKA_3
    # what the 3.9 storage tool wrote: the metadata version of the release itself
    assert "with metadata.version 3.9-IV0" in (kafka3.state / "format.log").read_text()
    rc, _, err = kafka3.local("tool", "kafka-streams-groups", "--bootstrap-server",
                              kafka3.bootstrap, "--list")  # fmt: skip
    assert rc == 2
    assert f"kafka-streams-groups does not exist in Kafka {KAFKA_3}" in err


def _kcat_fill(broker: Broker, topic: str, records: list[tuple[str, str]]) -> set[tuple[str, int]]:
    """Keyed records by kcat, placed as Java's producer does; (key, partition) read back."""
    subprocess.run(
        ["kcat", "-P", "-b", broker.bootstrap, "-t", topic, "-K", "\t",
         "-X", "topic.partitioner=murmur2_random"],
        input="".join(f"{k}\t{v}\n" for k, v in records), text=True, check=True, timeout=120,
    )  # fmt: skip
    out = subprocess.run(
        ["kcat", "-C", "-b", broker.bootstrap, "-t", topic, "-e", "-q", "-f", "%p\t%k\n"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    return {(k, int(p)) for p, k in (line.split("\t") for line in out.splitlines())}


def test_analyze_lists_exactly_the_keys_murmur2_moves(kafka3: Broker, tmp_path: Path) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    rc, out, err = kafka3.local("tool", "kafka-topics", "--bootstrap-server", kafka3.bootstrap,
                                "--create", "--topic", topic, "--partitions", "5",
                                "--replication-factor", "1")  # fmt: skip
    assert rc == 0 and "Created topic" in out, out + err
    records = [(f"user-{i % 400}", f"v{i}") for i in range(1000)]
    observed = _kcat_fill(kafka3, topic, records)
    assert len(observed) == 400
    assert all(p == java_partition(k.encode(), 5) for k, p in observed)  # placed as Java
    expected = {(k, p, java_partition(k.encode(), 8)) for k, p in observed}
    expected = {e for e in expected if e[1] != e[2]}

    moved_csv = tmp_path / "moved.csv"
    p = subprocess.run(
        [sys.executable, "-m", "migcheck", "analyze", "--bootstrap-server", kafka3.bootstrap,
         "--topic", topic, "--to", "8", "--full", "--format", "json",
         "--moved-keys-out", str(moved_csv)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode in (0, 1), p.stderr[-3000:]
    (t,) = json.loads(p.stdout)["topics"]
    assert t["partitioner"] == "murmur2" and t["conformance"] == 1.0
    assert t["records_scanned"] == 1000 and t["distinct_keys"] == 400
    (cand,) = t["candidates"]
    assert cand["moved_keys"] == len(expected)
    with moved_csv.open(encoding="utf-8") as f:
        listed = {(bytes.fromhex(r["key_hex"]).decode(), int(r["partition"]),
                   int(r["new_partition"])) for r in csv.DictReader(f)}  # fmt: skip
    assert listed == expected


def _reset_options(help_text: str) -> set[str]:
    """The options a reset tool's usage lists (a required one is marked "* --")."""
    lines = (ln.removeprefix("* ") for ln in help_text.splitlines())
    return {ln.split()[0] for ln in lines if ln.startswith("--")}


def test_the_runbook_passes_the_config_file_as_the_real_3_9_reset_tool_takes_it(
    kafka3: Broker, tmp_path: Path
) -> None:
    rc, out, err = kafka3.local("tool", "kafka-streams-application-reset", "--help")
    assert rc == 1 and out == ""  # the usage goes to stderr
    options = _reset_options(err)
    assert "--config-file" in options and "--command-config" not in options
    # the unit test's captured text is this tool's
    assert options == _reset_options((UNIT_DATA / f"streams-reset-help-{KAFKA_3}.txt").read_text())

    config = tmp_path / "client.properties"
    config.write_text("client.id=migcheck-runbook\n")
    facts = RunbookFacts(
        app_id=f"app-{uuid.uuid4().hex[:8]}", bootstrap=kafka3.bootstrap,
        command_config=str(config), topic=f"reset-{uuid.uuid4().hex[:8]}", partitions=2, to=4,
        new_topic="unused",
        strategy="in-place", protocol="classic", internal=(), expected_internal={},
        kind=ReaderKind.KAFKA_STREAMS,
    )  # fmt: skip
    rc, out, err = kafka3.local(
        "tool", "kafka-topics", "--bootstrap-server", kafka3.bootstrap, "--create", "--topic",
        facts.topic, "--partitions", "2",
    )  # fmt: skip
    assert rc == 0, out + err
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, steps(facts), "0", "now"), encoding="utf-8")
    reset = next(s for s in steps(facts) if s.title == "Reset the application")
    dry = reset.actions[1].argv
    assert "--dry-run" in dry and "--config-file" in dry
    sourced = (
        'args=("$@"); set --; source "$RUNBOOK" > /dev/null; reset_config_flag; '
        'echo "flag: $RESET_CONFIG_FLAG"; reset_tool "${args[@]}"'
    )
    p = subprocess.run(
        ["bash", "-c", sourced, "bash", *dry], capture_output=True, text=True, timeout=300,
        env={**kafka3.env, "RUNBOOK": str(script), "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
             "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")},
        check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "flag: --config-file"
    assert "takes --command-config" not in p.stdout
    assert "Dry run displays the actions" in p.stdout and "Done." in p.stdout
    assert "not a recognized option" not in p.stdout + p.stderr


class Kafka3(Kafka):
    """The 3.9 broker as the Streams helpers see a Kafka: its tools are 3.9's (kafka-local
    on its state directory), its Java producer and consumer 3.9 clients."""

    def __init__(self, broker: Broker, classpath: str) -> None:
        super().__init__(broker.bootstrap, compile_fixture(broker.state, FIXTURE_SRC, classpath),
                         None, state=broker.state)  # fmt: skip
        self.broker = broker
        self.classpath = classpath

    def tool(self, name: str, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        return self.broker.local("tool", name, *args, stdin=stdin)


@pytest.fixture(scope="module")
def kafka3_clients(kafka3: Broker) -> Iterator[Kafka3]:
    rc, out, err = kafka3.local("classpath")
    assert rc == 0, err
    classpath = out.strip().splitlines()[-1]
    jars = {Path(j).name for j in classpath.split(os.pathsep)}
    assert f"kafka-streams-{KAFKA_3}.jar" in jars and f"kafka-clients-{KAFKA_3}.jar" in jars
    clients = Kafka3(kafka3, classpath)
    try:
        yield clients
    finally:  # before the broker stops: its admin client must not outlive it
        clients.close()


def _app3(kafka: Kafka3, topology: str) -> StreamsApp:
    """The fixture app as a Kafka Streams 3.9 client, its state beside the 3.9 broker's.

    A 3.x member does not leave the group when it closes (its leaveGroup option removes
    static members only), so each run's member outlives it by its session timeout; the
    app sets 10 s (Kafka's default before 3.0) so that the next step waits 10 s, not 45."""
    app = StreamsApp(
        kafka, topology, classpath=kafka.classpath, home=kafka.broker.state,
        session_timeout_ms=10_000,
    )  # fmt: skip
    assert not any(f"-{v}.jar" in app.cp for v in ("4.0", "4.1", "4.2", "4.3"))
    return app


def _counts(state: list[tuple[str, str, str]]) -> dict[str, int]:
    return {k: int(v) for s, k, v in state if s == "counts"}


def test_the_3_9_count_app_crashes_with_the_text_migcheck_quotes(kafka3_clients: Kafka3) -> None:
    app = _app3(kafka3_clients, "count")
    app.produce(app.input, phase1())
    first = app.run()
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]
    assert _counts(first.state) == dict(Counter(k for k, _ in phase1()))

    def judged() -> tuple[int, dict]:
        p = app.migcheck("app", "--topic", app.input, "--to", "6", "--format", "json")
        assert p.returncode in (0, 1), p.stderr
        return p.returncode, json.loads(p.stdout)

    changelog = f"{app.app_id}-counts-changelog"
    rc, report = judged()  # before the alter: the prediction
    assert rc == 1 and report["verdict"] == "CRASH"
    error = report["candidates"][0]["error"]
    assert changelog in error
    assert "3.9" in report["candidates"][0]["error_releases"]  # it says whose words it quotes
    app.alter(app.input, 6)  # 3.9's kafka-topics
    _, report = judged()  # after it: the error the app will hit at its next rebalance
    (health,) = report["health"]
    assert health["level"] == "CRASH" and health["topics"] == [changelog]
    assert health["text"] == error

    app.produce(app.input, phase2())
    second = app.run()
    assert second.code == 3 and second.crash is not None, second.stderr[-2000:]
    # 3.9.2 words it as 4.3.1 does (FINDINGS.md, "Kafka 3.9 and 4.3")
    assert second.crash == (
        "org.apache.kafka.streams.errors.StreamsException: Existing internal topic "
        f"{changelog} has invalid partitions: expected: 6; actual: 3. Use "
        "'org.apache.kafka.tools.StreamsResetter' tool to clean up invalid topics before "
        "processing."
    )
    assert error in second.crash


def test_the_runbook_executed_on_3_9_leaves_every_count_right(
    kafka3_clients: Kafka3, tmp_path: Path
) -> None:
    kafka = kafka3_clients
    app = _app3(kafka, "rekey-count")
    app.produce(app.input, phase1())
    first = app.run()
    assert first.code == 0, first.stderr[-2000:]
    truth = Counter(v for _, v in phase1())
    assert _counts(first.state) == dict(truth)

    topology = app.describe(tmp_path / "topology.txt")
    p = app.migcheck(
        "runbook", "--topic", app.input, "--to", "6", "--topology", str(topology),
        "--format", "sh", "--state-dir", str(app.state_dir),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "--strategy auto chose in-place" in p.stdout
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")

    code, out, dump = execute_yes(script, app, tmp_path / "work", kafka.broker.env)
    assert code == 0, out
    assert "Runbook complete." in out and "migcheck app: healthy" in out
    assert "not a recognized option" not in out
    state = [tuple(ln.split("\t")[1:4]) for ln in dump.splitlines() if ln.startswith("STATE\t")]
    assert _counts(state) == dict(truth)  # type: ignore[arg-type]

    app.produce(app.input, phase2())
    after = app.run()
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    assert _counts(after.state) == dict(Counter(v for _, v in phase1() + phase2()))
    for internal in ("rekey-group-repartition", "counts-changelog"):
        assert kafka.partition_count(f"{app.app_id}-{internal}") == 6, internal
