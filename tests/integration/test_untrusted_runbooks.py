"""Hostile group ids on a real broker: the runbook written for them runs only its own steps.

Each group id below committed offsets on a topic (kafka-python, with the group's id as
the cluster stores it).  ``migcheck runbook`` finds them by those offsets and writes the
script; the script is run as an operator runs it, in an empty directory: first the dry
run, then ``--execute --yes`` against the broker with Kafka's own tools.  Every id holds
a payload that would ``touch`` a file there if any of it ran.  The broker is the oracle
for the rest: the topic really has its new count, and Kafka's tools found every group.
The issue's own id, newlines and all, is refused in one line, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
from kafkatest import KAFKA_LOCAL, Kafka
from oracles import run_cli

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]

#: Group ids a runbook passes on (nothing hidden in them), each with a payload.
HOSTILE = [
    "bars-inj $(touch pwned-sub)`touch pwned-bt`'\";touch pwned-semi;# <img src=x>",
    "--bootstrap-server=evil:1 ; touch pwned-opt",
    "two  spaces \\n and a backslash $HOME",
    "grüße ω [x](https://evil.example) www.evil.example @admin",
    "-x",
    "%2F..%2F",
]  # fmt: skip
ISSUE_ID = (
    "bars-inj\ntouch pwned-nl\n$(touch pwned-sub)`touch pwned-bt`'\";touch pwned-semi;# "
    "<img src=x onerror=alert(1)>"
)


def _commit(kafka: Kafka, topic: str, group: str, partitions: int) -> None:
    """Commit the end offsets of ``topic`` for ``group``: lag 0, no member."""
    consumer = KafkaConsumer(
        bootstrap_servers=kafka.bootstrap, group_id=group, enable_auto_commit=False
    )
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = consumer.end_offsets(tps)
        consumer.commit({tp: OffsetAndMetadata(ends[tp], "", -1) for tp in tps})
    finally:
        consumer.close()


def _pwned(where: Path) -> list[str]:
    return sorted(str(p.relative_to(where)) for p in where.rglob("pwned*"))


def test_a_runbook_for_hostile_groups_runs_only_its_own_steps(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("hostile", 3)
    kafka.produce(topic, [(f"k{i}".encode(), b"v", None) for i in range(30)])
    for group in HOSTILE:
        _commit(kafka, topic, group, 3)
    sandbox = tmp_path / "operator"
    sandbox.mkdir()
    base = ["runbook", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to", "6"]
    script = tmp_path / "rb.sh"
    p = run_cli(*base, "--format", "sh", "--output", str(script))
    assert p.returncode == 0, p.stderr
    md = run_cli(*base, "--format", "markdown")
    assert md.returncode == 0, md.stderr
    html = cmarkgfm.github_flavored_markdown_to_html(md.stdout, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and "<a " not in html  # no element, no link from an id

    env = {**os.environ, "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.pop("MIGCHECK_RUNBOOK_DIR", None)  # the default work directory: in the sandbox
    dry = subprocess.run(["bash", str(script)], cwd=sandbox, env=env, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert list(sandbox.iterdir()) == []  # a dry run writes nothing, and ran nothing
    assert dry.stdout.rstrip().endswith("DRY RUN: nothing was changed. Run it again with "
                                        "--execute to make the change.")  # fmt: skip

    run = subprocess.run(["bash", str(script), "--execute", "--yes"], cwd=sandbox, env=env,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert _pwned(sandbox) == [] and _pwned(tmp_path) == []
    assert kafka.partition_count(topic) == 6
    (work,) = sandbox.iterdir()  # the one work directory, named after the topic
    assert work.name == f"migcheck-runbook-{topic}-p6"
    for group in HOSTILE:  # Kafka's tools found each group by its id, lag 0
        assert f"  {group}: members 0, lag 0 on {topic}" in run.stdout


def test_a_group_id_with_newlines_is_refused_in_one_line(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("hostile-nl", 3)
    _commit(kafka, topic, ISSUE_ID, 3)
    base = ["runbook", "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to", "6"]
    for extra in ([], ["--group", ISSUE_ID]):
        p = run_cli(*base, *extra, "--format", "sh", "--output", str(tmp_path / "rb.sh"))
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr.count("\n") == 1, p.stderr
        assert p.stderr.startswith(
            "migcheck: error: refused: the group id 'bars-inj\\ntouch pwned-nl\\n$(touch"
        )
        assert not (tmp_path / "rb.sh").exists()
    assert _pwned(tmp_path) == [] and _pwned(Path.cwd()) == []
