"""The runbook, run for real on the Streams fixture app: every count right after the change.

A count-per-key app with a changelog runs on a 3-partition input.  The `sh`
runbook for `--to 6` runs with `--execute`; this test answers its manual
steps the way an operator would (records arrive before the producers switch,
the app restarts on the new topic).  More records then go to the new topic,
and every key's count must equal the true count of all the records produced
for it.  The second test shows what goes wrong without the runbook, and that
the refused `--strategy in-place` names exactly the keys that split.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, Kafka
from streamsapp import KEYS, StreamsApp, moved_keys, phase1, phase2

pytestmark = pytest.mark.kafka

BIN = Path(sys.executable).parent


def _runbook(app: StreamsApp, *args: str):
    return app.migcheck("runbook", "--topic", app.input, "--to", "6", *args)


def _counts(app: StreamsApp, run_state: list[tuple[str, str, str]]) -> dict[str, int]:
    return {k: int(v) for s, k, v in run_state if s == "counts"}


def _late() -> list[tuple[str, str]]:
    """Records produced to the old topic after the first copy, before the producers switch."""
    return [(k, "late") for k in KEYS[:50]]


def _execute(script: Path, app: StreamsApp, work: Path) -> tuple[int, str]:
    """Run the script with --execute, answering each manual step as an operator would."""
    env = {
        **os.environ,
        "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
        "MIGCHECK_RUNBOOK_DIR": str(work),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    proc = subprocess.Popen(
        ["bash", str(script), "--execute"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[str] = []
    background: subprocess.Popen[str] | None = None
    for line in proc.stdout:
        seen.append(line)
        if "MANUAL: Switch every producer" in line:
            app.produce(app.input, _late())
        elif "MANUAL: Start the application reading" in line:
            app.input = app.input + "-p6"
            background = subprocess.Popen(
                app.command(max_seconds=120), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        if "MANUAL:" in line:
            proc.stdin.write("y\n")
            proc.stdin.flush()
    code = proc.wait(timeout=600)
    if background is not None:
        background.wait(timeout=180)
    return code, "".join(seen)


def test_the_runbook_restores_every_count(kafka: Kafka, tmp_path: Path) -> None:
    app = StreamsApp(kafka, "count")
    old_input = app.input
    app.produce(app.input, phase1())
    assert app.run().code == 0

    p = _runbook(app, "--format", "sh", "--state-dir", str(app.state_dir))
    assert p.returncode == 0, p.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    lint = subprocess.run([str(BIN / "shellcheck"), str(script)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout

    code, out = _execute(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out and "migcheck app: healthy" in out
    assert app.input == f"{old_input}-p6"

    app.produce(app.input, phase2())
    after = app.run()
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    truth = Counter(k for k, _ in phase1() + _late() + phase2())
    counts = _counts(app, after.state)
    assert counts == dict(truth)
    rc, described, _ = kafka.tool(
        "kafka-topics",
        "--bootstrap-server",
        kafka.bootstrap,
        "--describe",
        "--topic",
        f"{app.app_id}-counts-changelog",
    )
    assert rc == 0 and "PartitionCount: 6" in described, described


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
