"""--strategy auto on real apps, and an app whose group is gone.

- A real app whose state sits behind a repartition topic (``selectKey`` on the value,
  then a count per value): auto picks in place, and the runbook, executed, leaves every
  count equal to the truth counted from the records produced.  A plain group of the topic
  (``--group``, issue 71) keeps each key in order through the alter: at its defaults it
  reads exactly the records written after it, each key in order.
- The direct count app: auto picks a new topic and names the store that reads the topic.
- An app whose group was deleted (``kafka-consumer-groups --delete``) while its internal
  topics stay: ``runbook --topic`` and ``app --topic`` take the topic on the user's word
  and say so.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafkatest import Kafka, read_as_group, read_records, subscribe_once_known
from runbookops import Operator, execute_yes
from streamsapp import StreamsApp, phase1, phase2

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]

BIN = Path(sys.executable).parent


def _counts(state: list[tuple[str, str, str]]) -> dict[str, int]:
    return {k: int(v) for s, k, v in state if s == "counts"}


def test_auto_alters_in_place_when_the_state_sits_behind_a_repartition_topic(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = StreamsApp(kafka, "rekey-count")
    app.produce(app.input, phase1())
    first = app.run()
    assert first.code == 0, first.stderr[-2000:]
    assert _counts(first.state) == dict(Counter(v for _, v in phase1()))
    audit = kafka.unique("audit")  # a plain group that read it all, its consumers stopped
    read_as_group(kafka, app.input, audit, len(phase1())).close()

    topology = app.describe(tmp_path / "topology.txt")
    p = app.migcheck(
        "runbook", "--topic", app.input, "--to", "6", "--topology", str(topology),
        "--format", "sh", "--state-dir", str(app.state_dir), "--group", audit,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "--strategy auto chose in-place: no store reads" in p.stdout
    assert f"The plain groups {audit} keep each key in order through the alter." in p.stdout
    # no copy step (the script's prelude names the state move's helper, whatever the
    # strategy: a step runs the command as the new-topic test below finds it), no new topic
    assert "migcheck copy --bootstrap-server" not in p.stdout and "-p6" not in p.stdout
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")

    code, out, dump = execute_yes(script, app, tmp_path / "work")
    assert code == 0, out
    assert "Runbook complete." in out and "migcheck app: healthy" in out
    # the reprocess counted every record once, each in the task its value belongs to
    state = [tuple(ln.split("\t")[1:4]) for ln in dump.splitlines() if ln.startswith("STATE\t")]
    assert _counts(state) == dict(Counter(v for _, v in phase1()))  # type: ignore[arg-type]

    # audit's consumers start again at their defaults (auto.offset.reset=latest): the
    # runbook committed the start of each new partition, so they miss nothing written there
    resumed = KafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=audit)
    subscribe_once_known(resumed, app.input)
    later = [(k, f"s{j}") for j in range(3) for k, _ in phase2()]  # each key's in order
    app.produce(app.input, later)  # the producers write on, into 6 partitions
    after = app.run()
    assert after.code == 0 and after.crash is None, after.stderr[-2000:]
    assert _counts(after.state) == dict(Counter(v for _, v in phase1() + later))
    read = read_records(resumed, len(later))
    resumed.close()
    assert Counter(read) == Counter(later)  # nothing of phase 1 again, nothing skipped
    assert all([v for k, v in read if k == key] == ["s0", "s1", "s2"] for key, _ in phase2())
    for internal in ("rekey-group-repartition", "counts-changelog"):
        assert kafka.partition_count(f"{app.app_id}-{internal}") == 6, internal


def test_auto_copies_when_a_store_reads_the_topic_directly(kafka: Kafka, tmp_path: Path) -> None:
    app = StreamsApp(kafka, "count")
    app.produce(app.input, phase1()[:30])
    assert app.run().code == 0
    topology = app.describe(tmp_path / "topology.txt")
    p = app.migcheck("runbook", "--topic", app.input, "--to", "6", "--topology", str(topology))
    assert p.returncode == 0, p.stderr
    assert f"--strategy auto chose new-topic: the store counts reads {app.input} directly" in (
        " ".join(p.stdout.split())
    )
    assert f"migcheck copy --bootstrap-server {kafka.bootstrap}" in p.stdout

    other = kafka.create_topic(kafka.unique("unread"), 3)  # the group committed offsets
    refused = app.migcheck("runbook", "--topic", other, "--to", "6")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr == (
        f"migcheck: error: topic {other!r} is not read by application {app.app_id!r}: its "
        f"group shows it reading {app.input}; if it reads {other} too, pass --topology (the app's "
        "Topology#describe())\n"
    )


def test_an_app_whose_group_is_gone_is_taken_on_the_users_word(
    kafka: Kafka, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The four judgements (runbook twice, app, plan; none starts Spark) run in this
    process (``here``): four processes' starts less."""
    app = StreamsApp(kafka, "count")
    app.produce(app.input, phase1()[:30])
    assert app.run().code == 0
    rc, out, err = kafka.tool("kafka-consumer-groups", "--bootstrap-server", kafka.bootstrap,
                              "--delete", "--group", app.app_id)  # fmt: skip
    assert rc == 0, out + err
    internal = f"{app.app_id}-counts-changelog"
    rc, listed, _ = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    assert internal in listed.split()  # what stays behind

    p = app.migcheck("runbook", "--topic", app.input, "--to", "6", here=capsys)
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert "auto chose new-topic" in text  # without --topology, the safe strategy
    assert f"The group {app.app_id} has no committed offsets: {app.input} was taken as a " in text
    assert "on your word (--topic)" in text
    assert f"--internal-topics {internal}" in text  # the reset still deletes the changelog

    judged = app.migcheck("app", "--topic", app.input, "--to", "6", here=capsys)
    assert judged.returncode == 1, judged.stderr  # CRASH: the changelog has 3 partitions
    said = " ".join(judged.stdout.split())
    assert f"the group {app.app_id} does not exist" in said and "on your word" in said

    planned = app.migcheck("plan", "--to", f"{app.input}=6", here=capsys)
    assert planned.returncode in (0, 1), planned.stderr  # 1: the change would crash the app
    said = " ".join(planned.stdout.split())
    assert f"{app.input} is taken as a source on your word (the topic you named)" in said

    # Executed: a group that is gone counts as empty, and the change goes through.
    sh = app.migcheck("runbook", "--topic", app.input, "--to", "6", "--format", "sh",
                      "--state-dir", str(app.state_dir), here=capsys)  # fmt: skip
    assert sh.returncode == 0, sh.stderr
    script = tmp_path / "runbook.sh"
    script.write_text(sh.stdout, encoding="utf-8")
    operator = Operator(script, app, tmp_path / "work", yes=True, inject=False)
    code, out = operator.run()
    operator.done()
    assert code == 0 and "Runbook complete." in out, out
    assert "still has members" not in out
    app.produce(app.input, phase2())
    after = app.run()
    assert after.code == 0, after.stderr[-2000:]
    assert _counts(after.state) == dict(Counter(k for k, _ in phase1()[:30] + phase2()))
