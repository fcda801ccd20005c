"""Every non-zero exit says why on stderr, also when the report goes to --output.

The reports are the hand-built ones of tests/support/sample_report.py (an unpredictable
topic and a failed gate) and an offline plan; each expected line is written out here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sample_report import report

from migcheck.errors import EXIT_UNPREDICTABLE, UnpredictableError
from migcheck.report.why import analyze_lines, app_lines, plan_lines

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def test_cannot_predict_has_its_own_exit_code_apart_from_bad_input() -> None:
    assert EXIT_UNPREDICTABLE == 3
    assert UnpredictableError("x").exit_code == 3


def test_analyze_names_each_unpredictable_topic_then_the_gate() -> None:
    lines = analyze_lines(report())  # type: ignore[arg-type]
    assert lines == [
        "custom: CANNOT PREDICT: no known partitioner placed every key where it is",
        "gate failed: orders: 65.5% of keys move at 6 partitions (limit 60.0%)",
    ]


def test_a_safe_app_and_a_safe_plan_say_nothing() -> None:
    app = {"candidates": [{"verdict": "SAFE", "partitions": 6, "reasons": []}], "state": None}
    assert app_lines(app) == []  # type: ignore[arg-type]
    assert plan_lines({"proposed": None}) == []  # type: ignore[typeddict-item]


def test_app_names_the_verdict_the_count_and_the_first_reason() -> None:
    reason = {"level": "CRASH", "text": "Existing internal topic shop-counts-changelog has "
              "invalid partitions: expected: 6; actual: 3.", "subtopology": 0, "topics": [],
              "stores": []}  # fmt: skip
    app = {"candidates": [{"verdict": "CRASH", "partitions": 6, "reasons": [reason]}]}
    assert app_lines(app) == [  # type: ignore[arg-type]
        "CRASH at 6 partitions: Existing internal topic shop-counts-changelog has invalid "
        "partitions: expected: 6; actual: 3."
    ]


def test_plan_with_output_still_says_why_it_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    p = subprocess.run(
        [sys.executable, "-m", "migcheck", "plan", "--topology", str(DESCRIBE / "count.txt"),
         "--partitions", "orders=3", "--to", "orders=6", "--format", "json",
         "--output", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert lines[-1].startswith("migcheck: CRASH: "), p.stderr
    assert "counts-changelog" in lines[-1]
    assert out.exists()
