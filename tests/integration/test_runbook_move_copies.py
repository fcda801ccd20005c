"""A real Kafka Streams count app on a topic that retention trimmed to its end, moved
with ``--strategy move-state``: the two routes that copy the most (split from
test_runbook_move_state.py, whose docstring tells the scenario, so that neither file holds
one xdist worker for ten minutes; their helpers are tests/support/movestate.py).

- The move killed midway: the app's changelog also holds the counts of many keys counted
  before, whose input retention deleted long ago: the move's copy then runs rounds, and it
  is killed in the middle of one (issue 70: a killed move resumes from its checkpoint).
  The script says so and stops with nothing altered; run again, it resumes the move, every
  count is still exact, and the moved changelog holds every increment of every key once,
  as read_committed.
- The copy route (``--into``), for a set (issue 71): a join app's two topics are each
  copied at the barrier, not altered, and the new id reads on from the copies' ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import time
from collections import Counter
from pathlib import Path

import pytest
from copykill import kcat_count, kill, resume, session_pids, wait_mid_round
from kafka import KafkaConsumer, TopicPartition
from kafkatest import Kafka, read_as_group, read_records, subscribe_once_known
from movestate import auto_script, counted_and_trimmed, counts, dumped, exact, partitions
from runbookops import Detached, execute_yes
from streamsapp import KEYS, StreamsApp, joined_counts, phase1, phase2
from trimming import group_offsets, trim

from migcheck.copy.rounds import CHUNK  # sizes the data, never an expected value

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.usefixtures("on_connect_server")]


def _counted_before(kafka: Kafka, changelog: str) -> Counter[str]:
    """Keys the app counted before the test's rounds, their input long deleted by
    retention: each one's one or two increments written into the app's changelog as the
    app writes them (a long, 8 bytes big-endian, on the key's partition), in one call, so
    only its latest record is right.  Enough of them that the move's copy runs rounds
    (CHUNK records per source partition each), so a kill lands between two, each chunk
    with some 33,000 latest records (the move copies only those) for the kill to land in:
    with 10 increments a key, a chunk kept 5,000, and under the suite's load the copy
    ended before a round could be caught in flight."""
    records = 3 * (2 * CHUNK + CHUNK // 5)
    counted = Counter({f"h{i}": 1 + i % 2 for i in range(2 * records // 3)})
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


def test_a_trimmed_count_app_moves_its_state_and_every_key_keeps_its_whole_history(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = StreamsApp(kafka, "count")
    history = [*phase1(), *phase2()]  # two rounds
    produced = Counter(key for key, _ in history)
    # retention deletes every record the app (and a plain group, issue 71) has read
    audit = kafka.unique("audit")
    ends = counted_and_trimmed(app, history, produced, tmp_path, groups=(audit,))
    old_id, new_id = app.app_id, f"{app.app_id}-p6"
    produced += _counted_before(kafka, f"{old_id}-counts-changelog")

    # without the topology a store with logging disabled could hide: refused, naming it
    unseen = app.migcheck(
        "runbook", "--topic", app.input, "--to", "6", "--strategy", "move-state", here=capsys
    )
    assert unseen.returncode == 2, unseen.stderr
    assert unseen.stderr == (
        f"migcheck: error: --strategy move-state: {app.app_id}: without --topology a store "
        "with logging disabled, or a source topic used as a changelog, cannot be ruled out "
        "(pass the app's Topology#describe() with --topology to decide)\n"
    )

    script = auto_script(app, tmp_path, capsys, extra=("--group", audit))

    # the move's copy is killed in the middle of a round: the script stops, nothing altered
    old_offsets = group_offsets(kafka, old_id)
    into = f"{new_id}-counts-changelog"
    code, out = _kill_the_moves_copy(kafka, script, tmp_path / "work", into)
    assert code == 1, out
    assert "FAILED: the state was not moved" in out and "Runbook complete." not in out, out
    assert partitions(kafka, app.input) == "3"

    # run again, it resumes the move; the operator restarts the app under the new id when
    # the script says so
    app.app_id = new_id
    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out
    assert "== Step 5: Move the state into" in out
    assert out.count("done before: skipped") == 4, out  # steps 1 to 4
    # the moved changelog holds each key's latest increment (its count) once, as
    # read_committed: a key-value store's changelog moves with --latest-per-key
    latest = Counter((key, n) for key, n in produced.items())
    assert _moved(kafka, into) == latest
    copied = int(re.findall(r"copied this run: (\d+) records", out)[-1])
    assert 0 < copied < latest.total(), out  # the rounds settled before the kill: not again
    # the killed round's records are there too, aborted (a restore under at_least_once,
    # as the runbook restarts the app, reads them: the counts below are still exact)
    assert kcat_count(kafka, into, "read_uncommitted") > latest.total()
    # restored from the moved changelog before reading a record: every key's whole count
    assert counts(dumped(dump)) == produced, dump[-2000:]
    assert partitions(kafka, app.input) == "6"
    assert partitions(kafka, f"{new_id}-counts-changelog") == "6"
    barrier = {(app.input, str(p), str(o)) for p, o in ends.items()}
    new = set(group_offsets(kafka, new_id))
    assert barrier <= new, new  # each old partition read on from the barrier

    # a third round, placed at 6 partitions: counted on top of the whole history, and
    # read by audit's consumers at their defaults (latest): the alter's step committed the
    # start of each new partition, so they miss none of it and read nothing again
    resumed = KafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=audit)
    subscribe_once_known(resumed, app.input)
    more = phase2()
    app.produce(app.input, more)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    counted = counts(after.state)
    whole = produced + Counter(key for key, _ in more)
    exact(counted, whole)
    assert after.values("counts") == Counter(dict.fromkeys(whole, 1))  # no key split
    read = read_records(resumed, len(more))
    resumed.close()
    assert Counter(read) == Counter(more)

    # nothing of the old app was deleted: the way back
    assert partitions(kafka, f"{old_id}-counts-changelog") == "3"
    assert group_offsets(kafka, old_id) == old_offsets


def test_a_trimmed_join_app_moves_onto_copies_of_both_sides_left_as_they_were(
    spark, kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--strategy move-state --into`` for a set (issue 71): join-rekey's orders and
    customers are each copied at the barrier (``--into`` each, in order), not altered.
    Retention deleted the orders' first round only, so the copy holds the second, which
    the app counted before the barrier: the new id reads on from the copies' ends, and a
    count that read a copy again would be off by the second round.  The table's store,
    named after its topic, is moved under the copy's name, so new orders join customers
    that only the moved state holds.  A plain group of the orders moves in the same
    runbook, committed at its copy's end at the barrier.  (Several apps onto copies are
    laid side by side as in place, tests/unit/test_runbook.py; this file's time is kept
    for the one app.)"""
    app = StreamsApp(kafka, "join-rekey")
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    first, second = phase1(), phase2()
    app.produce(app.input, first)
    deleted = {p: end for p, (_, end) in _log(kafka, app.input).items()}
    app.produce(app.input, second)
    produced = joined_counts([*first, *second])
    ran = app.run()
    assert ran.code == 0, ran.stderr[-2000:]
    assert counts(ran.state) == produced
    audit = kafka.unique("audit")  # a plain group of the orders, moved with the app
    read_as_group(kafka, app.input, audit, len(first) + len(second)).close()
    trim(kafka, app.input, deleted, tmp_path / "delete.json")
    kept, table_kept = _log(kafka, app.input), _log(kafka, app.table)
    assert {p: start for p, (start, _) in kept.items()} == deleted

    topology = app.describe(tmp_path / "topology.txt")
    into, table_into = f"{app.input}-copy6", f"{app.table}-copy6"
    p = app.migcheck(
        "runbook", "--topic", app.input, "--topic", app.table, "--to", "6", "--topology",
        str(topology), "--state-dir", str(app.state_dir), "--strategy", "move-state",
        "--into", into, "--into", table_into, "--group", audit, "--format", "sh", here=capsys,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")

    old_id, new_id, old_input, old_table = app.app_id, f"{app.app_id}-p6", app.input, app.table
    app.app_id, app.input, app.table = new_id, into, table_into  # as the script says
    # the producers resume on the copies when the script switches them, before the restart
    more = phase2()
    code, out, dump = execute_yes(script, app, tmp_path / "work", switched=more)
    assert code == 0, out
    assert "Runbook complete." in out
    assert f"MANUAL: Switch every producer of {old_input} to {into} and {old_table} to" in out
    # restored from the moved changelogs and read on from the copies' ends: every joined
    # value's count is its whole history, the second round counted once, none split
    whole = produced + joined_counts(more)
    rows = dumped(dump)
    exact(counts(rows), whole)
    assert Counter(key for store, key, _ in rows if store == "counts") == Counter(
        dict.fromkeys(whole, 1)
    )
    table_changelog = f"{new_id}-{table_into}-STATE-STORE-0000000000-changelog"
    for topic in (into, table_into, f"{new_id}-counts-changelog", table_changelog):
        assert len(_log(kafka, topic)) == 6, topic

    # audit's consumers, started on the copy at their defaults, read on from its end at
    # the barrier: exactly the records written after the switch
    resumed = KafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=audit)
    subscribe_once_known(resumed, into)
    read = read_records(resumed, len(more))
    resumed.close()
    assert Counter(read) == Counter(more)

    # both topics are left as they were (3 partitions, log starts and ends), and nothing
    # of the old app was deleted
    assert _log(kafka, old_input) == kept and _log(kafka, old_table) == table_kept
    assert len(_log(kafka, f"{old_id}-counts-changelog")) == 3
