"""`migcheck plan` offline, as a user runs it: its JSON contract, bad input, saved reports.

Offline plans need no broker.  Expected figures are hand arithmetic on the
describe() fixtures of fixtures/java/streams (see tests/unit/test_plan_model.py).
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from oracles import run_cli

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _plan(*args: str):
    return run_cli("plan", *args)


def _one_line_error(p, *words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("migcheck: error: ") and "Traceback" not in p.stderr
    for word in words:
        assert word in p.stderr, p.stderr


def test_offline_json_has_the_documented_figures_and_a_proposal() -> None:
    p = _plan(
        "--topology",
        str(DESCRIBE / "rekey-count.txt"),
        "--partitions",
        "orders=6",
        "--instances",
        "2",
        "--threads",
        "4",
        "--to",
        "orders=12",
        "--format",
        "json",
    )
    assert p.returncode == 1, p.stderr  # the change would crash the app: the gate closes
    r = json.loads(p.stdout)
    assert list(r)[:2] == ["report", "recommendation"] and r["report"] == "plan"
    assert r["recommendation"].startswith("More threads, no partition change")
    assert r["tasks"] == 12 and [s["tasks"] for s in r["subtopologies"]] == [6, 6]
    assert (r["threads"], r["idle_threads"]) == (8, 0)
    assert r["tasks_per_instance"] == [6, 6]
    assert r["mode"] == "offline" and r["assignment"] == "predicted"
    q = r["proposed"]
    assert q["changes"] == {"orders": 12} and q["verdict"] == "CRASH"
    assert q["tasks"] == 24 and q["tasks_per_instance"] == [12, 12]
    assert (
        "<application.id>-rekey-group-repartition has invalid partitions"
        in (q["verdict_reasons"][0])
    )


def test_enough_threads_points_to_partitions_and_the_runbook() -> None:
    p = _plan(
        "--topology",
        str(DESCRIBE / "count.txt"),
        "--partitions",
        "orders=3",
        "--instances",
        "2",
        "--threads",
        "2",
    )
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[2]
    assert first.startswith("Recommendation: Every one of the 3 tasks already has its own thread")
    assert "and follow migcheck runbook." in p.stdout


def test_markdown_and_a_saved_report_render_the_same_plan(tmp_path: Path) -> None:
    args = ["--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=10"]
    saved = tmp_path / "plan.json"
    p = _plan(*args, "--instances", "3", "--format", "json", "--output", str(saved))
    assert p.returncode == 0, p.stderr
    md = _plan(*args, "--instances", "3", "--format", "markdown").stdout
    again = run_cli("render", str(saved), "--format", "markdown")
    assert again.returncode == 0, again.stderr
    assert again.stdout == md
    assert "| tasks per instance | 4/3/3 |" in md


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    count = str(DESCRIBE / "count.txt")
    _one_line_error(_plan(), "--topology and --partitions")
    _one_line_error(_plan("--topology", count), "--topology and --partitions")
    _one_line_error(_plan("--topology", count, "--partitions", "orders"), "is not TOPIC=N")
    _one_line_error(_plan("--topology", count, "--partitions", "orders=x"), "not a partition")
    _one_line_error(_plan("--topology", count, "--partitions", "other=3"), "reads no topic")
    _one_line_error(
        _plan("--topology", str(DESCRIBE / "join.txt"), "--partitions", "orders=3"),
        "--partitions needs",
    )
    _one_line_error(
        _plan("--topology", count, "--partitions", "orders=6", "--to", "orders=3"),
        "below the current 6",
    )
    _one_line_error(
        _plan("--topology", count, "--partitions", "orders=6", "--to", "nope=8"), "no such topic"
    )
    _one_line_error(
        _plan("--topology", count, "--partitions", "orders=6", "--instances", "0"), "--instances"
    )
    _one_line_error(_plan("--topology", str(tmp_path / "missing.txt"), "--partitions", "a=1"))
    _one_line_error(
        _plan("--application-id", "x", "--bootstrap-server", "h:1", "--partitions", "a=1")
    )
    _one_line_error(_plan("--bootstrap-server", "h:1"), "--application-id")


def test_output_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    args = ["--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=3"]
    target = tmp_path / "plan.md"
    p = _plan(*args, "--format", "markdown", "--output", str(target))
    assert p.returncode == 0 and p.stderr == f"migcheck: report written to {target}\n"
    assert target.read_text(encoding="utf-8").startswith("# migcheck plan")
    assert [f.name for f in tmp_path.iterdir()] == ["plan.md"]  # no temporary file left
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)  # a directory it cannot write into
    bad = _plan(*args, "--output", str(locked / "plan.md"))
    locked.chmod(0o700)
    if os.geteuid() != 0:  # root writes anywhere: only the missing directory applies then
        _one_line_error(bad, "--output", "is not writable")
        assert list(locked.iterdir()) == []
    no_dir = tmp_path / "no-dir"
    _one_line_error(_plan(*args, "--output", str(no_dir / "plan.md")), f"{no_dir} does not exist")


def _full_disk() -> None:
    """In the child: files may not grow past 200 bytes, as on a full disk (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


def test_a_full_disk_leaves_the_old_report_whole(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    target.write_text("yesterday's report\n", encoding="utf-8")
    args = ["--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=3"]
    p = subprocess.run(
        [sys.executable, "-m", "migcheck", "plan", *args, "--format", "markdown", "--output",
         str(target)],
        capture_output=True, text=True, timeout=120, preexec_fn=_full_disk, check=False,
    )  # fmt: skip
    _one_line_error(p, "--output", "File too large")
    assert target.read_text(encoding="utf-8") == "yesterday's report\n"
    assert [f.name for f in tmp_path.iterdir()] == ["plan.md"]  # the partial temp file is gone


def test_a_read_only_disk_is_one_line_and_leaves_the_old_report(tmp_path: Path) -> None:
    """The directory is bind-mounted read-only in a user namespace (root ignores chmod)."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    target = tmp_path / "plan.md"
    target.write_text("yesterday's report\n", encoding="utf-8")
    args = ["--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=3"]
    d = shlex.quote(str(tmp_path))
    run = shlex.join([sys.executable, "-m", "migcheck", "plan", *args, "--output", str(target)])
    p = subprocess.run(
        ["unshare", "-rm", "sh", "-c",
         f"mount --bind {d} {d} && mount -o remount,ro,bind {d} && exec {run}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    _one_line_error(p, "--output", "not writable")
    assert target.read_text(encoding="utf-8") == "yesterday's report\n"
    assert [f.name for f in tmp_path.iterdir()] == ["plan.md"]


def test_to_equal_to_todays_count_says_nothing_changes_and_plans_today() -> None:
    """issue 43: --to equal to the current count says that nothing changes, exit 0; a
    plan still answers with today's parallelism (orders=4 on count.txt: 4 tasks)."""
    args = ["--topology", str(DESCRIBE / "count.txt"), "--partitions", "orders=4"]
    p = _plan(*args, "--to", "orders=4", "--format", "json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["proposed"] is None
    assert "nothing changes: orders has 4 partitions already (--to)" in report["notes"][-1]
