"""Renderers: every format shows what the report holds, escaped, with estimates as intervals.

The report below is built by hand, and every expected string is written out
from its numbers, never taken from a second call to a renderer.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from migcheck.render import (
    FORMATS,
    format_bytes,
    format_estimate,
    format_fraction,
    heatmap_svg,
    render,
    render_json,
    render_markdown,
    render_text,
)

SVG = "{http://www.w3.org/2000/svg}"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "report-schema.md"

EVIL_KEY = "a|b<script>alert(1)</script>"
MARKUP_KEY = "[bold]x[/] :smile: *y* _z_ `w` [/red]"

# 4 -> 6: a key on partition i (h mod 4) goes to h mod 6, three cells per row.
M4_6 = [
    [34, 0, 33, 0, 33, 0],
    [0, 35, 0, 32, 0, 33],
    [31, 0, 36, 0, 33, 0],
    [0, 30, 0, 33, 0, 37],
]  # stays on the diagonal: 34 + 35 + 36 + 33 = 138 of 400, so 262 move
# 4 -> 8: partition i goes to i or i + 4.
M4_8 = [
    [52, 0, 0, 0, 48, 0, 0, 0],
    [0, 49, 0, 0, 0, 51, 0, 0],
    [0, 0, 47, 0, 0, 0, 53, 0],
    [0, 0, 0, 50, 0, 0, 0, 50],
]  # 52 + 49 + 47 + 50 = 198 stay, 202 move


def _candidate(m: int, matrix: list[list[int]], **figures: Any) -> dict[str, Any]:
    cand: dict[str, Any] = {
        "partitions": m,
        "moved_keys": 0,
        "moved_keys_interval": None,
        "moved_fraction": 0.0,
        "moved_fraction_interval": None,
        "expected_moved_fraction": 0.0,
        "moved_records": 0,
        "moved_records_interval": None,
        "moved_bytes": 0,
        "moved_bytes_interval": None,
        "matrix": matrix,
        "load": [
            {"partition": j, "keys": sum(row[j] for row in matrix), "bytes": 0} for j in range(m)
        ],
        "skew": 1.0,
        "moved_key_sample": [],
    }
    cand.update(figures)
    return cand


def _topic(name: str, **fields: Any) -> dict[str, Any]:
    topic: dict[str, Any] = {
        "topic": name,
        "cleanup_policy": "delete",
        "current_partitions": 4,
        "partitioner": "murmur2",
        "partitioner_forced": False,
        "predictable": True,
        "conformance": 1.0,
        "conformance_by_partitioner": {"murmur2": 1.0, "consistent_random": 0.26, "fnv1a": None},
        "records_total": 1200,
        "records_scanned": 1200,
        "null_key_records": 12,
        "unhashed_records": 0,
        "non_conforming_records": 0,
        "non_conforming_keys": 0,
        "sampled": False,
        "distinct_keys": 400,
        "distinct_keys_interval": None,
        "state": "log",
        "state_records": 1188,
        "state_bytes": 2_400_000,
        "partitions": [
            {"partition": p, "log_start_offset": 0, "log_end_offset": 300, "records_scanned": 300}
            for p in range(4)
        ],
        "candidates": [],
        "verdict": {"level": "safe", "text": "SAFE: no key changes partition."},
    }
    topic.update(fields)
    return topic


def _report() -> dict[str, Any]:
    orders = _topic(
        "orders",
        candidates=[
            _candidate(
                6,
                M4_6,
                moved_keys=262,
                moved_fraction=0.655,
                expected_moved_fraction=2 / 3,
                moved_records=786,
                moved_bytes=1536 * 1024,
                skew=1.11,
                moved_key_sample=[
                    {
                        "key": "user-17",
                        "key_hex": "757365722d3137",
                        "partition": 1,
                        "new_partition": 5,
                    },
                    {"key": EVIL_KEY, "key_hex": "617c62", "partition": 0, "new_partition": 4},
                    {"key": MARKUP_KEY, "key_hex": "5b", "partition": 2, "new_partition": 0},
                ],
            ),
            _candidate(
                8,
                M4_8,
                moved_keys=202,
                moved_fraction=0.505,
                expected_moved_fraction=0.5,
                moved_records=606,
                moved_bytes=1_212_416,
                skew=1.06,
                moved_key_sample=[
                    {"key": "user-4", "key_hex": "757365722d34", "partition": 0, "new_partition": 4}
                ],
            ),
        ],
        verdict={
            "level": "moves",
            "text": "STATE MOVES: going 4 -> 6 partitions moves 65.5% of keys (262)",
        },
    )
    clicks = _topic(
        "clicks",
        cleanup_policy="compact",
        state="live",
        sampled=True,
        records_total=90_000,
        records_scanned=20_000,
        distinct_keys=9000,
        distinct_keys_interval=[8800, 9300],
        state_records=9000,
        state_bytes=9_200_000,
        candidates=[
            _candidate(
                6,
                [[v * 22 for v in row] for row in M4_6],
                moved_keys=5900,
                moved_keys_interval=[5700, 6150.4],
                moved_fraction=0.6556,
                moved_fraction_interval=[0.641, 0.67],
                expected_moved_fraction=2 / 3,
                moved_records=5900,
                moved_records_interval=[5700, 6150.4],
                moved_bytes=6_040_000,
                moved_bytes_interval=[5_830_000.0, 6_300_000.0],
            ),
            _candidate(
                8,
                [[v * 22 for v in row] for row in M4_8],
                moved_keys=4500,
                moved_keys_interval=[4390, 4702.8],
                moved_fraction=0.5,
                moved_fraction_interval=[0.488, 0.512],
                expected_moved_fraction=0.5,
                moved_records=4500,
                moved_records_interval=[4390, 4702.8],
                moved_bytes=4_600_000,
                moved_bytes_interval=[4_480_000.0, 4_800_000.0],
            ),
        ],
        verdict={"level": "moves", "text": "STATE MOVES: going 4 -> 6 partitions moves ~65.6%"},
    )
    custom = _topic(
        "custom",
        partitioner=None,
        predictable=False,
        conformance=0.41,
        conformance_by_partitioner={"murmur2": 0.41, "consistent_random": 0.26, "fnv1a": 0.24},
        state_records=0,  # nothing is predicted without a partitioner
        state_bytes=0,
        verdict={
            "level": "unpredictable",
            "text": "CANNOT PREDICT: no known partitioner placed every key where it is",
        },
    )
    return {
        "migcheck_version": "0.1.0",
        "generated_at": "2026-11-22T11:00:00Z",
        "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:9092"},
        "mode": "sample",
        "sample_per_partition": 5000,
        "candidates": [6, 8],
        "topics": [orders, clicks, custom],
        "gate": {
            "fail_if_moved": False,
            "max_moved_fraction": 0.6,
            "failed": True,
            "reason": "orders: 65.5% of keys move at 6 partitions (limit 60.0%)",
        },
    }


def _svgs(markdown: str) -> list[str]:
    return re.findall(r"^<svg .*?^</svg>$", markdown, re.M | re.S)


# --- JSON -------------------------------------------------------------------------------


def test_json_round_trips_to_the_same_dict() -> None:
    report = _report()
    out = render_json(report)
    assert out.endswith("}\n")
    assert json.loads(out) == report
    assert '\n  "topics": [\n' in out  # indented


def test_json_keeps_the_documented_key_order_whatever_the_dict_order() -> None:
    report = _report()
    cand = report["topics"][0]["candidates"][0]
    report["topics"][0]["candidates"][0] = {"extra": 1, **dict(reversed(list(cand.items())))}
    report = {k: report[k] for k in reversed(list(report))}
    parsed = json.loads(render_json(report))
    assert list(parsed) == [
        "migcheck_version",
        "generated_at",
        "source",
        "mode",
        "sample_per_partition",
        "candidates",
        "topics",
        "gate",
    ]
    assert list(parsed["topics"][0]["candidates"][0]) == [
        "partitions",
        "moved_keys",
        "moved_keys_interval",
        "moved_fraction",
        "moved_fraction_interval",
        "expected_moved_fraction",
        "moved_records",
        "moved_records_interval",
        "moved_bytes",
        "moved_bytes_interval",
        "matrix",
        "load",
        "skew",
        "moved_key_sample",
        "extra",  # unknown fields are kept, after the documented ones
    ]
    assert list(parsed["topics"][0]["candidates"][0]["moved_key_sample"][0]) == [
        "key",
        "key_hex",
        "partition",
        "new_partition",
    ]


def test_json_refuses_nan_rather_than_writing_invalid_json() -> None:
    report = _report()
    report["topics"][0]["candidates"][0]["skew"] = float("nan")
    with pytest.raises(ValueError):
        render_json(report)


# --- text -------------------------------------------------------------------------------


def test_text_shows_facts_candidates_side_by_side_verdicts_and_gate() -> None:
    text = render_text(_report())
    # both candidates' figures, exact for the full-scan topic
    assert re.search(r"^moved keys\s+262\s+202$", text, re.M)
    assert re.search(r"^moved fraction\s+65\.5%\s+50\.5%$", text, re.M)
    assert re.search(r"^expected \(uniform hashing\)\s+66\.7%\s+50\.0%$", text, re.M)
    assert re.search(r"^moved bytes\s+1\.5 MiB\s+1\.2 MiB$", text, re.M)
    # the sampled topic's estimates carry their intervals (6150.4 rounds to 6,150)
    assert "~5,900 (95%: 5,700\u20136,150)" in text
    assert "~5.8 MiB (95%: 5.6 MiB\u20136.0 MiB)" in text
    assert "~9,000 (bounds: 8,800\u20139,300)" in text  # distinct keys: certain bounds
    assert "20,000 of 90,000 (sampled)" in text
    assert "live state" in text
    # facts
    assert "murmur2, conformance 100.0% (scored: murmur2 100.0%, consistent_random 26.0%)" in text
    assert "none identified, conformance 41.0%" in text
    # verdicts, one per topic, and the gate
    for topic in _report()["topics"]:
        assert f"VERDICT: {topic['verdict']['text']}\n" in text
    assert text.rstrip().endswith(
        "GATE: FAILED (--max-moved-fraction 60.0%): "
        "orders: 65.5% of keys move at 6 partitions (limit 60.0%)"
    )
    # plain text: no colour codes, nothing wider than asked, no padding at line ends
    assert "\x1b" not in text
    assert all(len(line) <= 100 and line == line.rstrip() for line in text.splitlines())


def test_text_draws_small_matrices_with_the_diagonal_marked() -> None:
    text = render_text(_report())
    # row 0 of 4 -> 8: 52 stay (marked *), 48 go to partition 4, zeros as dots
    assert re.search(r"^0\s+52\*\s+\.\s+\.\s+\.\s+48\s+\.\s+\.\s+\.$", text, re.M)
    assert re.search(r"^3\s+\.\s+30\s+\.\s+33\*\s+\.\s+37$", text, re.M)  # row 3 of 4 -> 6


def test_text_sends_wide_matrices_to_json_and_markdown() -> None:
    report = _report()
    report["topics"][0]["candidates"][1] = _candidate(40, [[1] * 40 for _ in range(4)])
    text = render_text(report, width=100)
    assert "(4 x 40 matrix: too wide for 100 columns; it is in --format json" in text


def test_text_matrix_is_drawn_exact_then_short_then_not_at_all_as_width_allows() -> None:
    report = _report()
    report["topics"] = [report["topics"][0]]
    report["topics"][0]["candidates"] = [_candidate(24, [[1234] * 24 for _ in range(4)])]
    assert re.search(r"^0 +1,234\* +1,234 ", render_text(report, width=200), re.M)
    assert re.search(r"^0 +1234\* +1234 ", render_text(report, width=130), re.M)
    narrow = render_text(report, width=100)
    assert "(4 x 24 matrix: too wide for 100 columns" in narrow
    assert "\u2026" not in narrow  # never squeezed into ellipses


def test_text_keeps_keys_literal_no_rich_markup_or_emoji() -> None:
    text = render_text(_report())
    assert f"\n  {MARKUP_KEY}  (2 -> 0)\n" in text
    assert f"\n  {EVIL_KEY}  (0 -> 4)\n" in text


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_summary_facts_and_verdicts() -> None:
    md = render_markdown(_report())
    assert md.startswith("# ")
    assert "- **Source:** Kafka at 127.0.0.1:9092" in md
    assert "| orders | 4 | 6 | 262 | 65.5% | 1.5 MiB | moves |" in md
    assert "| orders | 4 | 8 | 202 | 50.5% | 1.2 MiB | moves |" in md
    # an estimate keeps its interval; "~" is escaped (GFM strikethrough)
    assert "| clicks | 4 | 6 | \\~5,900 (95%: 5,700\u20136,150) |" in md
    assert "| custom | 4 | - | - | - | - | unpredictable |" in md
    assert "**STATE MOVES: going 4 -&gt; 6 partitions moves 65.5% of keys (262)**" in md
    assert "**CANNOT PREDICT: no known partitioner placed every key where it is**" in md
    assert "| moved keys | 262 | 202 |" in md  # the candidates side by side
    assert "consistent\\_random 26.0%" in md


def test_markdown_heatmap_has_one_rect_per_cell_and_the_numbers() -> None:
    md = render_markdown(_report())
    svgs = _svgs(md)
    assert len(svgs) == 4  # orders and clicks, 6 and 8 each; custom has none
    orders_4_8 = svgs[1]
    assert orders_4_8.count("<rect") == 4 * 8  # no frame or legend rects
    assert len(ET.fromstring(orders_4_8).findall(f".//{SVG}rect")) == 32
    # Markdown keeps an HTML block only up to a blank line: the SVG must have none
    assert "\n\n" not in orders_4_8
    # the numbers, in the collapsible table
    assert "<details>" in md
    assert "| 0 | 52 | 0 | 0 | 0 | 48 | 0 | 0 | 0 |" in md
    assert "| 3 | 0 | 30 | 0 | 33 | 0 | 37 |" in md


def test_markdown_escapes_keys() -> None:
    md = render_markdown(_report())
    assert "| a\\|b&lt;script&gt;alert(1)&lt;/script&gt; | `617c62` | 0 | 4 |" in md
    assert "<script" not in md
    assert "| \\[bold\\]x\\[/\\] :smile: \\*y\\* \\_z\\_ \\`w\\` \\[/red\\] | `5b` | 2 | 0 |" in md


def test_markdown_renders_as_intended_in_a_commonmark_parser() -> None:
    # markdown-it-py comes with rich; GFM tables enabled, raw HTML allowed (as in GitLab)
    from markdown_it import MarkdownIt

    html = (
        MarkdownIt("commonmark", {"html": True})
        .enable(["table", "strikethrough"])
        .render(render_markdown(_report()))
    )
    assert "<td>a|b&lt;script&gt;alert(1)&lt;/script&gt;</td>" in html  # literal, one cell
    assert "<td>[bold]x[/] :smile: *y* _z_ `w` [/red]</td>" in html  # no emphasis, no code
    assert "~5,900 (95%: 5,700\u20136,150)</td>" in html  # not struck through
    assert html.count("<svg ") == 4 and html.count("</svg>") == 4  # kept whole as HTML
    assert html.count("<rect ") == 4 * 6 + 4 * 8 + 4 * 6 + 4 * 8


# --- SVG --------------------------------------------------------------------------------


def _cells(svg: str) -> dict[tuple[int, int], ET.Element]:
    """Each rect by (row, column), from its position in the grid."""
    rects = ET.fromstring(svg).findall(f".//{SVG}rect")
    x0 = min(int(r.get("x", "0")) for r in rects)
    y0 = min(int(r.get("y", "0")) for r in rects)
    size = int(rects[0].get("width", "0"))
    return {
        ((int(r.get("y", "0")) - y0) // size, (int(r.get("x", "0")) - x0) // size): r for r in rects
    }


def test_svg_cells_colour_counts_and_outline_what_stays() -> None:
    matrix = [[0, 2, 4], [1, 5, 3]]
    title = "t <&> \"q\" 'a'"
    svg = heatmap_svg(matrix, title)
    root = ET.fromstring(svg)  # well-formed XML despite the title
    assert root.find(f"{SVG}title").text == title  # type: ignore[union-attr]
    assert "<script" not in svg and "href" not in svg
    cells = _cells(svg)
    assert sorted(cells) == [(i, j) for i in range(2) for j in range(3)]
    stays = {pos for pos, r in cells.items() if r.get("stroke")}
    assert stays == {(0, 0), (1, 1)}
    # drawn after every other cell, so no neighbour paints over half of the outline
    order = [bool(r.get("stroke")) for r in root.iter(f"{SVG}rect")]
    assert order == [False] * 4 + [True] * 2
    assert cells[(1, 1)].get("fill") == "#08306b"  # the peak: darkest blue
    assert cells[(0, 0)].get("fill") is None  # empty: the group's white
    assert cells[(1, 0)].get("fill") not in (None, "#ffffff")  # 1 of 5 is still visible
    texts = [t.text for t in root.iter(f"{SVG}text")]
    for v in (2, 4, 1, 5, 3):
        assert str(v) in texts


def test_large_svg_has_every_cell_but_no_cell_text() -> None:
    matrix = [[1000 + i + j for j in range(200)] for i in range(100)]
    svg = heatmap_svg(matrix, "big")
    root = ET.fromstring(svg)
    assert svg.count("<rect") == 20_000
    assert len(root.findall(f".//{SVG}rect")) == 20_000
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert len(texts) < 100  # axis labels and a tick every few partitions
    values = {str(v) for row in matrix for v in row}
    assert not values & set(texts)
    assert int(root.get("width", "0")) <= 1000  # the cells shrank


# --- helpers ----------------------------------------------------------------------------


def test_format_bytes() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(1024) == "1.0 KiB"
    assert format_bytes(1536 * 1024) == "1.5 MiB"
    assert format_bytes(1024**2 - 1) == "1.0 MiB"  # not "1024.0 KiB"
    assert format_bytes(1023.7) == "1.0 KiB"  # estimates are floats
    assert format_bytes(3 * 1024**3) == "3.0 GiB"


def test_format_estimate_and_fraction() -> None:
    assert format_estimate(912, None) == "912"
    assert format_estimate(912.4, [850, 980.2]) == "~912 (95%: 850\u2013980)"
    assert format_estimate(0.5, [0.488, 0.512], format_fraction) == "~50.0% (95%: 48.8%\u201351.2%)"
    assert format_estimate(1200, None, approx=True) == "~1,200"
    assert format_fraction(3 / 1_000_000) == "<0.1%"  # a movement never rounds to 0.0%
    assert format_fraction(0.0) == "0.0%"
    assert format_fraction(1 - 1e-6) == ">99.9%"


def test_empty_topic_renders_in_every_format() -> None:
    report = _report()
    report["topics"] = [
        _topic(
            "empty",
            partitioner=None,
            conformance=None,
            conformance_by_partitioner={"murmur2": None},
            distinct_keys=0,
            candidates=[_candidate(6, [[0] * 6 for _ in range(4)], skew=0.0)],
            verdict={"level": "empty", "text": "NOTHING TO MOVE: no keyed records found."},
        )
    ]
    assert set(FORMATS) == {"text", "json", "markdown"}
    assert "none needed (no keyed records)" in render(report, "text")
    assert json.loads(render(report, "json"))["topics"][0]["verdict"]["level"] == "empty"
    assert render(report, "markdown").count("<rect") == 24
    with pytest.raises(ValueError, match="unknown report format 'html'"):
        render(report, "html")


def test_schema_doc_names_every_field() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    names: set[str] = set()

    def walk(value: Any, parent: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if parent != "conformance_by_partitioner":  # its keys are partitioner names
                    names.add(k)
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, parent)

    walk(_report())
    missing = sorted(n for n in names if f"`{n}`" not in doc)
    assert not missing, f"docs/report-schema.md does not document {missing}"


def test_render_command_rerenders_a_saved_report(tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(_report()), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "render", str(saved), "--format", "markdown"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("<svg") == 4 and "## Topic orders" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a report"}', encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "render", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2
    assert r.stderr.strip() == f"migcheck: error: {bad}: not a migcheck JSON report (no 'topics')"


def test_render_command_refuses_a_truncated_report_in_one_line(tmp_path) -> None:
    import subprocess
    import sys

    saved = tmp_path / "partial.json"
    saved.write_text(json.dumps({"topics": [{"topic": "orders"}]}))
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "render", str(saved)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"migcheck: error: {saved}: incomplete migcheck JSON report")
