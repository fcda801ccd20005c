"""The runbook right after the app was stopped the way real apps stop: a plain close().

Most Kafka Streams apps end with ``KafkaStreams#close(Duration)``, which under the
classic protocol does not leave the group: the broker keeps the closed member until its
session.timeout.ms (45 s by default) runs out (fixtures/java/streams/FINDINGS.md, "After
close()").  An operator who stops the app properly and starts the runbook at once meets
that member at step 2.  The runbook must wait for it to time out, not refuse, and then
carry the change through: every count equal to the truth computed from the records
produced.  The app sets session.timeout.ms to 10 s, Kafka's default before 3.0 (KIP-735
raised it to 45 s) and still a common setting: the member outlives the process all the
same, and the test waits 10 s for it each time instead of 45.  Under the streams
protocol the closed member leaves at once, so there is nothing to wait for; the second
test pins that down.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kafkatest import Kafka
from runbookops import Operator
from streamsapp import StreamsApp, phase1, phase2

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]


def _counts(state: list[tuple[str, str, str]]) -> dict[str, int]:
    return {k: int(v) for s, k, v in state if s == "counts"}


def _members(kafka: Kafka, app: StreamsApp) -> str:
    """The group's ``--describe --state`` line for the app, as Kafka's own tool prints it:
    the STATE and #MEMBERS columns come last."""
    tool = "kafka-streams-groups" if app.protocol == "streams" else "kafka-consumer-groups"
    _, out, _ = kafka.tool(tool, "--bootstrap-server", kafka.bootstrap, "--describe",
                           "--group", app.app_id, "--state")  # fmt: skip
    return next((ln for ln in out.splitlines() if ln.startswith(app.app_id + " ")), "")


def test_the_runbook_waits_for_a_plainly_closed_member_then_restores_every_count(
    kafka: Kafka, tmp_path: Path
) -> None:
    # The classic protocol, Kafka Streams' default.  The session outlives the runbook's
    # writing and its step 1 (Kafka's tools, a JVM each) with room on a loaded machine:
    # at 10 s a busy CI run found the member gone by step 2.  Kafka's default is 45 s.
    app = StreamsApp(kafka, "count", session_timeout_ms=30_000)
    old_input = app.input
    app.produce(app.input, phase1())
    first = app.run(close="plain")
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]

    # Right after the exit: generate the runbook and run it, as an operator would.
    p = app.migcheck("runbook", "--topic", app.input, "--to", "6", "--format", "sh",
                     "--state-dir", str(app.state_dir))  # fmt: skip
    assert p.returncode == 0, p.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    operator = Operator(script, app, tmp_path / "work", close="plain", yes=True, inject=False)
    code, out = operator.run()
    operator.done()

    assert code == 0, out
    step2 = out[out.index("== Step 2") : out.index("== Step 3")]
    # The closed member was still there, and the script waited for it instead of refusing.
    assert f"the group {app.app_id} still has members: waiting up to" in step2, step2
    assert f"the group {app.app_id} has no members" in step2, step2
    assert "FAILED" not in out, out
    assert "Runbook complete." in out, out
    assert app.input == f"{old_input}-p6"

    app.produce(app.input, phase2())
    # The restarted app also closed plainly, so this run first waits out its member.
    after = app.run(max_seconds=150, close="plain")
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    truth = Counter(k for k, _ in phase1() + phase2())
    assert _counts(after.state) == dict(truth)


def test_under_the_streams_protocol_a_plain_close_leaves_the_group_at_once(kafka: Kafka) -> None:
    """FINDINGS.md: a streams-protocol member sends its leave on a plain close(), so the
    group is Empty as soon as the process is gone; the runbook has nothing to wait for."""
    app = StreamsApp(kafka, "count", protocol="streams")
    app.produce(app.input, phase1())
    first = app.run(close="plain")
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]
    line = _members(kafka, app)
    assert line.split()[-2:] == ["Empty", "0"], line
