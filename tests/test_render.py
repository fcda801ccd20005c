"""Renderers: every format shows what the report holds, escaped, with estimates as intervals."""

from __future__ import annotations

import copy
import json

from migcheck.render import format_bytes, heatmap_svg, render_json, render_markdown, render_text


def _candidate(m: int, moved: int, matrix: list[list[int]], sampled: bool = False) -> dict:
    return {
        "partitions": m,
        "moved_keys": moved,
        "moved_keys_interval": [moved - 10, moved + 10] if sampled else None,
        "moved_fraction": moved / 1000,
        "moved_fraction_interval": [(moved - 10) / 1000, (moved + 10) / 1000] if sampled else None,
        "expected_moved_fraction": 0.75,
        "moved_records": moved * 3,
        "moved_records_interval": None,
        "moved_bytes": 1536 * 1024,
        "moved_bytes_interval": None,
        "matrix": matrix,
        "load": [{"partition": p, "keys": 10, "bytes": 100} for p in range(m)],
        "skew": 1.25,
        "moved_key_sample": [
            {"key": "evil|<script>", "key_hex": "6576696c", "partition": 1, "new_partition": 3}
        ],
    }


def _report() -> dict:
    m8 = [[(i * 8 + j) % 7 for j in range(8)] for i in range(6)]
    m12 = [[(i + j) % 5 for j in range(12)] for i in range(6)]
    topic = {
        "topic": "orders",
        "cleanup_policy": "delete",
        "current_partitions": 6,
        "partitioner": "murmur2",
        "partitioner_forced": False,
        "predictable": True,
        "conformance": 1.0,
        "conformance_by_partitioner": {"murmur2": 1.0, "consistent_random": 0.2, "fnv1a": 0.1},
        "records_total": 3000,
        "records_scanned": 3000,
        "null_key_records": 7,
        "unhashed_records": 0,
        "non_conforming_records": 0,
        "non_conforming_keys": 0,
        "sampled": False,
        "distinct_keys": 1000,
        "distinct_keys_interval": None,
        "state": "log",
        "state_records": 3000,
        "state_bytes": 4096,
        "partitions": [],
        "candidates": [_candidate(8, 739, m8), _candidate(12, 512, m12)],
        "verdict": {"level": "moves", "text": "STATE MOVES: 73.9% of keys"},
    }
    sampled = copy.deepcopy(topic)
    sampled.update(
        topic="big",
        sampled=True,
        distinct_keys=9000,
        distinct_keys_interval=[8800.0, 9300.0],
        candidates=[_candidate(8, 700, m8, sampled=True)],
    )
    unpredictable = copy.deepcopy(topic)
    unpredictable.update(
        topic="custom",
        partitioner=None,
        predictable=False,
        candidates=[],
        verdict={"level": "unpredictable", "text": "CANNOT PREDICT: custom"},
    )
    return {
        "migcheck_version": "0.1.0",
        "generated_at": "2026-11-22T11:00:00Z",
        "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:9092"},
        "mode": "full",
        "sample_per_partition": None,
        "candidates": [8, 12],
        "topics": [topic, sampled, unpredictable],
        "gate": {
            "fail_if_moved": True,
            "max_moved_fraction": None,
            "failed": True,
            "reason": "orders: 739 keys move at 8 partitions",
        },
    }


def test_json_round_trips() -> None:
    report = _report()
    assert json.loads(render_json(report)) == report


def test_text_shows_candidates_side_by_side_verdicts_and_gate() -> None:
    text = render_text(_report())
    assert "739" in text and "512" in text
    assert "73.9%" in text and "51.2%" in text
    assert "VERDICT: STATE MOVES: 73.9% of keys" in text
    assert "VERDICT: CANNOT PREDICT: custom" in text
    assert "GATE: FAILED, orders: 739 keys move at 8 partitions" in text
    assert "~700 (95%: 690 to 710)" in text  # the sampled topic's estimate
    assert "~9,000 (95%: 8,800 to 9,300)" in text


def test_markdown_has_a_heatmap_per_candidate_and_escapes_keys() -> None:
    md = render_markdown(_report())
    assert md.count("<svg") == 3  # orders: 8 and 12; big: 8
    assert "evil\\|&lt;script&gt;" in md
    assert "<script>" not in md
    assert "| 0 | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 0 |" in md  # row 0 of the 6 -> 8 matrix
    assert "**Gate: FAILED: orders: 739 keys move at 8 partitions**" in md


def test_svg_has_one_rect_per_cell_and_marks_the_diagonal() -> None:
    matrix = [[1, 2, 3], [4, 5, 6]]
    svg = heatmap_svg(matrix, "t <&>")
    assert svg.count("<rect") == 6
    assert svg.count('stroke="#d62728"') == 2  # (0,0) and (1,1) keep their number
    assert "<title>t &lt;&amp;&gt;</title>" in svg
    assert ">6</text>" in svg


def test_large_svg_has_cells_but_no_cell_text() -> None:
    matrix = [[i + j for j in range(200)] for i in range(100)]
    svg = heatmap_svg(matrix, "big")
    assert svg.count("<rect") == 20_000
    assert svg.count("<text") == 2  # only the two axis labels


def test_format_bytes() -> None:
    assert [format_bytes(n) for n in (0, 1023, 1024, 1536 * 1024, 3 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 MiB",
        "3.0 GiB",
    ]


def test_render_command_rerenders_a_saved_report(tmp_path) -> None:
    import subprocess
    import sys

    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(_report()))
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "render", str(saved), "--format", "markdown"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("<svg") == 3 and "## Topic `orders`" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a report"}')
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "render", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2
    assert r.stderr.strip() == f"migcheck: error: {bad}: not a migcheck JSON report (no 'topics')"
