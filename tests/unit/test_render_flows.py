"""Reports that render where they are read: Markdown without inline SVG (GitHub and
GitLab strip it) whose Mermaid flows are the report's own counts, and a self-contained
HTML page.

Expected flows come from the report's JSON (its ``flows``, ``moved_keys`` and
``distinct_keys``, written by hand in ``sample_report``), never from the renderer.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from oracles import run_cli
from sample_report import EVIL_KEY, app_report
from sample_report import candidate as _candidate
from sample_report import report as _report

from migcheck.report import render

_MERMAID = re.compile(r"^```mermaid\n(.*?)^```$", re.M | re.S)


def _sankeys(markdown: str) -> list[dict[tuple[str, str], int]]:
    """Each Mermaid block's flows, read as the sankey's CSV: (source, target) -> value."""
    diagrams = []
    for body in _MERMAID.findall(markdown):
        kind, *rows = body.splitlines()
        assert kind == "sankey-beta"
        flows: dict[tuple[str, str], int] = {}
        for source, target, value in csv.reader(r for r in rows if r):
            assert (source, target) not in flows  # one line per link: aggregated
            flows[source, target] = int(value)
        diagrams.append(flows)
    return diagrams


def test_markdown_of_analyze_and_app_has_no_inline_svg() -> None:
    for report in (_report(), app_report()):
        md = render(report, "markdown")  # type: ignore[arg-type]
        assert "<svg" not in md.lower() and "<rect" not in md


def test_mermaid_flows_are_the_reports_own_counts() -> None:
    report = _report()
    diagrams = _sankeys(render(report, "markdown"))  # type: ignore[arg-type]
    cands = [(t, c) for t in report["topics"] for c in t["candidates"]]
    assert len(diagrams) == len(cands) == 4  # custom is unpredictable: no candidate
    for flows, (topic, cand) in zip(diagrams, cands, strict=True):
        expected = {(f"p{p} (now)", f"p{q} (new)"): keys for p, q, keys in cand["flows"]}
        assert flows == expected, (topic["topic"], cand["partitions"])
        moved = sum(v for (a, b), v in flows.items() if a.split()[0] != b.split()[0])
        assert moved == cand["moved_keys"] or topic["sampled"]
    # orders is exact: its flows hold every key once, and the moved ones are the report's
    orders_6 = diagrams[0]
    assert sum(orders_6.values()) == 400 == report["topics"][0]["distinct_keys"]
    assert sum(v for (a, b), v in orders_6.items() if a.split()[0] != b.split()[0]) == 262


def test_mermaid_groups_many_partitions_in_ranges_and_says_so() -> None:
    report = _report()
    report["topics"] = [report["topics"][0]]
    report["topics"][0]["candidates"] = [_candidate(40, [[1] * 40 for _ in range(4)])]
    md = render(report, "markdown")  # type: ignore[arg-type]
    (flows,) = _sankeys(md)
    # 40 new partitions, at most 16 nodes: ranges of 3 (ceil(40 / 16)), the last one p39
    ranges = [f"p{lo}-p{lo + 2} (new)" for lo in range(0, 39, 3)] + ["p39 (new)"]
    expected = {
        (f"p{i} (now)", r): (1 if r == "p39 (new)" else 3) for i in range(4) for r in ranges
    }
    assert flows == expected and len(ranges) == 14
    assert sum(flows.values()) == 4 * 40  # nothing lost in the grouping
    assert "new partitions in ranges of 3" in md
    assert "<details><summary>Partition matrix as numbers" in md  # 40 columns: collapsed
    assert "| 3 | " + " | ".join(["1"] * 40) + " |" in md


def test_markdown_table_shades_each_cell_by_its_share_of_the_largest() -> None:
    report = _report()
    report["topics"] = [report["topics"][0]]
    report["topics"][0]["current_partitions"] = 2
    report["topics"][0]["candidates"] = [_candidate(3, [[0, 2, 4], [1, 5, 3]])]
    md = render(report, "markdown")  # type: ignore[arg-type]
    # peak 5: 1 is 20% (light), 2 is 40%, 3 is 60%, 4 and 5 over 75% (darkest); 5 stays
    assert "| 0 | \u00b7 | \u2592 2 | \u2588 4 |" in md
    assert "| 1 | \u2591 1 | **\u2588 5** | \u2593 3 |" in md


def test_html_is_one_self_contained_page_with_a_heatmap_per_matrix() -> None:
    page = render(_report(), "html")  # type: ignore[arg-type]
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.count("<svg ") == 4 and page.count("</svg>") == 4
    assert [f"heatmap-{k}" for k in range(1, 5)] == re.findall(r'id="(heatmap-\d+)"', page)
    # nothing to fetch, nothing to run: no script, no link, no external resource
    for needle in ("<script", "src=", "href=", "@import", "url(", "<link"):
        assert needle not in page, needle
    assert "a|b&lt;script&gt;alert(1)&lt;/script&gt;" in page and EVIL_KEY not in page


def test_html_of_the_app_report_is_a_page_too() -> None:
    page = render(app_report(), "html")  # type: ignore[arg-type]
    assert "<title>migcheck app: count-&lt;app&gt;</title>" in page
    assert "<pre><code>Existing internal topic count-&lt;app&gt;-counts-changelog" in page
    assert "<script" not in page


def test_plan_has_the_html_format_too() -> None:
    describe = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"
    args = ["--topology", str(describe / "count.txt"), "--partitions", "orders=10"]
    p = run_cli("plan", *args, "--instances", "3", "--format", "html")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("<!DOCTYPE html>") and "<script" not in p.stdout
    assert "<tr><td>tasks per instance</td><td>4/3/3</td></tr>" in p.stdout
