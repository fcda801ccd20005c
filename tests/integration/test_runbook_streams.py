"""The runbook, run for real on the Streams fixture app: every count right after the change.

A count-per-key app with a changelog runs on a 3-partition input.  The `sh`
runbook for `--to 6` runs with `--execute`; this test answers its manual
steps the way an operator would (records arrive before the producers switch,
the app restarts on the new topic), and makes each step fail once by injection
(a command that did its work and then reports a failure, or a declined manual
step), running the script again after each.  More records then go to the new
topic, and every key's count must equal the true count of all the records
produced for it.  Before the script, a real `migcheck copy` into the new topic is killed in
the middle of a round (issue 55): the script's copy resumes it, the new topic keeps the
killed transactions' records, aborted, and the app restarted with the setting the runbook
names (``consumer.isolation.level=read_committed``) counts none of them.  The second test
shows what goes wrong without the runbook, and that the refused `--strategy in-place`
names exactly the keys that split.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from copykill import kcat_count, kill, start_copy, wait_mid_round
from kafkatest import KAFKA_LOCAL, Kafka
from runbookops import BIN, Operator
from streamsapp import KEYS, StreamsApp, moved_keys, phase1, phase2

from migcheck.copy.rounds import CHUNK  # sizes the data, never an expected value

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]


def _runbook(app: StreamsApp, *args: str, here: pytest.CaptureFixture[str] | None = None):
    """``runbook --topic INPUT --to 6``; given ``here``, in this process (a new-topic
    runbook starts no Spark)."""
    return app.migcheck("runbook", "--topic", app.input, "--to", "6", *args, here=here)


def _counts(app: StreamsApp, run_state: list[tuple[str, str, str]]) -> dict[str, int]:
    return {k: int(v) for s, k, v in run_state if s == "counts"}


def _late() -> list[tuple[str, str]]:
    """Records produced to the old topic after the first copy, before the producers switch."""
    return [(k, "late") for k in KEYS[:50]]


#: The fault after which the new topic exists (a killed copy then lands in it).
CREATED = r"^kafka-topics .*--create"

#: Where each run of the script fails once, in the order the script reaches them: a
#: command runs to its end and then reports a failure (the worst case for a re-run: the
#: work is done but the script does not know), or the operator declines a manual step.
FAULTS = (
    r"^kafka-get-offsets .*--time -2",  # 1. pre-checks
    r"MANUAL: Stop every instance",  # 2. stop
    CREATED,  # 3. the new topic is created...
    r"^migcheck copy",  # ...and the history copied
    r"^kafka-streams-application-reset .*--dry-run",  # 4. reset: its dry run...
    r"^kafka-streams-application-reset (?!.*--dry-run)",  # ...and the reset itself
    r"MANUAL: On every instance, delete",  # 5. the state wipe
    r"^migcheck app ",  # 6. the restarted app's health
)


def _bulk() -> list[tuple[str, str]]:
    """Enough records after phase 1 that the copy runs rounds (CHUNK records per source
    partition each) and a kill lands between them."""
    return [(KEYS[i % len(KEYS)], "bulk") for i in range(3 * (2 * CHUNK + CHUNK // 5))]


def _kill_a_copy(kafka: Kafka, topic: str, work: Path) -> None:
    """A copy into the new topic (the script has created it) killed in the middle of a
    round, its checkpoint where the script's copy looks for it: the script's next copy
    resumes it."""
    checkpoint = work / "copy.checkpoint"
    proc = start_copy(kafka, topic, f"{topic}-p6", checkpoint)
    try:
        wait_mid_round(kafka, checkpoint, f"{topic}-p6", proc)
    finally:
        kill(proc)


def test_the_runbook_restores_every_count_through_a_killed_copy_and_a_failure_at_each_step(
    kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = StreamsApp(kafka, "count")
    old_input = app.input
    app.produce(app.input, phase1())
    assert app.run().code == 0
    app.produce(app.input, _bulk())

    p = _runbook(app, "--format", "sh", "--state-dir", str(app.state_dir), here=capsys)
    assert p.returncode == 0, p.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    lint = subprocess.run([str(BIN / "shellcheck"), str(script)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    assert "with consumer.isolation.level=read_committed" in p.stdout
    app.isolation_level = "read_committed"  # as the restart step says

    operator = Operator(script, app, tmp_path / "work", late=_late())
    for fault in FAULTS:
        code, out = operator.run(inject=fault)
        assert code != 0, f"{fault}: {out}"
        assert "injected failure after" in out or "stopped at a manual step" in out, out
        assert "Runbook complete." not in out
        if fault == CREATED:  # the new topic exists: a copy into it is killed mid-round
            _kill_a_copy(kafka, old_input, tmp_path / "work")
    code, out = operator.run()
    operator.done()
    assert code == 0, out
    assert out.count("done before: skipped") == 5, out  # it resumed at the restart
    assert "Runbook complete." in out and "migcheck app: healthy" in out
    into = f"{old_input}-p6"
    assert app.input == into
    # the killed round's transactions are in the new topic, aborted: a consumer reading
    # uncommitted records (kcat, as the app would by default) reads more than were produced
    produced = len(phase1() + _bulk() + _late())
    assert kcat_count(kafka, into, "read_committed") == produced
    assert kcat_count(kafka, into, "read_uncommitted") > produced

    app.produce(app.input, phase2())
    after = app.run()
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    truth = Counter(k for k, _ in phase1() + _bulk() + _late() + phase2())
    counts = _counts(app, after.state)
    assert counts == dict(truth)
    changelog = f"{app.app_id}-counts-changelog"
    assert kafka.partition_counts(changelog) == {changelog: 6}


def test_a_running_app_is_named_and_execute_stops_before_touching_anything(
    kafka: Kafka, tmp_path: Path
) -> None:
    """An application id with active members: the runbook says so, and even --yes cannot
    take the script past the check that the group is empty."""
    app = StreamsApp(kafka, "count")
    app.produce(app.input, phase1())
    running = subprocess.Popen(
        app.command(max_seconds=90, run_seconds=90, threads=2),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _until_members(kafka, app.app_id, 2)
        p = _runbook(
            app, "--format", "sh", "--state-dir", str(app.state_dir), "--group-timeout", "6"
        )
        assert p.returncode == 0, p.stderr
        assert "# The group has 2 members now: step 2 stops them." in p.stdout
        script = tmp_path / "runbook.sh"
        script.write_text(p.stdout, encoding="utf-8")
        env = {**os.environ, "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
               "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}  # fmt: skip
        run = subprocess.run(["bash", str(script), "--execute", "--yes"], capture_output=True,
                             text=True, env=env, timeout=300, check=False)  # fmt: skip
    finally:
        running.kill()
        running.wait(timeout=30)
    assert run.returncode == 1, run.stdout
    assert f"the group {app.app_id} still has members; stop every instance first" in run.stderr
    assert "== Step 3" not in run.stdout
    done = sorted(f.name for f in (tmp_path / "work").glob("*.done"))
    assert done == ["step-1.done"]  # the pre-checks (read-only) and nothing after them
    rc, listed, _ = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    assert rc == 0
    assert f"{app.input}-p6" not in listed.split()  # nothing created


def _until_members(kafka: Kafka, group: str, members: int) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        _, out, _ = kafka.tool("kafka-consumer-groups", "--bootstrap-server", kafka.bootstrap,
                               "--describe", "--group", group, "--members")  # fmt: skip
        if sum(1 for line in out.splitlines() if line.startswith(group)) == members:
            return
        time.sleep(1)
    raise AssertionError(f"{group} never had {members} members")


def test_in_place_splits_the_keys_the_refusal_names(kafka: Kafka) -> None:
    app = StreamsApp(kafka, "count")
    app.produce(app.input, phase1())
    assert app.run().code == 0

    refused = _runbook(app, "--strategy", "in-place")
    assert refused.returncode == 1, refused.stderr
    # one line: Spark's banner and log stay in its log file
    assert refused.stderr.startswith("migcheck: refused --strategy in-place: 205 keys")
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    named = {ln for ln in refused.stdout.splitlines() if ln in set(KEYS)}
    assert named == moved_keys(3, 6)
    accepted = _runbook(app, "--strategy", "in-place", "--accept-split-history")
    assert accepted.returncode == 0, accepted.stderr[-1000:]
    assert "This splits the history of 205 keys" in accepted.stdout

    # What the crash message suggests: alter in place, reset, wipe the state, reprocess.
    app.alter(app.input, 6)
    app.produce(app.input, phase2())
    rc, out, err = kafka.tool(
        "kafka-streams-application-reset",
        "--bootstrap-server",
        kafka.bootstrap,
        "--application-id",
        app.app_id,
        "--input-topics",
        app.input,
        "--internal-topics",
        f"{app.app_id}-counts-changelog",
    )
    assert rc == 0, out + err
    subprocess.run(["rm", "-rf", "--", str(app.state_dir / app.app_id)], check=True)
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    split = {k for k, n in after.values("counts").items() if n == 2}
    assert split == named  # each moved key's history now sits in two tasks
