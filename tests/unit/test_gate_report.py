"""The gate's report without a cluster: the PR comment's marker, its table, its links and
the words of a stale acceptance; GitHub's own renderer (cmark-gfm) reads the comment."""

from __future__ import annotations

import cmarkgfm
from cmarkgfm.cmark import Options

from migcheck.model.gate import GateChange, GateReport
from migcheck.report.gate import render_gate_markdown, render_gate_text


def _report() -> GateReport:
    change: GateChange = {
        "topic": "orders", "from": 3, "to": 12,
        "source": {"kind": "terraform", "file": "plan.json", "address": "kafka_topic.orders"},
        "verdict": "CRASH", "blocking": True,
        "rules": [{"code": "MC201", "verdict": "CRASH", "text": "kafka-streams shop: boom",
                   "doc": "docs/rules.md#mc201"}],
        "accepted": False,
        "acceptance": {"topic": "orders", "to": 6, "verdict": "ORDER", "reason": "OPS-1",
                       "expires": "2026-01-31", "stale": ["to", "verdict", "expires"]},
        "moved": {"keys": 10, "fraction": 0.25, "records": 30, "bytes": 300, "exact": False},
        "readers": [{"kind": "kafka-streams", "id": "shop", "verdict": "CRASH",
                     "reasons": ["boom"], "rules": ["MC201"]}],
        "next": ["migcheck runbook --bootstrap-server b:9092 --application-id shop "
                 "--topic orders --to 12"],
    }  # fmt: skip
    return {
        "report": "gate", "migcheck_version": "0", "generated_at": "2026-11-28T00:00:00Z",
        "bootstrap_servers": "b:9092", "verdict": "CRASH", "passed": False,
        "changes": [change], "notes": [],
    }  # fmt: skip


def test_the_comment_starts_with_its_marker_and_renders_as_github_does() -> None:
    text = render_gate_markdown(_report())
    assert text.splitlines()[0] == "<!-- migcheck-gate -->"
    html = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    assert "<table>" in html and "<svg" not in html
    assert '<a href="docs/rules.md#mc201">MC201</a>' in html
    assert "<code>migcheck runbook --bootstrap-server b:9092 --application-id shop" in html


def test_a_stale_acceptance_names_every_field_that_differs() -> None:
    line = (
        "Stale acceptance (OPS-1): to differs (accepted 6, proposed 12); verdict differs "
        "(accepted ORDER, proposed CRASH); expired (last valid day 2026-01-31)."
    )
    assert line in render_gate_text(_report())
