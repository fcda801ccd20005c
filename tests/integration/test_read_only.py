"""Read-only, proven for every command: a snapshot of the whole cluster before and after.

The snapshot is what Kafka's own tools say: every topic with its partition count and
config overrides (``kafka-topics --describe``), every group id (``kafka-consumer-groups
--list``), the application's committed offsets (``kafka-consumer-groups --describe
--offsets``), and every partition's end offset (``kafka-get-offsets``).  ``analyze``,
``app``, ``plan`` and ``runbook`` (generation, and its script without ``--execute``)
must leave it equal; ``copy`` may change only its destination's end offsets.

Other tests' groups are not stable ground: a killed app's members expire on their own,
its group rebalances (the tool then prints no offsets for it) and, with nothing
committed, disappears.  So no group may appear, and the application's own group, the
one the commands look at, must keep its offsets.  The broker's own logs
(``__consumer_offsets``, ``__transaction_state``) move by themselves and are left out.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, Kafka
from oracles import run_cli
from streamsapp import StreamsApp, ran_once

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _snapshot(kafka: Kafka, app_id: str) -> dict[str, str]:
    views = {
        "topics": ["kafka-topics", "--describe"],
        "group_ids": ["kafka-consumer-groups", "--list"],
        "groups": ["kafka-consumer-groups", "--describe", "--group", app_id, "--offsets"],
        "offsets": ["kafka-get-offsets"],
    }
    out = {}
    for name, (tool, *args) in views.items():
        rc, text, err = kafka.tool(tool, "--bootstrap-server", kafka.bootstrap, *args)
        assert rc == 0, err
        rows = [re.sub(r"\s+", " ", ln).strip() for ln in text.splitlines()]
        if name == "groups":
            # committed offsets (group, topic, partition, offset); lag is not ours to keep
            fields = [r.split(" ") for r in rows]
            rows = [" ".join(f[:4]) for f in fields if len(f) >= 4 and f[2].isdigit()]
            assert rows, f"{app_id} has no committed offsets to watch: {text}"
        # the broker's own logs (__consumer_offsets, __transaction_state) move by themselves
        # (--describe prints them as "Topic: __transaction_state ...")
        rows = [r for r in rows if r and not re.match(r"(Topic: )?__", r)]
        out[name] = "\n".join(sorted(rows))
    return out


def _assert_unchanged(before: dict[str, str], after: dict[str, str], who: str) -> None:
    """Equal views; of the group ids, only a new one counts (others' groups may die)."""
    born = set(after["group_ids"].splitlines()) - set(before["group_ids"].splitlines())
    assert not born, f"{who} created groups {born}"
    for view in ("topics", "groups", "offsets"):
        assert after[view] == before[view], f"{who} changed the cluster's {view}"


@pytest.fixture(scope="module")
def kafka(private_kafka: Kafka) -> Kafka:
    """The whole cluster is this module's: other tests (pytest-xdist's other worker) create
    topics and groups and move offsets on the shared broker while these run."""
    return private_kafka


@pytest.fixture(scope="module")
def app(kafka: Kafka) -> StreamsApp:
    return ran_once(kafka)


def test_every_command_leaves_the_cluster_as_it_was(
    kafka: Kafka, app: StreamsApp, tmp_path: Path
) -> None:
    into = kafka.create_topic("readonly-copy", 6)
    before = _snapshot(kafka, app.app_id)
    on_app = ["--bootstrap-server", kafka.bootstrap, "--application-id", app.app_id]
    changed = ["--topic", app.input, "--to", "6"]
    script = tmp_path / "runbook.sh"
    runs = [
        ["analyze", "--bootstrap-server", kafka.bootstrap, *changed, "--full"],
        ["analyze", "--bootstrap-server", kafka.bootstrap, *changed],
        ["app", *on_app, *changed, "--state", "--full"],
        ["plan", *on_app, "--to", f"{app.input}=6"],
        ["runbook", *on_app, *changed, "--output", str(tmp_path / "runbook.md")],
        ["runbook", *on_app, *changed, "--format", "sh", "--output", str(script)],
    ]
    for args in runs:
        r = run_cli(*args)
        assert r.returncode in (0, 1), f"{args[0]}: {r.stderr}"
        _assert_unchanged(before, _snapshot(kafka, app.app_id), f"migcheck {args[0]}")

    env = {**os.environ, "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool"}
    printed = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert printed.returncode == 0, printed.stderr
    _assert_unchanged(before, _snapshot(kafka, app.app_id), "the runbook script (no --execute)")
    said = printed.stdout.splitlines()  # and it says it was a dry run, first and last
    assert said[0].startswith("DRY RUN: nothing was changed") and said[-1] == said[0], said
    assert "Runbook complete" not in printed.stdout

    r = run_cli("copy", "--bootstrap-server", kafka.bootstrap, "--topic", app.input, "--into",
                into, "--checkpoint", str(tmp_path / "copy.json"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    after = _snapshot(kafka, app.app_id)
    _assert_unchanged(before, {**after, "offsets": before["offsets"]}, "migcheck copy")
    moved = set(after["offsets"].splitlines()) ^ set(before["offsets"].splitlines())
    assert moved and all(line.startswith(f"{into}:") for line in moved), moved


def test_app_and_plan_with_standbys_change_nothing(kafka: Kafka, app: StreamsApp) -> None:
    """``app`` without ``--state`` (the topology and group only) and ``plan`` with
    standbys asked for: the same snapshot before and after each."""
    before = _snapshot(kafka, app.app_id)
    live = ["--bootstrap-server", kafka.bootstrap, "--application-id", app.app_id]
    runs = [
        ["app", *live, "--topic", app.input, "--to", "6"],
        ["plan", *live, "--to", f"{app.input}=6", "--standby-replicas", "1"],
    ]
    for args in runs:
        r = run_cli(*args)
        assert r.returncode == 1, f"{args[0]}: {r.stdout} {r.stderr}"  # 1: the change crashes
        _assert_unchanged(before, _snapshot(kafka, app.app_id), f"migcheck {args[0]}")


def test_a_sampled_and_a_full_analyze_of_a_plain_topic_change_nothing(kafka: Kafka) -> None:
    """A topic no app reads, sampled in windows smaller than its partitions and scanned
    whole: the topics, the group ids and every end offset stay as they were."""
    topic = kafka.create_topic("readonly", 3)
    kafka.produce(topic, [(f"r{i}".encode(), 5, None) for i in range(500)])

    def snapshot() -> tuple[str, str, str]:
        views = [("kafka-consumer-groups", "--list"), ("kafka-topics", "--list"),
                 ("kafka-get-offsets",)]  # fmt: skip
        out = []
        for tool, *args in views:
            rc, text, err = kafka.tool(tool, "--bootstrap-server", kafka.bootstrap, *args)
            assert rc == 0, err
            out.append(text)
        return out[0], out[1], out[2]

    before = snapshot()
    for extra in (["--full"], ["--sample-per-partition", "50"]):
        r = run_cli("analyze", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
                    "--to", "4", "--format", "json", *extra)  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
    assert snapshot() == before
