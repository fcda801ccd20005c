"""The runbook's steps and both renderings, without a cluster: order, quoting, shellcheck.

tests/integration/test_runbook_streams.py runs the script for real; here the script only
prints (no `--execute`), which must need no Kafka tool and touch nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from migcheck.model.runbook import IN_PLACE, NEW_TOPIC, RunbookFacts
from migcheck.report.runbook import render_markdown, render_sh
from migcheck.streams.steps import steps

SHELLCHECK = Path(sys.executable).parent / "shellcheck"


def _facts(**changes: object) -> RunbookFacts:
    base: dict[str, object] = {
        "app_id": "shop-counter",
        "bootstrap": "broker-1:9092,broker-2:9092",
        "command_config": "/etc/kafka/client admin.properties",  # a space, quoted everywhere
        "topic": "orders",
        "partitions": 3,
        "to": 6,
        "new_topic": "orders-p6",
        "strategy": NEW_TOPIC,
        "protocol": "classic",
        "internal": ("shop-counter-counts-changelog",),
        "expected_internal": {"shop-counter-counts-changelog": 6},
        "state_dir": "/var/lib/kafka-streams",
        "verdict": "CRASH",
        "configs": {"retention.ms": "-1"},
    }
    return RunbookFacts(**{**base, **changes})  # type: ignore[arg-type]


def _script(tmp_path: Path, facts: RunbookFacts) -> Path:
    path = tmp_path / "runbook.sh"
    path.write_text(render_sh(facts, steps(facts), "0.1.0", "2026-11-23T00:00:00+00:00"))
    return path


def test_new_topic_steps_come_in_the_safe_order() -> None:
    titles = [s.title for s in steps(_facts())]
    assert titles == [
        "Pre-checks",
        "Stop the application",
        "Create orders-p6 and copy the history into it",
        "Reset the application",
        "Wipe the local state",
        "Restart the application on orders-p6",
    ]
    destructive = [s.title for s in steps(_facts()) if s.destructive]
    assert destructive == ["Reset the application", "Wipe the local state"]


def test_both_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    for facts in (_facts(), _facts(strategy=IN_PLACE, split_keys=205), _facts(command_config=None)):
        p = subprocess.run([str(SHELLCHECK), str(_script(tmp_path, facts))], capture_output=True)
        assert p.returncode == 0, p.stdout.decode()


def test_the_script_prints_every_step_and_acts_only_with_execute(tmp_path: Path) -> None:
    script = _script(tmp_path, _facts())
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work")}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert [ln for ln in p.stdout.splitlines() if ln.startswith("== Step")] == [
        f"== Step {n}: {s.title}" for n, s in enumerate(steps(_facts()), start=1)
    ]
    assert not (tmp_path / "work").exists()  # nothing written, nothing run
    reset = next(ln for ln in p.stdout.splitlines() if "--dry-run" in ln)
    assert "kafka-streams-application-reset" in reset
    assert "--internal-topics shop-counter-counts-changelog" in reset
    assert "--input-topics orders,orders-p6" in reset
    assert "--config-file '/etc/kafka/client admin.properties'" in reset
    bad = subprocess.run(["bash", str(script), "--now"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_a_rerun_resumes_after_the_steps_that_succeeded(tmp_path: Path) -> None:
    script = _script(tmp_path, _facts())
    work = tmp_path / "work"
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(work)}
    work.mkdir()
    (work / "runbook.id").write_text("shop-counter orders 3->6 new-topic orders-p6\n")
    for n in range(1, 7):  # as a run that failed nowhere would have left them
        (work / f"step-{n}.done").touch()
    # --execute, and no Kafka tool on PATH: only skipping every step can succeed
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("done before: skipped") == 6
    assert p.stdout.rstrip().endswith("Runbook complete.")


def test_a_work_directory_of_another_change_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "runbook.id").write_text("shop-counter orders 3->12 new-topic orders-p12\n")
    (work / "step-4.done").touch()
    env = {"PATH": "/usr/bin:/bin", "MIGCHECK_RUNBOOK_DIR": str(work)}
    script = _script(tmp_path, _facts())
    p = subprocess.run(["bash", str(script), "--execute"], capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert "holds the progress of another change (shop-counter orders 3->12" in p.stderr
    assert "== Step" not in p.stdout


def test_markdown_names_the_real_topics_and_warns_about_lost_history() -> None:
    facts = _facts(history_lost=("orders",))
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    first = md.splitlines()[2]
    assert first.startswith("> WARNING: the reprocess will lose data: orders")
    assert "--internal-topics shop-counter-counts-changelog" in md
    assert "migcheck copy --bootstrap-server broker-1:9092,broker-2:9092" in md
    assert "rm -rf -- /var/lib/kafka-streams/shop-counter" in md


def test_in_place_alters_the_topic_and_says_what_splits() -> None:
    facts = _facts(strategy=IN_PLACE, split_keys=205)
    titles = [s.title for s in steps(facts)]
    assert titles[2] == "Alter orders to 6 partitions in place"
    assert "splits the history of 205 keys" in steps(facts)[2].why
    md = render_markdown(facts, steps(facts), "0.1.0", "today")
    assert "--input-topics orders " in md and "orders-p6" not in md
