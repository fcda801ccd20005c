"""Retention's work done at once, and what Kafka's own tools say of offsets: the helpers
of the tests on a trimmed history (tests/integration/test_runbook_lost_history.py and
test_runbook_move_state.py)."""

from __future__ import annotations

import json
from pathlib import Path

from kafkatest import Kafka


def offsets(kafka: Kafka, topic: str, time: str) -> dict[int, int]:
    """Each partition's offset by Kafka's own kafka-get-offsets (-1 end, -2 log start)."""
    rc, out, err = kafka.tool(
        "kafka-get-offsets", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
        "--time", time,
    )  # fmt: skip
    assert rc == 0, out + err
    rows = [line.split(":") for line in out.split() if line.startswith(f"{topic}:")]
    return {int(p): int(o) for _, p, o in rows}


def log_dir_size(kafka: Kafka, topic: str) -> int:
    """The topic's bytes by Kafka's own kafka-log-dirs: each partition's largest replica."""
    rc, out, err = kafka.tool(
        "kafka-log-dirs", "--bootstrap-server", kafka.bootstrap, "--describe",
        "--topic-list", topic,
    )  # fmt: skip
    assert rc == 0, out + err
    (described,) = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    sizes: dict[str, int] = {}
    for broker in described["brokers"]:
        for log_dir in broker["logDirs"]:
            for p in log_dir["partitions"]:
                if not p["isFuture"]:
                    sizes[p["partition"]] = max(sizes.get(p["partition"], 0), p["size"])
    assert sizes, out
    return sum(sizes.values())


def trim(kafka: Kafka, topic: str, to: dict[int, int], spec: Path) -> None:
    """Retention's work, done at once: each partition's log start moved to ``to``."""
    parts = [{"topic": topic, "partition": p, "offset": o} for p, o in to.items()]
    spec.write_text(json.dumps({"partitions": parts, "version": 1}))
    rc, out, err = kafka.tool(
        "kafka-delete-records", "--bootstrap-server", kafka.bootstrap,
        "--offset-json-file", str(spec),
    )  # fmt: skip
    assert rc == 0, out + err


def group_offsets(kafka: Kafka, group: str) -> list[tuple[str, ...]]:
    """The group's committed offsets: (topic, partition, offset), sorted."""
    rc, out, err = kafka.tool(
        "kafka-consumer-groups", "--bootstrap-server", kafka.bootstrap, "--describe",
        "--group", group, "--offsets",
    )  # fmt: skip
    assert rc == 0, out + err
    rows = [line.split() for line in out.splitlines() if line.startswith(group)]
    return sorted((r[1], r[2], r[3]) for r in rows)  # topic, partition, committed offset
