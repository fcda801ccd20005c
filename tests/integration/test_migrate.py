"""``runbook --strategy online``, executed on a real broker: its one step, ``migcheck
migrate``, widens a topic online under a steady producer, with every kind of reader moved
at one barrier, the test acting as the operator at every MANUAL line.

The producer (kafka-python, the Java client's murmur2) writes sequence-numbered records
per key through the whole migration.  Its readers:
- a plain group (kafka-python's consumer at its defaults, ``read_committed`` on the new
  topic as the step says);
- a real Kafka Streams app (the fixture's ``count-out``: a count per key behind a
  repartition topic, each new count written to its output), whose shadow the operator
  starts on the new topic as the MANUAL line says;
- a downstream group reading the app's output, moved to the shadow's.

The first cut-over is answered without pausing the producer, as a forgetful operator
would: the barrier never comes and the cut-over reverts.  The second holds.  Expected
values come from the producer's own acknowledgements, the Java rule
(``oracles.java_partition``) and the real app's own stores.
"""

from __future__ import annotations

import contextlib
import copy
import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from controlsocket import send
from kafka import KafkaConsumer
from kafkatest import REJOIN_AFTER_S, Kafka
from oracles import java_partition, run_cli
from runbookops import plain_tools
from streamsapp import Live, Run, StreamsApp
from trimming import offsets, trim

pytestmark = pytest.mark.kafka

KEYS = 40


class _Producer:
    """Writes ``k<i>`` = ``<seq>`` records at about ``rate`` per second into ``topic``,
    which the operator switches; each acknowledged record is kept with its topic and the
    number of switches before it was sent (its phase)."""

    def __init__(self, kafka: Kafka, topic: str, rate: int = 400) -> None:
        from kafka import KafkaProducer

        self.producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, linger_ms=5)
        self.topic, self.rate = topic, rate
        self.writing = threading.Event()
        self.writing.set()
        self.done = threading.Event()
        # topic, partition, key, seq, time, phase
        self.acked: list[tuple[str, int, str, int, float, int]] = []
        self.phase = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.seq: dict[str, int] = defaultdict(int)

    def _run(self) -> None:
        n = 0
        start = time.monotonic()
        while not self.done.is_set():
            if not self.writing.wait(0.05):
                continue
            while n < (time.monotonic() - start) * self.rate and self.writing.is_set():
                key = f"k{n % KEYS}"
                seq = self.seq[key]
                self.seq[key] += 1
                topic, phase = self.topic, self.phase
                meta = self.producer.send(topic, key=key.encode(), value=str(seq).encode())
                meta.add_callback(
                    lambda m, k=key, s=seq, t=topic, ph=phase: self.acked.append(
                        (t, m.partition, k, s, time.monotonic(), ph)
                    )
                )
                n += 1
            time.sleep(0.01)  # the rate's clock: a hundredth of a second between batches

    def pause(self) -> None:
        self.writing.clear()
        self.producer.flush()

    def switch(self, topic: str) -> None:
        self.topic = topic
        self.phase += 1
        self.writing.set()

    def in_phase(self, phase: int) -> list[tuple[str, int, str, int, float, int]]:
        return [a for a in list(self.acked) if a[5] == phase]

    def stop(self) -> None:
        self.done.set()
        self.writing.set()
        self.thread.join()
        self.producer.flush()
        self.producer.close()


class _Group:
    """One member of group ``group`` reading ``topic`` (kafka-python's defaults), keeping
    each record's (key, seq) in the order read."""

    def __init__(self, kafka: Kafka, group: str, topic: str, **extra: object) -> None:
        self.kafka, self.group, self.topic, self.extra = kafka, group, topic, extra
        self.consumer = self._join()
        self.read: list[tuple[str, int]] = []
        self.stopped = threading.Event()
        self.assigned = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _join(self) -> KafkaConsumer:
        return KafkaConsumer(
            self.topic, bootstrap_servers=self.kafka.bootstrap, group_id=self.group, **self.extra
        )

    def _run(self) -> None:
        joined = time.monotonic()
        while not self.stopped.is_set():
            if not self.assigned.is_set() and time.monotonic() - joined > REJOIN_AFTER_S:
                self.consumer.close()  # unassigned for long: restarted (kafkatest)
                self.consumer, joined = self._join(), time.monotonic()
            for records in self.consumer.poll(timeout_ms=100).values():
                self.read += [(r.key.decode(), int(r.value)) for r in records]
            if self.consumer.assignment() and not self.assigned.is_set():
                for tp in self.consumer.assignment():
                    self.consumer.position(tp)  # positioned: it reads what comes next
                self.assigned.set()
        self.consumer.close()  # commits what it read (auto-commit's close)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


def test_every_reader_moves_online_at_one_barrier_then_rolls_back_losing_nothing(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Issue 56 and 71: two apps of one topic (one writing an output a group reads, one
    writing nothing) and a plain group, moved by one runbook's migrate at one barrier,
    then rolled back: every count and every read exact."""
    topic = kafka.create_topic("mig-src", 3)
    into = f"{topic}-p6"
    old_group = _Group(kafka, "mig-g", topic)
    app = StreamsApp(kafka, "count-out", shared_input=topic)
    other = StreamsApp(kafka, "count", shared_input=topic)  # writes nothing
    shadows = {a.app_id: _shadow_of(a, into) for a in (app, other)}
    files = {a.app_id: a.describe(tmp_path / f"{a.topology}.txt") for a in (app, other)}
    with contextlib.ExitStack() as stack:
        old_apps = [stack.enter_context(a.live(max_seconds=400)) for a in (app, other)]
        for old in old_apps:
            old.wait_for(RUNNING, 120)
        down = [_Group(kafka, "mig-down", app.output)]
        assert old_group.assigned.wait(180) and down[0].assigned.wait(180)
        producer = _Producer(kafka, topic)
        producer.thread.start()
        groups = [old_group]
        script = _online_runbook(kafka, topic, files, tmp_path)
        pauses, new_apps = 0, {}

        def act(step: str) -> str:
            nonlocal pauses
            answer = "y"
            if step.startswith("start a shadow of app "):
                started = step.removeprefix("start a shadow of app ").split(":")[0]
                shadow = shadows[started]
                assert f"application.id={shadow.app_id}" in step, step
                if started == app.app_id:
                    assert f"{app.output} -> {shadow.output}" in step
                new_apps[started] = stack.enter_context(shadow.live(max_seconds=400))
                new_apps[started].wait_for(RUNNING, 120)
            elif step.startswith("pause every producer"):
                pauses += 1
                if pauses > 1:  # the first time the operator forgets to pause
                    producer.pause()
            elif step.startswith("resume every producer"):
                producer.writing.set()  # on the old topic, after any revert
            elif step.startswith("switch every producer"):
                producer.switch(step.split(" to ", 1)[1].split(" and resume")[0])
            elif step.startswith("the producers write"):  # the rollback window
                # the new topic serves a while, the reverse copy keeping the old current
                _wait_for(lambda: len(producer.in_phase(1)) >= 400)
                answer = "rollback"
            elif step.startswith("stop every consumer of group mig-g"):
                groups[-1].stop()
            elif step.startswith("start group mig-g"):
                on = step.split("consumers on ")[1].split(" with")[0]
                groups.append(_Group(kafka, "mig-g", on, isolation_level="read_committed"))
            elif step.startswith("stop every consumer of group mig-down"):
                down[-1].stop()
            elif step.startswith("start group mig-down"):
                down.append(
                    _Group(kafka, "mig-down", step.split("consumers on ")[1].split(" with")[0])
                )
            return answer

        lines = _executed(script, tmp_path, act)
        assert lines[-1] == "Runbook complete."
        assert any(line.startswith("cut-over reverted") for line in lines)
        assert pauses >= 3  # a loaded machine may revert another: the operator retries
        took = float(next(x for x in lines if x.startswith("cut-over (barrier")).split()[-2])
        assert took <= 10  # the cut-over that held, within --cutover-timeout
        assert "group mig-down: moved to the shadow's outputs" in lines
        assert f"group mig-g: moved back to {topic}" in lines
        assert "group mig-down: moved back to the app's outputs" in lines
        assert [g.topic for g in groups] == [topic, into, topic]
        assert [d.topic for d in down] == [app.output, shadows[app.app_id].output, app.output]

        # back on the old topic, the producer writes a while more
        _wait_for(lambda: len(producer.in_phase(2)) >= 400)
        producer.stop()
        produced = dict(producer.seq)
        _wait_for(lambda: len(groups[-1].read) >= len(producer.in_phase(2)))
        groups[-1].stop()
        # the downstream group has read each key's last count, on the old output again
        _wait_for(lambda: _last([r for d in down for r in d.read]) == produced)
        down[-1].stop()
        assert set(new_apps) == set(shadows)  # each app's shadow was started
        shadow_run, other_shadow = (new_apps[a.app_id].finish() for a in (app, other))
        old_run, other_run = (old.finish() for old in old_apps)

    # every acknowledged record read once by the plain group, each key's in sequence,
    # from the old topic to the new one and back
    read: dict[str, list[int]] = defaultdict(list)
    for key, seq in (r for g in groups for r in g.read):
        read[key].append(seq)
    assert dict(read) == {k: list(range(n)) for k, n in produced.items()}
    # the records sit where the Java client puts their keys: among 6 on the new topic,
    # among 3 on the old one
    assert all(p == java_partition(k.encode(), 6) for _, p, k, *_ in producer.in_phase(1))
    assert all(p == java_partition(k.encode(), 3) for _, p, k, *_ in producer.in_phase(2))
    for before, after in ((0, 1), (1, 2)):  # each pause: seconds, whatever the topic holds
        assert (
            min(a[4] for a in producer.in_phase(after))
            - max(a[4] for a in producer.in_phase(before))
            < 15
        )

    _counted_exactly_and_rising(old_run, shadow_run, producer, down)
    # the app that writes nothing: its old instance counted everything, its shadow up to
    # the rollback's barrier, as the other's did
    assert other_run.code == 0 and other_shadow.code == 0, other_shadow.stderr[-2000:]
    assert {k: int(v) for s, k, v in other_run.state if s == "counts"} == dict(producer.seq)
    upto = Counter(a[2] for a in producer.acked if a[5] < 2)
    assert {k: int(v) for s, k, v in other_shadow.state if s == "counts"} == dict(upto)


def _counted_exactly_and_rising(
    old_run: Run, shadow_run: Run, producer: _Producer, down: list[_Group]
) -> None:
    """After a migration rolled back: the old app, kept current by the reverse copy,
    counts every record of every phase; its shadow, the records up to the rollback's
    barrier; the downstream group saw each key's counts rise, old output, shadow's, old
    again: no replay (a count going down) and none missing at the end."""
    produced = dict(producer.seq)
    assert shadow_run.code == 0 and old_run.code == 0, shadow_run.stderr[-2000:]
    assert {k: int(v) for s, k, v in old_run.state if s == "counts"} == produced
    upto = Counter(a[2] for a in producer.acked if a[5] < 2)
    assert {k: int(v) for s, k, v in shadow_run.state if s == "counts"} == dict(upto)
    counts: dict[str, list[int]] = defaultdict(list)
    for key, n in (r for d in down for r in d.read):
        counts[key].append(n)
    assert all(v == sorted(set(v)) for v in counts.values())
    first = Counter(a[2] for a in producer.in_phase(0))
    assert all(min(n for k2, n in down[1].read if k2 == k) > first[k] for k in produced)
    assert all(min(n for k2, n in down[2].read if k2 == k) > upto[k] for k in produced)


RUNNING = "STATE-CHANGE REBALANCING -> RUNNING"


def _executed(script: Path, tmp_path: Path, act: Callable[[str], str]) -> list[str]:
    """The runbook executed as an operator runs it (``--execute``, its work directory in
    ``tmp_path``), each MANUAL line's step done by ``act``, which returns the answer; the
    output's lines, once it succeeded."""
    env = {**os.environ, **plain_tools(), "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    proc = subprocess.Popen(["bash", str(script), "--execute"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("MANUAL: "):
                step = line.removeprefix("MANUAL: ").rstrip("\n")
                proc.stdin.write(f"{act(step)}\n")
                proc.stdin.flush()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 0, "\n".join(lines[-20:]) + err[-2000:]
    return lines


def _online_runbook(kafka: Kafka, topic: str, files: dict[str, Path], tmp_path: Path) -> Path:
    """``runbook --strategy online --format sh`` for every reader: the apps (each by its
    --topology: its outputs, one read by a downstream group) and the plain group.  A
    loaded machine's barrier is given 10 s, and the producer's partitioner is named (the
    topic holds few keys when it starts)."""
    apps = [a for app, file in files.items() for a in ("--application-id", app, "--topology",
                                                        f"{app}={file}")]  # fmt: skip
    p = run_cli(
        "runbook", "--bootstrap-server", kafka.bootstrap, *apps,
        "--topic", topic, "--to", "6", "--strategy", "online", "--group", "mig-g",
        "--downstream-group", "mig-down",
        "--partitioner", "murmur2", "--cutover-timeout", "10", "--format", "sh",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert f"migcheck migrate --bootstrap-server {kafka.bootstrap}" in p.stdout
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    return script


def _shadow_of(app: StreamsApp, into: str) -> StreamsApp:
    """The app as the MANUAL line has it run: another application id (the default,
    ``<id>-p6``), the new topic, the output's shadow, read_committed, its own state."""
    shadow = copy.copy(app)
    shadow.app_id, shadow.input = f"{app.app_id}-p6", into
    shadow.output = f"{app.output}-p6"
    shadow.state_dir = app.state_dir.parent / shadow.app_id
    shadow.isolation_level = "read_committed"
    return shadow


def _committed_on(kafka: Kafka, group: str, topic: str) -> bool:
    """Whether ``group`` has committed an offset on ``topic`` (kafka-python's admin)."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        return any(tp.topic == topic for tp in admin.list_group_offsets(group).get(group, {}))
    finally:
        admin.close()


def _last(read: list[tuple[str, int]]) -> dict[str, int]:
    """Each key's last value read."""
    return dict(read)


def _wait_for(condition, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_refusals_are_one_line_and_exit_2(kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic("mig-ref", 3)
    checkpoint = str(tmp_path / "m.json")
    # two groups hold committed offsets on it (Kafka's own tool commits them, as an
    # assign() consumer's commits look): one named, one nobody named (issue 72)
    named, forgotten = kafka.unique("mig-named"), kafka.unique("mig-forgotten")
    for group in (named, forgotten):
        rc, out, err = kafka.tool(
            "kafka-consumer-groups", "--bootstrap-server", kafka.bootstrap, "--group", group,
            "--topic", topic, "--reset-offsets", "--to-earliest", "--execute",
        )  # fmt: skip
        assert rc == 0, out + err
    cases = [
        (["--to", "6", "--group", named], f"{topic} is also read by {forgotten} ("),
        (["--to", "3"], "already has 3"),
        (["--to", "6", "--group", "no-such-group"], "no such group"),
        (
            ["--to", "6", "--application-id", "no-such-app", "--output-topic", ""],
            "no such app reads",
        ),
        (["--to", "6", "--output-topic", "out"], "need --application-id"),
    ]
    for args, words in cases:
        p = subprocess.run(
            [sys.executable, "-m", "migcheck", "migrate", "--bootstrap-server", kafka.bootstrap,
             "--topic", topic, "--checkpoint", checkpoint, *args],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert p.returncode == 2, p.stdout + p.stderr
        assert p.stderr.startswith("migcheck: error: ") and words in p.stderr, p.stderr
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


#: The hooks the detached run's automation uses (issue 72): on-barrier fails once (the
#: cut-over reverts), then asks the test to pause the producer and waits until it has;
#: on-switch asks it to switch the producer to the new topic and waits.  Files are the
#: channel: a hook is a process of migrate's, the producer a thread of the test's.
_ON_BARRIER = """#!/bin/sh
set -e
cd "$(dirname "$0")"
if [ ! -e failed-once ]; then : > failed-once; echo "producers did not answer" >&2; exit 1; fi
: > pause
for _ in $(seq 600); do [ -e paused ] && exit 0; sleep 0.1; done
exit 2
"""
_ON_SWITCH = """#!/bin/sh
set -e
cd "$(dirname "$0")"
printf '%s' "$MIGCHECK_NEW_TOPIC" > switch.tmp && mv switch.tmp switch
for _ in $(seq 600); do [ -e switched ] && exit 0; sleep 0.1; done
exit 2
"""


def _until_counted(kafka: Kafka, output: str, produced: dict[str, int]) -> None:
    """Until the app's output holds each key's count of every record produced: its own
    results say it has read everything."""
    from kafka import TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap, isolation_level="read_committed")
    try:
        parts = [TopicPartition(output, p) for p in consumer.partitions_for_topic(output) or ()]
        consumer.assign(parts)
        consumer.seek_to_beginning()
        last: dict[str, int] = {}
        deadline = time.monotonic() + 120
        while last != produced:
            assert time.monotonic() < deadline, f"counted {last}, produced {produced}"
            for records in consumer.poll(timeout_ms=200).values():
                last.update({r.key.decode(): int(r.value) for r in records})
    finally:
        consumer.close()


def _automation(hooks: Path, producer: _Producer, done: threading.Event) -> None:
    """What the hooks ask of the producer, done as they ask it."""
    while not done.is_set():
        if (hooks / "pause").exists() and not (hooks / "paused").exists():
            producer.pause()
            (hooks / "paused").touch()
        if (hooks / "switch").exists() and not (hooks / "switched").exists():
            producer.switch((hooks / "switch").read_text())
            (hooks / "switched").touch()
        done.wait(0.05)


def _lines_as_they_come(live: Live) -> Iterator[str]:
    """Each line of ``live``'s output as it comes, until the process ends."""
    seen = 0
    while True:
        _wait_for(lambda n=seen: len(live.lines) > n or live.proc.poll() is not None, 600)
        if len(live.lines) == seen:
            return
        yield live.lines[seen][2]
        seen += 1


def _posted(socket_path: Path, prompt: str, migrate: Live) -> bool:
    """Whether ``prompt`` waits for its answer, as ``status`` says (the MANUAL line is
    printed just before the prompt is posted), or the run ended."""
    return migrate.proc.poll() is not None or send(socket_path, "status")[1] == f"prompt: {prompt}"


def test_a_detached_run_is_answered_through_its_socket_held_by_a_file_and_hooked(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Issue 72, as an operator runs it in production: migrate with stdin closed, every
    answer through --control-socket; the cut-over held at ready by the flag file until
    `unpostpone`; hooks pause and switch a real producer, the first on-barrier failing
    (the cut-over reverts, nothing lost); a Kafka Streams app and a plain group moved.

    The test acts on migrate's lines as they come (drained, so that a full pipe never
    blocks its prints).  Its stdin is a pipe closed at once, not /dev/null: a root
    process had replaced the machine's /dev/null with a plain file that others' output
    filled, and migrate took a line of it for the operator's answer (as it should take
    stdin's lines), which stopped the run at its first prompt."""
    topic = kafka.create_topic("mig-ctl", 3)
    into = f"{topic}-p6"
    group = _Group(kafka, "ctl-g", topic)
    # a classic member leaves its group only when its session times out: 10 s, not 45 s,
    # for the wait after "stop the old app"
    app = StreamsApp(kafka, "count-out", shared_input=topic, session_timeout_ms=10_000)
    shadow = _shadow_of(app, into)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name, text in (("on-barrier", _ON_BARRIER), ("on-switch", _ON_SWITCH)):
        (hooks / name).write_text(text)
        (hooks / name).chmod(0o755)
    socket_path, flag = tmp_path / "ctl.sock", tmp_path / "postpone"
    flag.touch()
    groups, done = [group], threading.Event()
    with app.live(max_seconds=400) as old_app, contextlib.ExitStack() as stack:
        old_app.wait_for(RUNNING, 120)
        assert group.assigned.wait(180)
        producer = _Producer(kafka, topic)
        producer.thread.start()
        automation = threading.Thread(target=_automation, args=(hooks, producer, done))
        automation.start()
        migrate = Live(
            [sys.executable, "-m", "migcheck", "migrate", "--bootstrap-server", kafka.bootstrap,
             "--topic", topic, "--to", "6", "--group", "ctl-g", "--application-id", app.app_id,
             "--output-topic", app.output, "--partitioner", "murmur2", "--cutover-timeout", "10",
             "--checkpoint", str(tmp_path / "m.json"), "--control-socket", str(socket_path),
             "--postpone-cut-over-flag-file", str(flag), "--hooks-dir", str(hooks)],
            max_seconds=600,
        )  # fmt: skip
        assert migrate.proc.stdin is not None
        migrate.proc.stdin.close()  # stdin closed: every answer comes through the socket
        new_app, old_run, answered, held = None, None, [], False
        try:
            for line in _lines_as_they_come(migrate):
                if line.startswith("ready; the cut-over waits"):
                    status = send(socket_path, "status")
                    assert status[0].startswith("phase: 4 ready") and "flag file" in status[3]
                    held = True  # ready, and held there by the file: released by unpostpone
                    assert send(socket_path, "unpostpone") == ["postponed: no"]
                if not line.startswith("MANUAL: "):
                    continue
                prompt = line.removeprefix("MANUAL: ")
                _wait_for(lambda p=prompt: _posted(socket_path, p, migrate))
                if prompt.startswith(f"start a shadow of app {app.app_id}"):
                    new_app = stack.enter_context(shadow.live(max_seconds=400))
                    new_app.wait_for(RUNNING, 120)
                elif prompt.startswith("resume every producer"):
                    producer.writing.set()  # the failed hook had not paused it
                elif prompt.startswith("stop every consumer of group ctl-g"):
                    groups[-1].stop()
                elif prompt.startswith("start group ctl-g"):
                    on = prompt.split("consumers on ")[1].split(" with")[0]
                    groups.append(_Group(kafka, "ctl-g", on, isolation_level="read_committed"))
                elif prompt.startswith("the producers write"):  # the window: it serves a while
                    _wait_for(lambda: len(producer.in_phase(1)) >= 400)
                elif prompt.startswith(f"stop the old app {app.app_id}"):
                    old_run = old_app.finish()
                answered.append(prompt)
                assert send(socket_path, "answer y")[0] == "answered: y"
            run = migrate.finish()
        finally:
            migrate.stop()
            done.set()
            automation.join()
        out = migrate.text("out")
        assert run.code == 0, out[-3000:] + run.stderr[-2000:]
        producer.stop()
        produced = dict(producer.seq)
        _wait_for(lambda: len(groups[-1].read) >= len(producer.in_phase(1)))
        groups[-1].stop()
        assert new_app is not None
        _until_counted(kafka, shadow.output, produced)  # the shadow has counted every record
        shadow_run = new_app.finish()

    lines = out.splitlines()
    assert held and not flag.exists()  # held at ready by the file, released by unpostpone
    assert f"control: listening on {socket_path}" in " ".join(lines)
    assert "control: unpostpone" in lines and "control: answer y" in lines
    assert any(ln.startswith("cut-over reverted: hook ") and "on-barrier failed (exit 1)" in ln
               for ln in lines), out[-3000:]  # fmt: skip
    firsts = (
        f"start a shadow of app {app.app_id}",
        f"resume every producer on {topic}",
        f"pause every producer of {topic}",
        f"switch every producer of {topic} to {into}",
    )
    assert all(a.startswith(f) for a, f in zip(answered, firsts, strict=False)), answered
    assert len(answered) > len(firsts)  # then the group's move, the window, the old side
    assert not socket_path.exists()  # removed at the end
    # every acknowledged record read once by the plain group, each key's in sequence
    read: dict[str, list[int]] = defaultdict(list)
    for key, seq in (r for g in groups for r in g.read):
        read[key].append(seq)
    assert dict(read) == {k: list(range(n)) for k, n in produced.items()}
    assert [g.topic for g in groups] == [topic, into]
    assert all(p == java_partition(k.encode(), 6) for _, p, k, *_ in producer.in_phase(1))
    # the shadow, serving since the switch, counts every record; the old app every record
    # up to its stop, the reverse copy having kept it current
    assert shadow_run.code == 0 and old_run is not None and old_run.code == 0
    assert {k: int(v) for s, k, v in shadow_run.state if s == "counts"} == produced


def test_a_trimmed_apps_shadow_is_seeded_with_its_moved_state_and_rolls_back_exact(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Issue 70, item 2: a real count app whose input retention trimmed (here with
    kafka-delete-records) after it counted every record; migrate (``--shadow-state``
    auto, which moves here) under a steady producer starts the shadow after the switch,
    seeded with the old app's changelog moved to 6 partitions.  Every key's count is its
    whole history, from the records this test produced; the downstream group's counts
    never fall; the pause is seconds; then the rollback, exact.  Issue 71: a second app
    of the topic (``--application-id`` twice) moves at the same barrier, its shadow seeded
    too, and counts exactly as well."""
    topic = kafka.create_topic("mig-seed", 3)
    into = f"{topic}-p6"
    app = StreamsApp(kafka, "count-out", shared_input=topic)
    other = StreamsApp(kafka, "count-out", shared_input=topic, app_prefix="app-other")
    shadow, other_shadow = _shadow_of(app, into), _shadow_of(other, into)
    topology = app.describe(tmp_path / "topology.txt")
    other_topology = other.describe(tmp_path / "other-topology.txt")
    with (
        app.live(max_seconds=400) as old_app,
        other.live(max_seconds=400) as other_app,
        contextlib.ExitStack() as stack,
    ):
        old_app.wait_for(RUNNING, 120)
        other_app.wait_for(RUNNING, 120)
        down = [_Group(kafka, "seed-down", app.output)]
        assert down[0].assigned.wait(180)
        producer = _Producer(kafka, topic)
        producer.thread.start()
        _wait_for(lambda: len(producer.acked) >= 800)
        producer.pause()  # once the apps counted every record, retention deletes them all
        _until_counted(kafka, app.output, dict(producer.seq))
        _until_counted(kafka, other.output, dict(producer.seq))
        trim(kafka, topic, offsets(kafka, topic, "-1"), tmp_path / "delete.json")
        producer.writing.set()
        migrate = Live(
            [sys.executable, "-m", "migcheck", "migrate", "--bootstrap-server", kafka.bootstrap,
             "--topic", topic, "--to", "6", "--application-id", app.app_id,
             "--application-id", other.app_id, "--topology", f"{app.app_id}={topology}",
             "--topology", f"{other.app_id}={other_topology}", "--downstream-group", "seed-down",
             "--partitioner", "murmur2", "--checkpoint", str(tmp_path / "m.json")],
            max_seconds=600,
        )  # fmt: skip
        assert migrate.proc.stdin is not None
        new_app = other_new = None
        try:
            for line in _lines_as_they_come(migrate):
                if not line.startswith("MANUAL: "):
                    continue
                step, answer = line.removeprefix("MANUAL: "), "y"
                if step.startswith(f"start a shadow of app {app.app_id}:"):
                    assert "its state is moved, not rebuilt" in step, step
                    assert producer.phase == 1  # after the switch
                    new_app = stack.enter_context(shadow.live(max_seconds=400))
                elif step.startswith(f"start a shadow of app {other.app_id}:"):
                    assert "its state is moved, not rebuilt" in step, step
                    other_new = stack.enter_context(other_shadow.live(max_seconds=400))
                elif step.startswith("pause every producer"):
                    producer.pause()
                elif step.startswith("resume every producer"):  # a loaded machine reverted
                    producer.writing.set()
                elif step.startswith("switch every producer"):
                    producer.switch(step.split(" to ", 1)[1].split(" and resume")[0])
                elif step.startswith("the producers write"):  # the window: it serves a while
                    _wait_for(lambda: len(producer.in_phase(1)) >= 400)
                    answer = "rollback"
                elif step.startswith("stop every consumer of group seed-down"):
                    down[-1].stop()
                elif step.startswith("start group seed-down"):
                    on = step.split("consumers on ")[1].split(" with")[0]
                    down.append(_Group(kafka, "seed-down", on))
                migrate.proc.stdin.write(f"{answer}\n")
                migrate.proc.stdin.flush()
            run = migrate.finish()
        finally:
            migrate.stop()
        out = migrate.text("out")
        assert run.code == 0, out[-3000:] + run.stderr[-2000:]
        _wait_for(lambda: len(producer.in_phase(2)) >= 400)  # back on the old topic
        producer.stop()
        produced = dict(producer.seq)
        _wait_for(lambda: _last([r for d in down for r in d.read]) == produced)
        down[-1].stop()
        assert new_app is not None and other_new is not None
        shadow_run, old_run = new_app.finish(), old_app.finish()
        other_shadow_run, other_run = other_new.finish(), other_app.finish()

    lines = out.splitlines()
    took = float(next(x for x in lines if x.startswith("cut-over (barrier")).split()[-2])
    assert took <= 5  # the pause that held, within the default --cutover-timeout
    assert any(x.startswith(f"shadow {shadow.app_id}: restored the moved state") for x in lines)
    assert any(x.startswith("app: its state moved, not rebuilt (") for x in lines), out[-3000:]
    assert [d.topic for d in down] == [app.output, shadow.output, app.output]
    # every count is the key's whole history, the trimmed records' included (the shadow
    # reads the new topic from the barrier: they reach it only in the moved state), and
    # the downstream group's counts only rise, from the old output to the shadow's and back
    _counted_exactly_and_rising(old_run, shadow_run, producer, down)
    # the second app and its shadow too: every record, and every record to the rollback
    assert any(x.startswith(f"shadow {other_shadow.app_id}: restored the moved state")
               for x in lines)  # fmt: skip
    assert other_run.code == 0 and other_shadow_run.code == 0, other_run.stderr[-2000:]
    assert {k: int(v) for s, k, v in other_run.state if s == "counts"} == dict(producer.seq)
    upto = Counter(a[2] for a in producer.acked if a[5] < 2)
    assert {k: int(v) for s, k, v in other_shadow_run.state if s == "counts"} == dict(upto)


def test_a_joined_apps_two_topics_move_online_at_one_barrier_and_every_order_joins(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Issue 71, online for a set: a real stream-table join (``join-rekey``: orders
    left-joined with the customers table, re-keyed through a repartition topic and
    counted) under a steady producer of orders.  ``runbook --topic orders --topic
    customers --strategy online``, executed: its migrate copies both, rebuilds the app's
    state in a shadow reading both new topics, and cuts both over at one barrier.  Every
    count is exact from the records this test produced: the old app's up to the barrier,
    the shadow's over every order, each joined with its customer (none unmatched); the
    pause is seconds."""
    app = StreamsApp(kafka, "join-rekey")
    customers = {f"k{i}": f"c{i}" for i in range(KEYS)}  # the producer's keys
    app.produce(app.table, list(customers.items()))
    topology = app.describe(tmp_path / "join-rekey.txt")
    shadow = _shadow_of(app, f"{app.input}-p6")
    shadow.table = f"{app.table}-p6"
    with app.live(max_seconds=400) as old_app, contextlib.ExitStack() as stack:
        old_app.wait_for(RUNNING, 120)
        producer = _Producer(kafka, app.input)
        producer.thread.start()
        _wait_for(lambda: len(producer.acked) >= 400)
        # the group shows the app reading the orders once it committed some (as any app
        # that ran a while has)
        _wait_for(lambda: _committed_on(kafka, app.app_id, app.input))
        p = run_cli(
            "runbook", "--bootstrap-server", kafka.bootstrap, "--application-id", app.app_id,
            "--topic", app.input, "--topic", app.table, "--to", "6", "--strategy", "online",
            "--topology", str(topology), "--partitioner", "murmur2", "--cutover-timeout", "10",
            "--format", "sh",
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        script = tmp_path / "runbook.sh"
        script.write_text(p.stdout, encoding="utf-8")
        asked: list[str] = []
        new_app = old_run = None

        def act(step: str) -> str:
            nonlocal new_app, old_run
            asked.append(step)
            if step.startswith(f"start a shadow of app {app.app_id}:"):
                new_app = stack.enter_context(shadow.live(max_seconds=400))
                new_app.wait_for(RUNNING, 120)
            elif step.startswith("pause every producer"):
                producer.pause()
            elif step.startswith("resume every producer"):  # a loaded machine reverted
                producer.writing.set()
            elif step.startswith("switch every producer"):
                producer.switch(shadow.input)
            elif step.startswith("the producers write"):  # the window: it serves a while
                _wait_for(lambda: len(producer.in_phase(1)) >= 400)
            elif step.startswith(f"stop the old app {app.app_id}"):
                old_run = old_app.finish()
            return "y"

        lines = _executed(script, tmp_path, act)
        producer.stop()
        assert new_app is not None and old_run is not None
        shadow_run = new_app.finish()

    # one shadow reading both new topics, one pause of both topics' producers, one switch
    start = next(s for s in asked if s.startswith("start a shadow"))
    reading = f"{shadow.input} in place of {app.input}, {shadow.table} in place of {app.table}"
    assert f"reading {reading}" in start, start
    switch = f"{app.input} to {shadow.input} and {app.table} to {shadow.table}"
    assert {s.split(";")[0] for s in asked if s.startswith(("pause", "switch"))} == {
        f"pause every producer of {app.input} and {app.table}",  # again after a revert
        f"switch every producer of {switch} and resume them (the pause ends here)",
    }
    barrier = next(x for x in lines if x.startswith("barrier: "))
    # the customers as the test wrote them; their copy's ends count its commit markers too
    assert f"; {app.table} at {KEYS} offsets, {shadow.table} at " in barrier, barrier
    took = float(next(x for x in lines if x.startswith("cut-over (barrier")).split()[-2])
    assert took <= 10  # the pause that held, within --cutover-timeout
    gap = min(a[4] for a in producer.in_phase(1)) - max(a[4] for a in producer.in_phase(0))
    assert gap < 15  # the producer's pause: seconds
    # every count exact, each order joined with its key's customer: the shadow's over
    # every order written on either topic; the old app's over every order to the barrier,
    # and no more than its topic holds (the reverse copy kept it current until completion,
    # up to where the app had read when the operator stopped it)
    assert old_run.code == 0 and shadow_run.code == 0, shadow_run.stderr[-2000:]
    acked = Counter(f"{seq}|{customers[key]}" for _, _, key, seq, *_ in producer.acked)
    assert {k: int(v) for s, k, v in shadow_run.state if s == "counts"} == dict(acked)
    held = Counter(
        f"{r.value.decode()}|{customers[r.key.decode()]}"
        for r in kafka.dump_records(app.input)
        if r.key is not None and r.value is not None
    )
    before = Counter(f"{a[3]}|{customers[a[2]]}" for a in producer.in_phase(0))
    old_counts = Counter({k: int(v) for s, k, v in old_run.state if s == "counts"})
    assert before <= old_counts <= held
    assert kafka.partition_count(f"{shadow.app_id}-rekey-group-repartition") == 6
