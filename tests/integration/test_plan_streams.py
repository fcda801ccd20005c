"""`migcheck plan` against what Kafka Streams really assigns, on a real app and broker.

Each case runs the Streams fixture app (fixtures/java/streams) as 1, 2 or 3
instances of a given thread count, concurrently, on an input of 6 or 10
partitions; waits until the group's assignment is settled; reads it with
Kafka's own tool (``kafka-consumer-groups``, or ``kafka-streams-groups`` on the
streams protocol); and compares it with migcheck's live plan (what it reads
from the group) and its offline plan (what it predicts from describe() and
the counts alone): tasks, threads, active and idle threads, tasks per instance.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from streamsapp import StreamsApp

pytestmark = pytest.mark.kafka

#: The sub-topology each topic feeds, per fixture topology (from its describe() file).
_SUBS = {"count": {"orders": 0}, "rekey-count": {"orders": 0, "rekey-group-repartition": 1}}


@dataclass(frozen=True)
class Real:
    """The assignment as Kafka's tool prints it: instance -> thread -> its active tasks.

    ``epochs`` holds each streams-protocol member's id and epoch: a member that rejoined
    or reconciled between two reads (and may have held no task while migcheck read the
    group) gets a new epoch even when it ends up with the same tasks.  The classic tool
    prints no generation, so it stays empty there.
    """

    instances: dict[str, dict[str, frozenset[tuple[int, int]]]]
    epochs: frozenset[tuple[str, int]] = frozenset()

    @property
    def threads(self) -> list[int]:
        return [len(t) for threads in self.instances.values() for t in threads.values()]

    @property
    def tasks(self) -> int:
        return len(
            {t for threads in self.instances.values() for ts in threads.values() for t in ts}
        )

    @property
    def per_instance(self) -> list[int]:
        sizes = [sum(len(t) for t in threads.values()) for threads in self.instances.values()]
        return sorted(sizes, reverse=True)


@contextmanager
def _running(app: StreamsApp, instances: int, threads: int) -> Iterator[None]:
    """``instances`` JVMs of the app, each its own state directory; all stopped at exit."""
    procs = []
    try:
        for i in range(instances):
            cmd = app.command(max_seconds=120, run_seconds=120, threads=threads, instance=i)
            procs.append(
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=30)


def _topic_sub(app: StreamsApp, topic: str) -> int:
    for name, sub in _SUBS[app.topology].items():
        if topic == (app.input if name == "orders" else f"{app.app_id}-{name}"):
            return sub
    raise AssertionError(f"unexpected topic {topic} in the assignment")


def _classic(app: StreamsApp, out: str) -> Real:
    """``kafka-consumer-groups --members --verbose``: ``topic:0,2;topic2:1`` per member."""
    found: dict[str, dict[str, frozenset[tuple[int, int]]]] = {}
    for line in out.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 7 or cols[0] != app.app_id:
            continue
        client, assignment = cols[3], cols[6]
        instance = client.split("-StreamThread-")[0]
        tasks = set()
        for part in assignment.split(";") if assignment != "-" else []:
            topic, _, parts = part.rpartition(":")
            tasks |= {(_topic_sub(app, topic), int(p)) for p in parts.split(",")}
        found.setdefault(instance, {})[client] = frozenset(tasks)
    return Real(found)


def _streams(app: StreamsApp, out: str) -> Real:
    """``kafka-streams-groups --members --verbose``: GROUP, TARGET-ASSIGNMENT-EPOCH,
    TOPOLOGY-EPOCH, MEMBER, MEMBER-PROTOCOL, MEMBER-EPOCH, PROCESS, CLIENT-ID, then
    ``ACTIVE: 0:[1,5]; 1:[3]; TARGET-...``."""
    found: dict[str, dict[str, frozenset[tuple[int, int]]]] = {}
    epochs: set[tuple[str, int]] = set()
    for line in out.splitlines()[1:]:
        cols = line.split(maxsplit=8)
        if len(cols) < 9 or cols[0] != app.app_id:
            continue
        epochs.add((cols[3], int(cols[5])))
        process, client, rest = cols[6], cols[7], cols[8]
        active = rest.split("ACTIVE:", 1)[1].split("TARGET-ACTIVE:")[0]
        tasks = {
            (int(sub), int(p))
            for sub, parts in re.findall(r"(\d+):\[([\d,]*)\]", active)
            for p in parts.split(",")
            if p
        }
        found.setdefault(process, {})[client] = frozenset(tasks)
    return Real(found, frozenset(epochs))


def _real(app: StreamsApp, members: int, tasks: int) -> Real:
    """The settled assignment: every member in, every task once, twice the same read."""
    tool, parse = (
        ("kafka-consumer-groups", _classic)
        if app.protocol == "classic"
        else ("kafka-streams-groups", _streams)
    )
    last: Real | None = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        args = ("--bootstrap-server", app.kafka.bootstrap, "--describe", "--group", app.app_id)
        rc, out, _ = app.kafka.tool(tool, *args, "--members", "--verbose")
        now = parse(app, out) if rc == 0 else None
        settled = now is not None and len(now.threads) == members and now.tasks == tasks
        if settled and sum(now.threads) == tasks and now == last:
            return now
        last = now if settled else None
        time.sleep(1)
    raise AssertionError(f"the group never settled: last read {last}")


CASES = [
    # (topology, protocol, input partitions, instances, threads, tasks)
    ("count", "classic", 6, 1, 2, 6),
    ("count", "classic", 10, 3, 1, 10),
    ("count", "classic", 6, 2, 4, 6),
    ("rekey-count", "classic", 10, 2, 2, 20),
    ("count", "streams", 10, 3, 1, 10),
]


@pytest.mark.parametrize(
    ("topology", "protocol", "partitions", "instances", "threads", "tasks"), CASES
)
def test_plan_matches_the_real_assignment(
    kafka: Kafka,
    tmp_path: Path,
    topology: str,
    protocol: str,
    partitions: int,
    instances: int,
    threads: int,
    tasks: int,
) -> None:
    app = StreamsApp(kafka, topology, protocol=protocol, input_partitions=partitions)
    # Classic: the app's own describe() (an idle app commits no offset to infer sources
    # from); streams: the broker's description of the group, with no --topology.
    given = ["--topology", str(app.describe(tmp_path / "t.txt"))] if protocol == "classic" else []
    with _running(app, instances, threads):
        # The same settled assignment before and after the plan read it: a group that
        # moved in between (a member's heartbeat late on a loaded machine) is read again.
        for _ in range(5):
            real = _real(app, instances * threads, tasks)
            live = run_cli(
                "plan",
                "--bootstrap-server",
                kafka.bootstrap,
                "--application-id",
                app.app_id,
                *given,
                "--to",
                f"{app.input}={2 * partitions}",
                "--format",
                "json",
            )
            if _real(app, instances * threads, tasks) == real:
                break
        else:
            pytest.fail("the group's assignment moved during every plan")
    assert live.returncode == 1, live.stderr  # the --to change would crash the app
    # why it exits 1, in one line (the report itself is on stdout)
    assert live.stderr.startswith("migcheck: CRASH: ") and live.stderr.count("\n") == 1
    plan = json.loads(live.stdout)
    assert plan["assignment"] == "observed"
    active = sum(1 for n in real.threads if n)
    assert (plan["tasks"], plan["threads"]) == (real.tasks, instances * threads)
    assert (plan["active_threads"], plan["idle_threads"]) == (active, len(real.threads) - active)
    assert plan["tasks_per_instance"] == real.per_instance
    assert plan["tasks_per_thread"] == sorted(real.threads, reverse=True)
    by_instance = {m["instance"]: m["tasks"] for m in plan["members"]}
    assert by_instance == {i: sum(map(len, t.values())) for i, t in real.instances.items()}
    # Doubling the input doubles every sub-topology's tasks, and its changelog's expected
    # count: the Streams error, as test_app_streams.py proves on the same app.
    assert plan["proposed"]["tasks"] == 2 * real.tasks
    assert plan["proposed"]["verdict"] == "CRASH"

    offline = run_cli(
        "plan",
        "--topology",
        str(app.describe_file()),
        "--partitions",
        f"orders={partitions}",
        "--instances",
        str(instances),
        "--threads",
        str(threads),
        "--format",
        "json",
    )
    assert offline.returncode == 0, offline.stderr
    predicted = json.loads(offline.stdout)
    assert predicted["assignment"] == "predicted"
    assert predicted["tasks"] == real.tasks
    assert (predicted["active_threads"], predicted["idle_threads"]) == (
        plan["active_threads"],
        plan["idle_threads"],
    )
    assert predicted["tasks_per_instance"] == real.per_instance
