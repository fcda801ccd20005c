"""A real Kafka Streams count app on a topic that retention trimmed to its end (here with
kafka-delete-records, as issue 70 measured it): ``runbook --strategy auto`` moves its state
instead of rebuilding it, and loses nothing.

The app counts two rounds; every record it counted is then deleted from its input.  The
runbook, written after the trim, picks move-state; executed with ``--execute --yes`` as an
operator would (the app restarted under the new id when the script says so), it copies the
counts' changelog into the new id's at 6 partitions and commits the new group's offsets at
the barrier.  The restarted app holds every key's whole count before it reads a record, and
after a third round every key's count is its whole history, counted from the records this
test produced, never from migcheck.  The old app's changelog and group are still there: the
way back.  Its changelog also holds the counts of many keys counted before, whose input
retention deleted long ago: the move's copy then runs rounds, and it is killed in the middle
of one (issue 70: a killed move resumes from its checkpoint).  The script says so and stops
with nothing altered; run again, it resumes the move, every count is still exact, and the
moved changelog holds every increment of every key once, as read_committed.

The same on a store behind a repartition topic (``rekey-count``: the counts are keyed by
the record's value, re-keyed through ``<app>-rekey-group-repartition``): the changelog is
placed by the store key, the new id's repartition topic comes at 6, and every re-keyed
count is exact.

The same on the streams protocol (KIP-1071): the new id's offsets are committed with
kafka-consumer-groups before its first member joins (an empty classic group, which that
member's join converts into a streams group, keeping them: FINDINGS.md), and a round counted
after the trim shows that the new group starts at the barrier, not at the log start.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from copykill import kcat_count, kill, resume, session_pids, wait_mid_round
from kafka import KafkaConsumer, TopicPartition
from kafkatest import Kafka
from runbookops import Detached, execute_yes
from streamsapp import StreamsApp, phase1, phase2
from trimming import group_offsets, offsets, trim

from migcheck.copy.rounds import CHUNK  # sizes the data, never an expected value

pytestmark = pytest.mark.kafka


def _counts(state: list[tuple[str, str, str]]) -> dict[str, int]:
    """The counts store of the app's dump (its (store, key, value) rows)."""
    return {key: int(count) for store, key, count in state if store == "counts"}


def _dumped(out: str) -> list[tuple[str, str, str]]:
    """The rows of the app's ``STATE<TAB>store<TAB>key<TAB>value`` lines."""
    rows = [line.split("\t")[1:4] for line in out.splitlines() if line.startswith("STATE\t")]
    return [(store, key, value) for store, key, value in rows]


def _partitions(kafka: Kafka, topic: str) -> str:
    rc, out, err = kafka.tool(
        "kafka-topics", "--bootstrap-server", kafka.bootstrap, "--describe", "--topic", topic
    )
    assert rc == 0, out + err
    return out.split("PartitionCount:")[1].split()[0]


def _counted_and_trimmed(
    app: StreamsApp, history: list[tuple[str, str]], counted: Counter[str], tmp_path: Path
) -> dict[int, int]:
    """The app counts ``history`` (its counts store then holds ``counted``), then retention
    deletes every record it counted: the input's ends, now its log start too."""
    app.produce(app.input, history)
    first = app.run()
    assert first.code == 0, first.stderr[-2000:]
    assert _counts(first.state) == counted
    ends = offsets(app.kafka, app.input, "-1")
    trim(app.kafka, app.input, ends, tmp_path / "delete.json")
    assert offsets(app.kafka, app.input, "-2") == ends
    return ends


def _runbook(app: StreamsApp, tmp_path: Path) -> Path:
    """``runbook --strategy auto`` with the app's real topology, as a script: it must
    choose move-state."""
    topology = app.describe(tmp_path / "topology.txt")
    p = app.migcheck(
        "runbook", "--topic", app.input, "--to", "6", "--topology", str(topology),
        "--state-dir", str(app.state_dir), "--format", "sh",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "# --strategy auto chose move-state: the sources no longer hold their whole" in (
        p.stdout
    )
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    return script


def _counted_before(kafka: Kafka, changelog: str) -> Counter[str]:
    """Keys the app counted before the test's rounds, their input long deleted by
    retention: each one's 100 increments written into the app's changelog as the app
    writes them (a long, 8 bytes big-endian, on the key's partition), in one call, so only
    its latest record is right.  Enough of them that the move's copy runs rounds (CHUNK
    records per source partition each), so a kill lands between two."""
    counted = Counter({f"h{i}": 100 for i in range(3 * (2 * CHUNK + CHUNK // 5) // 100)})
    kafka.produce(
        changelog,
        [
            (k.encode(), struct.pack(">q", c), None)
            for k, n in counted.items()
            for c in range(1, n + 1)
        ],
    )
    return counted


def _kill_the_moves_copy(kafka: Kafka, script: Path, work: Path, into: str) -> tuple[int, str]:
    """The script run to the move, whose copy into ``into`` is killed in the middle of a
    round (every process of it; the script itself lives on to say so): the script's exit
    code and output."""
    run = Detached(script, work)
    checkpoint = work / f"{into}.checkpoint"  # the copy's, once it has created ``into``
    try:
        deadline = time.monotonic() + 240
        while not checkpoint.exists() and run.proc.poll() is None:
            assert time.monotonic() < deadline, "the move's copy never started"
            time.sleep(0.05)
        assert checkpoint.exists(), run.wait()[1]
        wait_mid_round(kafka, checkpoint, into, run.proc)  # returns with the session stopped
        for pid in session_pids(run.proc.pid):
            if pid != run.proc.pid:  # not the script
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        resume(run.proc)
    except BaseException:
        kill(run.proc)
        raise
    return run.wait()


def _increments(counts: Counter[str]) -> Counter[tuple[str, int]]:
    """The records a count store's changelog holds for ``counts`` when each increment is
    written once (the app's store has no cache): (key, 1) to (key, its count)."""
    return Counter((key, c) for key, n in counts.items() for c in range(1, n + 1))


def _moved(kafka: Kafka, changelog: str) -> Counter[tuple[str, int]]:
    """Each committed record of ``changelog`` (read_committed) as (key, count), as many
    times as it is there."""
    return Counter(
        (r.key.decode(), struct.unpack(">q", r.value)[0])
        for r in kafka.dump_records(changelog)
        if r.key is not None and r.value is not None
    )


def _log(kafka: Kafka, topic: str) -> dict[int, tuple[int, int]]:
    """Each partition of ``topic`` with its log start and end offsets, as kafka-python's
    consumer reads them (in this process: no tool's JVM)."""
    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        starts, ends = consumer.beginning_offsets(tps), consumer.end_offsets(tps)
        return {tp.partition: (starts[tp], ends[tp]) for tp in tps}
    finally:
        consumer.close()


def _exact(counts: dict[str, int], whole: Counter[str]) -> None:
    wrong = {k: (counts.get(k), n) for k, n in whole.items() if counts.get(k) != n}
    assert not wrong, f"{len(wrong)} keys lost history: {list(wrong.items())[:5]}"
    assert counts.keys() == whole.keys()


def test_a_trimmed_count_app_moves_its_state_and_every_key_keeps_its_whole_history(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = StreamsApp(kafka, "count")
    history = [*phase1(), *phase2()]  # two rounds
    produced = Counter(key for key, _ in history)
    # retention deletes every record the app has counted
    ends = _counted_and_trimmed(app, history, produced, tmp_path)
    old_id, new_id = app.app_id, f"{app.app_id}-p6"
    produced += _counted_before(kafka, f"{old_id}-counts-changelog")

    # without the topology a store with logging disabled could hide: refused, naming it
    unseen = app.migcheck("runbook", "--topic", app.input, "--to", "6", "--strategy", "move-state")
    assert unseen.returncode == 2, unseen.stderr
    assert unseen.stderr == (
        f"migcheck: error: --strategy move-state: {app.app_id}: without --topology a store "
        "with logging disabled, or a source topic used as a changelog, cannot be ruled out "
        "(pass the app's Topology#describe() with --topology to decide)\n"
    )

    script = _runbook(app, tmp_path)

    # the move's copy is killed in the middle of a round: the script stops, nothing altered
    old_offsets = group_offsets(kafka, old_id)
    into = f"{new_id}-counts-changelog"
    code, out = _kill_the_moves_copy(kafka, script, tmp_path / "work", into)
    assert code == 1, out
    assert "FAILED: the state was not moved" in out and "Runbook complete." not in out, out
    assert _partitions(kafka, app.input) == "3"

    # run again, it resumes the move; the operator restarts the app under the new id when
    # the script says so
    app.app_id = new_id
    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    assert "== Step 5: Move the state into" in out
    assert out.count("done before: skipped") == 4, out  # steps 1 to 4
    # the moved changelog holds every increment of every key once, as read_committed
    increments = _increments(produced)
    assert _moved(kafka, into) == increments
    copied = int(re.findall(r"copied this run: (\d+) records", out)[-1])
    assert 0 < copied < increments.total(), out  # the rounds settled before the kill: not again
    # the killed round's records are there too, aborted (a restore under at_least_once,
    # as the runbook restarts the app, reads them: the counts below are still exact)
    assert kcat_count(kafka, into, "read_uncommitted") > increments.total()
    # restored from the moved changelog before reading a record: every key's whole count
    assert _counts(_dumped(dump)) == produced, dump[-2000:]
    assert _partitions(kafka, app.input) == "6"
    assert _partitions(kafka, f"{new_id}-counts-changelog") == "6"
    barrier = {(app.input, str(p), str(o)) for p, o in ends.items()}
    new = set(group_offsets(kafka, new_id))
    assert barrier <= new, new  # each old partition read on from the barrier

    # a third round, placed at 6 partitions: counted on top of the whole history
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    counts = _counts(after.state)
    whole = produced + Counter(key for key, _ in more)
    _exact(counts, whole)
    assert after.values("counts") == Counter(dict.fromkeys(whole, 1))  # no key split

    # nothing of the old app was deleted: the way back
    assert _partitions(kafka, f"{old_id}-counts-changelog") == "3"
    assert group_offsets(kafka, old_id) == old_offsets


def test_a_trimmed_count_app_moves_onto_a_copy_and_its_input_is_left_as_it_was(
    kafka: Kafka, tmp_path: Path
) -> None:
    """``--strategy move-state --into``: the input is copied at the barrier, not altered.
    Retention deleted the first round only, so the copy holds the second, which the app
    counted before the barrier: the new id reads on from the copy's ends, and a count that
    read the copy again would be off by the second round."""
    app = StreamsApp(kafka, "count")
    first, second = phase1(), phase2()
    app.produce(app.input, first)
    deleted = {p: end for p, (_, end) in _log(kafka, app.input).items()}
    app.produce(app.input, second)
    produced = Counter(key for key, _ in [*first, *second])
    ran = app.run()
    assert ran.code == 0, ran.stderr[-2000:]
    assert _counts(ran.state) == produced
    trim(kafka, app.input, deleted, tmp_path / "delete.json")
    kept = _log(kafka, app.input)
    assert {p: start for p, (start, _) in kept.items()} == deleted

    topology = app.describe(tmp_path / "topology.txt")
    into = f"{app.input}-copy6"
    p = app.migcheck(
        "runbook", "--topic", app.input, "--to", "6", "--topology", str(topology),
        "--state-dir", str(app.state_dir), "--strategy", "move-state", "--into", into,
        "--format", "sh",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")

    old_id, new_id, old_input = app.app_id, f"{app.app_id}-p6", app.input
    app.app_id, app.input = new_id, into  # the operator restarts it as the script says
    # the producers resume on the copy when the script switches them, before the restart
    more = phase2()
    code, out, dump = execute_yes(script, app, tmp_path / "work", switched=more)
    assert code == 0, out
    assert "Runbook complete." in out
    assert "MANUAL: Switch every producer of" in out
    # restored from the moved changelog and read on from the copy's ends: every key's
    # count is its whole history, the second round counted once, no key split over tasks
    whole = produced + Counter(key for key, _ in more)
    rows = _dumped(dump)
    _exact(_counts(rows), whole)
    assert Counter(key for store, key, _ in rows if store == "counts") == Counter(
        dict.fromkeys(whole, 1)
    )
    assert len(_log(kafka, into)) == len(_log(kafka, f"{new_id}-counts-changelog")) == 6

    # the input is left as it was (its 3 partitions, log starts and ends), and nothing of
    # the old app was deleted
    assert len(kept) == 3 and _log(kafka, old_input) == kept
    assert len(_log(kafka, f"{old_id}-counts-changelog")) == 3


def test_a_store_behind_a_repartition_topic_moves_and_every_rekeyed_count_is_exact(
    kafka: Kafka, tmp_path: Path
) -> None:
    """The counts are keyed by the record's value (50 of them), re-keyed through a
    repartition topic: the changelog was placed by the value under the repartition topic's
    3 partitions, and the new id's repartition topic comes at 6, as its input."""
    app = StreamsApp(kafka, "rekey-count")
    history = [*phase1(), *phase2()]
    produced = Counter(value for _, value in history)
    ends = _counted_and_trimmed(app, history, produced, tmp_path)
    script = _runbook(app, tmp_path)

    old_id, new_id = app.app_id, f"{app.app_id}-p6"
    app.app_id = new_id
    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    # restored from the moved changelog before reading a record: every re-keyed count
    _exact(_counts(_dumped(dump)), produced)
    assert _partitions(kafka, f"{new_id}-counts-changelog") == "6"
    assert _partitions(kafka, f"{new_id}-rekey-group-repartition") == "6"
    barrier = {(app.input, str(p), str(o)) for p, o in ends.items()}
    assert barrier <= set(group_offsets(kafka, new_id))

    # a third round through the new repartition topic: counted on top of the whole history
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    _exact(_counts(after.state), produced + Counter(value for _, value in more))
    assert set(after.values("counts").values()) == {1}  # no value's count split over tasks
    assert _partitions(kafka, f"{old_id}-counts-changelog") == "3"


def test_a_streams_protocol_app_moves_its_state_and_its_new_group_starts_at_the_barrier(
    kafka: Kafka, tmp_path: Path
) -> None:
    """KIP-1071: the new id's offsets are committed with kafka-consumer-groups before its
    first member joins, which makes it an empty classic group; the first streams member's
    join converts it into a streams group and keeps them (FINDINGS.md).  A round counted
    after the trim lies between the log start and the barrier: a new group that started
    anywhere but at the barrier would count it twice."""
    app = StreamsApp(kafka, "count", protocol="streams")
    history = [*phase1(), *phase2()]
    produced = Counter(key for key, _ in history)
    _counted_and_trimmed(app, history, produced, tmp_path)
    after_trim = phase2()
    app.produce(app.input, after_trim)
    counted = app.run()
    assert counted.code == 0, counted.stderr[-2000:]
    produced += Counter(key for key, _ in after_trim)
    assert _counts(counted.state) == produced
    script = _runbook(app, tmp_path)

    app.app_id = f"{app.app_id}-p6"
    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    # restored from the moved changelog, and read on from the barrier: nothing twice
    _exact(_counts(_dumped(dump)), produced)
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    _exact(_counts(after.state), produced + Counter(key for key, _ in more))


#: Why a refused store cannot move, as the runbook's line ends for each of item 3's kinds.
_OWN_CHANGELOG = (
    "only key-value stores that log to a changelog of their own can be moved so far; keep the "
    "whole history and use another --strategy"
)
_STREAM_TIME = (
    "their results follow stream time, which a merged task does not share with its old tasks"
)


def test_each_store_that_cannot_move_is_refused_in_its_own_line(
    kafka: Kafka, tmp_path: Path
) -> None:
    """Item 3's refusals on real apps: a store with logging disabled, a table that reads its
    source topic as its changelog (topology.optimization), a window and a session store.
    Each app runs once, at the same time, over a few records of one shared input: its
    group then exists (an app never run is no app to migcheck), and Kafka Streams creates
    the changelogs it keeps with its own cleanup.policy."""
    shared = kafka.create_topic("move-state-refusals", 3)
    apps = {
        t: StreamsApp(kafka, t, shared_input=shared)
        for t in ("count-nolog", "source-changelog", "windowed", "session")
    }
    apps["windowed"].produce(shared, phase1()[:30])
    with ThreadPoolExecutor(len(apps)) as pool:
        for t, ran in zip(apps, pool.map(StreamsApp.run, apps.values()), strict=True):
            assert ran.code == 0, f"{t}: {ran.stderr[-2000:]}"
    said = {
        "count-nolog": "the store counts logs to no changelog (logging disabled: there is no "
        "{app}-counts-changelog), so its state is nowhere to move from: " + _OWN_CHANGELOG,
        "source-changelog": "the table source-table reads its source topic as its changelog "
        "(topology.optimization: there is no {app}-source-table-changelog): " + _OWN_CHANGELOG,
        "windowed": "{app}-wcounts-changelog is a window or session store's changelog "
        f"(cleanup.policy compact,delete): {_STREAM_TIME}: {_OWN_CHANGELOG}",
        "session": "{app}-scounts-changelog is a window or session store's changelog "
        f"(cleanup.policy compact,delete): {_STREAM_TIME}: {_OWN_CHANGELOG}",
    }
    for t, app in apps.items():
        topology = app.describe(tmp_path / f"{t}.txt")
        p = app.migcheck(
            "runbook", "--topic", shared, "--to", "6", "--topology", str(topology),
            "--strategy", "move-state",
        )  # fmt: skip
        line = said[t].format(app=app.app_id)
        assert (p.returncode, p.stderr) == (
            1,
            f"migcheck: refused: --strategy move-state for {app.app_id}: {line}\n",
        ), p.stderr
        assert p.stdout == ""
    assert _partitions(kafka, shared) == "3"  # nothing changed
