"""migcheck against a Kafka 3.9 broker and its tools, as an operator still on 3.x runs them.

``scripts/kafka-local start --version 3.9.2`` runs the broker in a state directory of
its own (beside the session broker's), so the session's 4.x broker keeps running.  Keys
are placed by kcat (librdkafka's murmur2_random, Java's placement) and read back by kcat;
the expected moves come from kafka-python's murmur2 (``oracles.java_partition``), never
from migcheck.  The runbook's reset step is held to the real 3.9 reset tool, which knows
only ``--config-file`` (``tests/unit/test_reset_config_flag.py`` holds the pick to the
captured ``--help`` of 3.9.2, 4.1.1, 4.2.1 and 4.3.1).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, REPO
from oracles import java_partition

from migcheck.model.runbook import RunbookFacts
from migcheck.report.runbook import render_sh
from migcheck.streams.steps import steps

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
    home = Path(os.environ.get("MIGCHECK_KAFKA_HOME", REPO / ".kafka-local"))
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
