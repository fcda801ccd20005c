"""A real Kafka Streams app on a topic that retention trimmed (here kafka-delete-records, as
issue 68 measured it): no runbook and no ``migrate`` reprocesses it unless the operator
accepts the loss by name.

- Written after the trim, the runbook is refused for every strategy that reprocesses, and
  ``migrate`` too, in one line each that names every partition's log start offset as
  Kafka's own kafka-get-offsets reports it, and the way out (``auto`` moves the state
  instead: tests/integration/test_runbook_move_state.py runs it).
- A runbook written before the trim stops when it is executed after it, at its
  pre-checks, and changes nothing: the topic keeps its count, the group its offsets.
- Written with --accept-lost-history, it runs to the end and says so on its own lines.
- ``app`` and the gate name the move instead (every store can move); ``app --state`` says
  the store's route with its changelog's records and bytes as Kafka's own
  kafka-get-offsets and kafka-log-dirs report them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from runbookops import execute_yes
from streamsapp import StreamsApp, phase1
from trimming import group_offsets, log_dir_size, offsets, trim

pytestmark = [pytest.mark.kafka, pytest.mark.usefixtures("on_connect_server")]


def test_a_trimmed_topic_is_refused_when_written_and_when_run_unless_accepted(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = StreamsApp(kafka, "rekey-count")
    app.produce(app.input, phase1())
    first = app.run()
    assert first.code == 0, first.stderr[-2000:]
    topology = app.describe(tmp_path / "topology.txt")
    common = (
        "--topic", app.input, "--to", "6", "--topology", str(topology),
        "--state-dir", str(app.state_dir),
    )  # fmt: skip
    before = app.migcheck("runbook", *common, "--format", "sh")
    assert before.returncode == 0, before.stderr
    written_before = tmp_path / "before.sh"
    written_before.write_text(before.stdout, encoding="utf-8")

    # retention deletes every record the app has counted so far
    ends = offsets(kafka, app.input, "-1")
    trim(kafka, app.input, ends, tmp_path / "delete.json")
    starts = offsets(kafka, app.input, "-2")
    assert starts == ends and any(starts.values())
    where = f"{app.input} partition " + ", ".join(
        f"{p} from offset {o}" for p, o in sorted(starts.items()) if o > 0
    )

    # 1. at generation: every strategy that reprocesses, and migrate, refused in one line,
    # exit 1; auto moves the state instead (its counts store logs to a changelog of its own)
    auto = app.migcheck("runbook", *common)
    assert auto.returncode == 0, auto.stderr
    assert "> --strategy auto chose move-state: the sources no longer hold their whole " in (
        auto.stdout
    )
    # online seeds migrate's shadow with the moved state instead of rebuilding it
    online = app.migcheck("runbook", *common, "--strategy", "online")
    assert online.returncode == 0, online.stderr
    assert " --shadow-state move " in online.stdout
    assert "sources no longer hold their whole history and every store can move, so " in (
        online.stdout
    )
    for asked, said in (("in-place", "in-place"), ("new-topic", "new-topic")):
        p = app.migcheck("runbook", *common, "--strategy", asked)
        assert p.returncode == 1, (asked, p.stderr)
        assert p.stdout == ""
        assert p.stderr.count("\n") == 1, p.stderr
        assert p.stderr.startswith(
            f"migcheck: refused: --strategy {said} would rebuild the state of {app.app_id} by "
            f"reprocessing sources that no longer hold their whole history ({where}): up to "
            f"{sum(starts.values())} records deleted"
        ), p.stderr
        assert p.stderr.rstrip().endswith(
            "move the state instead (--strategy move-state), or pass --accept-lost-history to "
            "reprocess without them"
        )
    m = app.migcheck(
        "migrate", "--topic", app.input, "--to", "6", "--output-topic", "",
        "--checkpoint", str(tmp_path / "m.json"),
    )  # fmt: skip
    assert m.returncode == 1, m.stdout + m.stderr
    assert m.stderr.startswith(
        f"migcheck: refused: migrate's shadow would rebuild the state of {app.app_id} by "
        f"reprocessing sources that no longer hold their whole history ({where})"
    ), m.stderr
    assert m.stderr.count("\n") == 1
    rc, listed, _ = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap, "--list")
    assert rc == 0 and f"{app.input}-p6" not in listed.split()  # migrate created nothing

    # app and the gate say the same: every reprocess would lose it, and the way out is named:
    # the state moved (its one store logs to a key-value changelog of its own)
    a = app.migcheck("app", "--topic", app.input, "--to", "6", "--topology", str(topology),
                     "--state", "--format", "json")  # fmt: skip
    report = json.loads(a.stdout)
    (cand,) = report["candidates"]
    assert cand["verdict"] == "CRASH"  # the repartition topic keeps 3 partitions
    assert cand["lost_history"].startswith(
        "migcheck runbook --strategy move-state (offline) and migcheck migrate --shadow-state "
        "move (online) move the app's state to the new count and reprocess nothing (every "
        "store can move); every other remedy (migcheck runbook's other strategies, migrate's "
        f"rebuilt shadow) rebuilds it by reprocessing sources that no longer hold their whole "
        f"history ({where})"
    )
    assert cand["move_state"] is True
    # app --state: the store's route, its changelog's size as Kafka's own tools say it
    changelog = f"{app.app_id}-counts-changelog"
    in_range = [e - s for (_, e), (_, s) in zip(sorted(offsets(kafka, changelog, "-1").items()),
                sorted(offsets(kafka, changelog, "-2").items()), strict=True)]  # fmt: skip
    assert report["state"]["routes"] == [
        {"store": "counts", "changelog": changelog, "movable": True, "records": sum(in_range),
         "bytes": log_dir_size(kafka, changelog), "reason": None},
    ]  # fmt: skip
    assert sum(in_range) > 0
    g = run_cli("gate", "--bootstrap-server", kafka.bootstrap, "--change", f"{app.input}=6",
                "--topology", f"{app.app_id}={topology}", "--format", "json")  # fmt: skip
    assert g.returncode == 1, g.stderr
    (change,) = json.loads(g.stdout)["changes"]
    (reader,) = [r for r in change["readers"] if r["id"] == app.app_id]
    assert reader["rules"][-1] == "MC204" and reader["reasons"][-1] == cand["lost_history"]
    assert change["next"][0].endswith("(MC204); every store can move instead, which "
                                      "reprocesses nothing:")  # fmt: skip
    assert change["next"][1].endswith(
        f"--application-id {app.app_id} --topic {app.input} --to 6 --topology {topology} "
        "--strategy move-state"
    )

    # 2. at execution: the runbook written before the trim stops at its pre-checks
    committed = group_offsets(kafka, app.app_id)
    code, out, _ = execute_yes(written_before, app, tmp_path / "work-before")
    assert code == 1, out
    assert (
        "  FAILED: the sources no longer hold their whole history: "
        + "; ".join(f"{app.input} partition {p} from offset {o}" for p, o in sorted(starts.items()))
        + ": a reprocess would rebuild the state without those records"
    ) in out
    assert "== Step 2" not in out
    assert kafka.partition_count(app.input) == 3  # not altered
    assert group_offsets(kafka, app.app_id) == committed  # not reset

    # 3. accepted by name: written, said at its top, and run to the end, said at each check
    # (a reprocess named: auto would move the state, which loses nothing to accept)
    accepted = app.migcheck(
        "runbook", *common, "--format", "sh", "--strategy", "in-place", "--accept-lost-history"
    )
    assert accepted.returncode == 0, accepted.stderr
    assert (
        f"# Accepted (--accept-lost-history): the reprocess rebuilds the state without the "
        f"records retention deleted: {where}." in accepted.stdout
    )
    script = tmp_path / "accepted.sh"
    script.write_text(accepted.stdout, encoding="utf-8")
    code, out, dump = execute_yes(script, app, tmp_path / "work-accepted")
    assert code == 0, out
    said = [line for line in out.splitlines() if line.startswith("  ACCEPTED")]
    assert len(said) == 2, out  # the pre-checks, and right before the reset
    assert "Runbook complete." in out
    # what was accepted is what was lost: the reprocess found nothing left to count
    assert not [ln for ln in dump.splitlines() if ln.startswith("STATE\tcounts\t")], dump
