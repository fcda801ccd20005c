"""Renderers: every format shows what the report holds, escaped, with estimates as intervals.

The report below is built by hand, and every expected string is written out
from its numbers, never taken from a second call to a renderer.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from oracles import run_cli
from sample_report import EVIL_KEY, MARKUP_KEY
from sample_report import candidate as _candidate
from sample_report import report as _report
from sample_report import topic as _topic

from migcheck.report import FORMATS, render
from migcheck.report.analyze import render_analyze_markdown as render_markdown
from migcheck.report.analyze import render_analyze_text as render_text
from migcheck.report.formatting import format_bytes, format_estimate, format_fraction
from migcheck.report.svg import heatmap_svg

SVG = "{http://www.w3.org/2000/svg}"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "report-schema.md"


# --- JSON -------------------------------------------------------------------------------


def test_json_round_trips_to_the_same_dict_with_its_kind_first() -> None:
    report = _report()
    out = render(report, "json")
    assert out.endswith("}\n")
    assert json.loads(out) == {"report": "analyze", **report}
    assert out.startswith('{\n  "report": "analyze",\n  "migcheck_version": ')
    assert '\n  "topics": [\n' in out  # indented


def test_json_keeps_the_documented_key_order_whatever_the_dict_order() -> None:
    report = _report()
    cand = report["topics"][0]["candidates"][0]
    report["topics"][0]["candidates"][0] = {"extra": 1, **dict(reversed(list(cand.items())))}
    report = {k: report[k] for k in reversed(list(report))}
    parsed = json.loads(render(report, "json"))  # type: ignore[arg-type]
    assert list(parsed) == [
        "report",
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
        "flows",
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
        render(report, "json")


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
    assert "~9,000 (95%: 8,800\u20139,300)" in text  # distinct keys
    assert "95%, assuming the sampled windows represent the unread records" in text
    assert "78,600" not in text  # the certain bounds are for JSON, Markdown and HTML
    assert "20,000 of 90,000 (sampled)" in text
    assert "live state" in text
    # facts
    assert "murmur2, conformance 100.0% (scored: murmur2 100.0%, consistent_random 26.0%)" in text
    assert "none identified, conformance 41.0%" in text
    # verdicts, one per topic, and the gate with the summary, before the first topic
    for topic in _report()["topics"]:
        assert f"VERDICT: {topic['verdict']['text']}\n" in text
    gate = (
        "\nGATE: FAILED (--max-moved-fraction 60.0%): "
        "orders: 65.5% of keys move at 6 partitions (limit 60.0%)\n"
    )
    assert 0 < text.index(gate) < text.index("\nTopic orders: 4 partitions\n")
    # the summary: a row per topic and candidate, the sampled one's intervals wrapped
    assert re.search(r"^orders +4 +6 +262 +65\.5% +1\.5 MiB +moves$", text, re.M)
    assert re.search(r"^custom +4 +- +- +- +- +unpredictable$", text, re.M)
    # plain text: no colour codes, nothing wider than asked, no padding at line ends
    assert "\x1b" not in text
    assert all(len(line) <= 100 and line == line.rstrip() for line in text.splitlines())


def test_key_layout_is_a_fact_only_when_keys_were_not_hashed_whole() -> None:
    # clicks is a window store's changelog; orders has no key_layout (analyze), custom "plain"
    report = _report()
    report["topics"][2]["key_layout"] = "plain"
    fact = "window (window store changelog: hashed without the 12-byte [start][seqnum] suffix)"
    text = render_text(report, width=200)
    assert re.search(rf"^key layout +{re.escape(fact)}$", text, re.M)
    assert text.count("key layout") == 1
    md = render_markdown(report)
    assert (
        "| key layout | window (window store changelog: hashed without the 12-byte "
        "\\[start\\]\\[seqnum\\] suffix) |"
    ) in md
    assert md.count("key layout") == 1


def test_text_draws_small_matrices_with_the_diagonal_marked() -> None:
    text = render_text(_report())
    # row 0 of 4 -> 8: 52 stay (marked *), 48 go to partition 4, zeros as dots
    assert re.search(r"^0\s+52\*\s+\.\s+\.\s+\.\s+48\s+\.\s+\.\s+\.$", text, re.M)
    assert re.search(r"^3\s+\.\s+30\s+\.\s+33\*\s+\.\s+37$", text, re.M)  # row 3 of 4 -> 6


def test_text_sends_wide_matrices_to_json_and_markdown() -> None:
    report = _report()
    report["topics"][0]["candidates"][1] = _candidate(40, [[1] * 40 for _ in range(4)])
    text = render_text(report, width=200)  # wide enough, but 40 columns are too many to read
    assert (
        "\n4 x 40 matrix: too wide to draw as text; it is in --format json and --format markdown.\n"
        in text
    )
    md = render_markdown(report)
    assert "<svg" not in md and md.count("```mermaid\n") == 4  # Markdown draws it


def test_text_matrix_is_drawn_exact_then_short_then_not_at_all_as_width_allows() -> None:
    report = _report()
    report["topics"] = [report["topics"][0]]
    report["topics"][0]["candidates"] = [_candidate(24, [[1234] * 24 for _ in range(4)])]
    assert re.search(r"^0 +1,234\* +1,234 ", render_text(report, width=200), re.M)
    assert re.search(r"^0 +1234\* +1234 ", render_text(report, width=130), re.M)
    narrow = render_text(report, width=100)
    assert "\n4 x 24 matrix: too wide to draw as text;" in narrow
    assert "\u2026" not in narrow  # never squeezed into ellipses


def test_text_keeps_keys_literal_with_their_hex_and_partitions() -> None:
    text = render_text(_report())
    assert re.search(rf"^{re.escape(MARKUP_KEY)} +5b +2 +0$", text, re.M)
    assert re.search(rf"^{re.escape(EVIL_KEY)} +617c62 +0 +4$", text, re.M)


def test_text_wraps_to_its_width_and_keeps_every_figure() -> None:
    report = _report()
    estimate = {
        "moved_keys": 5900,
        "moved_keys_interval": [5700, 6150.4],
        "moved_records": 5900,
        "moved_records_interval": [5700, 6150.4],
        "moved_fraction": 0.6556,
        "moved_fraction_interval": [0.641, 0.67],
        "moved_bytes": 6_040_000,
        "moved_bytes_interval": [5_830_000.0, 6_300_000.0],
    }
    # four sampled candidates side by side: 158 columns unwrapped
    cands = [_candidate(m, [[1] * m for _ in range(4)], **estimate) for m in (6, 8, 12, 16)]
    long_key = "k" * 63 + "\u2026@1700000000000"  # a window key, cut at 64 characters
    cands[0]["moved_key_sample"] = [
        {"key": long_key, "key_hex": "ab" * 80, "partition": 0, "new_partition": 5}
    ]
    report["topics"] = [_topic("clicks", sampled=True, candidates=cands)]
    text, md = render_text(report, width=100), render_markdown(report)
    assert all(len(line) <= 100 for line in text.splitlines())
    # each interval whole on a line: 4 in the summary, 2 rows x 4 candidates side by side
    assert text.count("5,700\u20136,150)") == md.count("5,700\u20136,150)") == 12
    assert text.count("64.1%\u201367.0%)") == md.count("64.1%\u201367.0%)") == 8
    # the key and its hex, cut at 64 characters, wrapped in their own columns
    assert "@1700000000000" in text
    assert f"| `{'k' * 63}\u2026@1700000000000` | {'ab' * 31}a\u2026 | 0 | 5 |" in md


def test_a_matrix_the_report_does_not_carry_is_not_drawn() -> None:
    report = _report()
    report["topics"][0]["candidates"][0]["matrix"] = None  # as over 250,000 cells: flows only
    text, md = render_text(report), render_markdown(report)
    line = (
        "4 x 6 matrix: too large to draw (24 cells); "
        "its 12 nonzero cells are the flows of --format json."
    )
    assert f"\n{line}\n" in text and f"\n{line}\n" in md
    assert "orders, 4 \u2192 6" not in text + md  # no figure title, so no figure
    assert "orders, 4 \u2192 8: keys by current partition" in text
    assert md.count("```mermaid\n") == 3 and "<svg" not in md
    assert "1 -> 5" not in text and "| `user-17` | 757365722d3137 | 1 | 5 |" in md  # sample kept
    assert re.search(r"^user-17 +757365722d3137 +1 +5$", text, re.M)


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_summary_facts_and_verdicts() -> None:
    md = render_markdown(_report())
    assert md.startswith("# ")
    assert "- source: Kafka at 127.0.0.1:9092\n" in md
    assert "- proposed partition counts: 6, 8\n" in md
    assert (
        "\nGATE: FAILED (--max-moved-fraction 60.0%): orders: 65.5% of keys move at 6 "
        "partitions (limit 60.0%)\n"
    ) in md
    assert "| orders | 4 | 6 | 262 | 65.5% | 1.5 MiB | moves |" in md
    assert "| orders | 4 | 8 | 202 | 50.5% | 1.2 MiB | moves |" in md
    # an estimate keeps its interval; "~" is escaped (GFM strikethrough)
    assert "| clicks | 4 | 6 | \\~5,900 (95%: 5,700\u20136,150) |" in md
    assert "| custom | 4 | - | - | - | - | unpredictable |" in md
    assert "\nVERDICT: STATE MOVES: going 4 -&gt; 6 partitions moves 65.5% of keys (262)\n" in md
    assert "\nVERDICT: CANNOT PREDICT: no known partitioner placed every key where it is\n" in md
    assert "| moved keys | 262 | 202 |" in md  # the candidates side by side
    assert "consistent\\_random 26.0%" in md


def test_markdown_draws_flows_for_github_and_a_shaded_table_of_the_numbers() -> None:
    md = render_markdown(_report())
    assert "<svg" not in md  # GitHub and GitLab strip inline SVG from Markdown
    assert md.count("```mermaid\nsankey-beta\n") == 4  # orders and clicks, 6 and 8 each
    # the numbers, shaded by quarters of the largest cell (52 of 4 -> 8's 53: the darkest),
    # bold where keys stay; 4 -> 6's peak is 37, so 30 (81%) is dark and 0 a dot
    assert "| 0 | **\u2588 52** | \u00b7 | \u00b7 | \u00b7 | \u2588 48 | \u00b7 |" in md
    assert "| 3 | \u00b7 | \u2588 30 | \u00b7 | **\u2588 33** | \u00b7 | \u2588 37 |" in md


def test_markdown_escapes_keys() -> None:
    md = render_markdown(_report())
    # a key is a code span (nothing inside links or mentions); a pipe still escaped (GFM)
    assert "| `a\\|b<script>alert(1)</script>` | 617c62 | 0 | 4 |" in md
    assert "<script" not in md.replace("`a\\|b<script>", "")
    assert "| ``[bold]x[/] :smile: *y* _z_ `w` [/red]`` | 5b | 2 | 0 |" in md


def test_markdown_renders_as_intended_in_a_commonmark_parser() -> None:
    # markdown-it-py comes with rich; GFM tables enabled, raw HTML allowed (as in GitLab)
    from markdown_it import MarkdownIt

    html = (
        MarkdownIt("commonmark", {"html": True})
        .enable(["table", "strikethrough"])
        .render(render_markdown(_report()))
    )
    assert "<td><code>a|b&lt;script&gt;alert(1)&lt;/script&gt;</code></td>" in html  # one cell
    # no emphasis, no link: one code element, the key as its text
    assert "<td><code>[bold]x[/] :smile: *y* _z_ `w` [/red]</code></td>" in html
    assert "~5,900 (95%: 5,700\u20136,150)</td>" in html  # not struck through
    assert "<svg" not in html
    assert html.count('<pre><code class="language-mermaid">sankey-beta') == 4  # kept whole


# --- text and Markdown alike ----------------------------------------------------------


def _figures(shown: str) -> set[str]:
    """Every number shown, without thousands separators (the text's matrix writes 1,144
    where the Markdown's table of numbers writes 1144)."""
    return {n.replace(",", "") for n in re.findall(r"\d[\d,.]*\d|\d", shown)}


def test_text_and_markdown_show_the_same_figures() -> None:
    text, md = render_text(_report()), render_markdown(_report())
    # as each format writes them: (text, Markdown)
    for in_text, in_md in [
        ("\n  - proposed partition counts: 6, 8\n", "\n- proposed partition counts: 6, 8\n"),
        (
            "\nmoved keys                           262           202\n",
            "| moved keys | 262 | 202 |",
        ),
        ("  ~65.6% (95%: 64.1%\u201367.0%)  ", "| \\~65.6% (95%: 64.1%\u201367.0%) |"),
        (
            "\nVERDICT: STATE MOVES: going 4 -> 6 partitions moves 65.5% of keys (262)\n",
            "\nVERDICT: STATE MOVES: going 4 -&gt; 6 partitions moves 65.5% of keys (262)\n",
        ),
        (
            "\nuser-17                                757365722d3137     1   5\n",
            "| `user-17` | 757365722d3137 | 1 | 5 |",
        ),
        ("\nuser-4  757365722d34     0   4\n", "| `user-4` | 757365722d34 | 0 | 4 |"),
        ("\nTopic custom: 4 partitions\n", "\n## Topic custom: 4 partitions\n"),
    ]:
        assert in_text in text, in_text
        assert in_md in md, in_md
    # and every other number: the flows and the shaded table show the text's matrix (the
    # shades' legend and the sankey's node names add no figure of their own); the certain
    # bounds are a details section a reader opens, which text leaves to the JSON
    legend = r"^Rows: current partition;.*$"
    md = re.sub(r"<details><summary>Certain bounds.*?</details>", "", md, flags=re.S)
    drawn = re.sub(legend, "", re.sub(r'"p\d+ \((now|new)\)"', "", md), flags=re.M)
    assert _figures(text) == _figures(html.unescape(drawn))
    assert {"262", "5700", "6150", "64.1", "67.0", "1144", "8800", "9300"} <= _figures(text)


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
    assert set(FORMATS) == {"text", "json", "markdown", "html"}
    assert "none needed (no keyed records)" in render(report, "text")
    assert json.loads(render(report, "json"))["topics"][0]["verdict"]["level"] == "empty"
    assert "No keys: nothing flows." in render(report, "markdown")  # no empty sankey
    assert render(report, "html").count("<rect") == 24
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        render(report, "pdf")


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
    r = run_cli("render", str(saved), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("```mermaid") == 4 and "## Topic orders" in r.stdout
    page = tmp_path / "report.html"
    r = run_cli("render", str(saved), "--format", "html", "--output", str(page))
    assert r.returncode == 0, r.stderr
    assert page.read_text(encoding="utf-8").count("<svg ") == 4
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a report"}', encoding="utf-8")
    r = run_cli("render", str(bad))
    assert r.returncode == 2
    assert r.stderr.strip() == f"migcheck: error: {bad}: not a migcheck JSON report (no 'topics')"


def test_render_command_refuses_a_truncated_report_in_one_line(tmp_path) -> None:
    saved = tmp_path / "partial.json"
    saved.write_text(json.dumps({"topics": [{"topic": "orders"}]}))
    r = run_cli("render", str(saved))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"migcheck: error: {saved}: incomplete migcheck JSON report")


# --- sampled intervals: the assumption, the bounds, drift, older reports ---------------


def _clicks(report: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in report["topics"] if t["topic"] == "clicks")


def test_the_certain_bounds_are_a_details_section_in_markdown_and_html() -> None:
    report = _report()
    md = render_markdown(report)
    assert "<details><summary>Certain bounds: whatever the unread records hold</summary>" in md
    assert "| moved keys | 5,600\u201375,600 | 4,300\u201374,300 |" in md
    assert "| moved bytes | at least 5.4 MiB | at least 4.2 MiB |" in md  # nothing bounds them
    assert "| distinct keys | 8,600\u201378,600 | 8,600\u201378,600 |" in md
    page = render(report, "html")
    assert "<details><summary>Certain bounds: whatever the unread records hold</summary>" in page


def test_drift_is_said_in_words_and_the_keys_show_their_bounds() -> None:
    report = _report()
    clicks = _clicks(report)
    clicks["distinct_keys_interval"] = clicks["distinct_keys_bounds"]
    clicks["sample_assumption"] = {
        "assumption": clicks["sample_assumption"]["assumption"],
        "holds": False,
        "findings": ["windows 4 or more apart share 3% of the keys adjacent windows share"],
    }
    for c in clicks["candidates"]:
        c["moved_keys_interval"] = c["moved_keys_bounds"]
    text = render_text(report)
    assert "the sample does not represent the unread records: windows 4 or more apart" in text
    assert "~9,000 (bounds: 8,600\u201378,600)" in text
    assert "~5,900 (bounds: 5,600\u201375,600)" in text
    assert "~65.6% (95%: 64.1%\u201367.0%)" in text  # the fraction keeps its interval


def test_a_report_from_before_the_bounds_says_it_predates_them(tmp_path: Path) -> None:
    report = _report()
    clicks = _clicks(report)
    del clicks["distinct_keys_bounds"], clicks["sample_assumption"]
    for c in clicks["candidates"]:
        for name in ("keys", "fraction", "records", "bytes"):
            del c[f"moved_{name}_bounds"]
    text = render_text(report)
    assert "this report predates 95% intervals: its distinct and moved keys' intervals" in text
    assert "~9,000 (bounds: 8,800\u20139,300)" in text
    assert "~5,900 (bounds: 5,700\u20136,150)" in text
    assert "Certain bounds" not in render_markdown(report)
    saved = tmp_path / "older.json"  # and as `migcheck render` shows a saved one
    saved.write_text(json.dumps(report), encoding="utf-8")
    r = run_cli("render", str(saved))
    assert r.returncode == 0, r.stderr
    assert "this report predates 95% intervals" in r.stdout
