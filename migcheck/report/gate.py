"""The ``migcheck gate`` report: text for a CI log, HTML, and Markdown for the PR comment.

The Markdown is the comment a CI job posts on the pull request and updates in place: it
starts with :data:`MARKER`, which the job looks for.  Then the summary table (change,
source, verdict, readers, moved share) and, per change, its reasons with their rule codes
linked to their pages, its readers, and the next commands with the real ids filled in.
No inline SVG: GitHub and GitLab strip it.  Every name from the cluster or a plan is
escaped where it lands (:mod:`migcheck.untrusted`).
"""

from __future__ import annotations

from collections.abc import Iterator

from migcheck.model.gate import GateChange, GateReader, GateReport, GateVerdict, RuleRef
from migcheck.report.badge import Badge
from migcheck.report.blocks import Block, blocks_text, md_table
from migcheck.report.htmlpage import blocks_html
from migcheck.untrusted import Name, markdown, md_code, md_fence, visible
from migcheck.words import plural

#: The comment's first line: a CI job finds its earlier comment by it and edits it.
MARKER = "<!-- migcheck-gate -->"

_PASSED = {True: "passes", False: "fails"}


def _moved(c: GateChange) -> str:
    m = c["moved"]
    if m is None:
        return "-"
    about = "" if m["exact"] else "~"
    return f"{about}{m['fraction']:.1%} ({m['keys']:,} keys)"


def _count(c: GateChange) -> str:
    return f"{c['from']} -> {'deleted' if c['to'] is None else c['to']}"


def _source(c: GateChange) -> str:
    s = c["source"]
    where = f" ({s['file']})" if s["file"] else ""
    return f"{s['kind']} {s['address']}{where}"


def _readers(c: GateChange) -> str:
    risky = [r for r in c["readers"] if r["verdict"] != GateVerdict.SAFE]
    return f"{len(c['readers'])}, {len(risky)} at risk" if c["readers"] else "none"


def _verdict(c: GateChange) -> str:
    if c["accepted"]:
        return f"{c['verdict']} (accepted)"
    return c["verdict"] + ("" if c["blocking"] else " (does not block)")


def _acceptance_line(c: GateChange) -> str | None:
    a = c["acceptance"]
    if a is None:
        return None
    if c["accepted"]:
        until = f", until {a['expires']}" if a["expires"] else ""
        return f"Accepted: {a['reason']}{until}."
    return f"Stale acceptance ({a['reason']}): {stale_words(c)}."


def stale_words(c: GateChange) -> str:
    """Why the change's acceptance does not cover it: each field that differs, with the
    file's value and the change's."""
    a = c["acceptance"]
    if a is None:
        return ""
    said = {
        "to": f"to differs (accepted {a['to']}, proposed {c['to']})",
        "verdict": f"verdict differs (accepted {a['verdict']}, proposed {c['verdict']})",
        "expires": f"expired (last valid day {a['expires']})",
    }
    return "; ".join(said[f] for f in a["stale"])


# --- text and HTML, through the blocks ---------------------------------------------------


def _blocks(r: GateReport) -> Iterator[Block]:
    yield Block("h", f"migcheck gate: {r['verdict']}, {_PASSED[r['passed']]}")
    yield Block("p", f"At {r['bootstrap_servers']}: {plural(len(r['changes']), 'change')}.")
    yield Block(
        "table",
        header=("topic", "partitions", "source", "verdict", "readers", "moved"),
        rows=[
            (Name(c["topic"]), _count(c), _source(c), _verdict(c), _readers(c), _moved(c))
            for c in r["changes"]
        ],
    )
    for c in r["changes"]:
        yield Block("sub", f"{c['topic']} {_count(c)}: {c['verdict']}")
        if c["rules"]:
            yield Block(
                "list", items=[f"{x['code']} {x['verdict']}: {x['text']}" for x in c["rules"]]
            )
        line = _acceptance_line(c)
        if line:
            yield Block("p", line)
        for reader in c["readers"]:
            yield Block("p", _reader_line(reader))
        if c["next"]:
            yield Block("p", "Next:")
            yield Block("code", "\n".join(c["next"]))
    if r["notes"]:
        yield Block("list", items=r["notes"])


def _reader_line(g: GateReader) -> str:
    """A reader and its verdict; its reasons are among the change's rules."""
    codes = f" ({', '.join(g['rules'])})" if g["rules"] else ""
    return f"reader {g['kind']} {g['id']}: {g['verdict']}{codes}"


def render_gate_text(report: GateReport) -> str:
    """The gate for a CI log."""
    return blocks_text(_blocks(report))


def render_gate_html(report: GateReport) -> str:
    """The gate as one self-contained HTML page, its verdict first, as a badge."""
    badge = Badge(report["verdict"], f"the gate {_PASSED[report['passed']]}")
    return blocks_html(_blocks(report), badge)


# --- Markdown: the PR comment ------------------------------------------------------------


def render_gate_markdown(report: GateReport) -> str:
    """The PR comment: the marker, the summary table, then each change's details."""
    head = f"migcheck gate: {report['verdict']}, {_PASSED[report['passed']]}"
    out = [MARKER, f"### {markdown(head)}", ""]
    out += md_table(
        ["change", "source", "verdict", "readers", "moved"],
        ["---", "---", "---", "---", "---:"],
        [
            [
                f"{md_code(c['topic'], in_table=True)} {markdown(_count(c), line_start=False)}",
                markdown(_source(c), line_start=False),
                markdown(_verdict(c), line_start=False),
                markdown(_readers(c), line_start=False),
                markdown(_moved(c), line_start=False),
            ]
            for c in report["changes"]
        ],
    )
    for c in report["changes"]:
        out += ["", *_md_change(c)]
    if report["notes"]:
        out += ["", *(f"- {markdown(n, line_start=False)}" for n in report["notes"])]
    return "\n".join(out).rstrip("\n") + "\n"


def _md_change(c: GateChange) -> list[str]:
    title = f"{md_code(c['topic'])} {markdown(_count(c), line_start=False)}: {c['verdict']}"
    out = [f"#### {title}", ""]
    out += [f"- {_md_rule(x)}" for x in c["rules"]]
    line = _acceptance_line(c)
    if line:
        out += ["", markdown(line)]
    if c["readers"]:
        out += ["", "Readers:", ""]
        out += [f"- {_md_reader(g)}" for g in c["readers"]]
    if c["next"]:
        out += ["", "Next:", "", *md_fence([visible(n) for n in c["next"]], "sh")]
    return out


def _md_rule(x: RuleRef) -> str:
    return f"[{x['code']}]({x['doc']}) {x['verdict']}: {markdown(x['text'], line_start=False)}"


def _md_reader(g: GateReader) -> str:
    codes = f" ({', '.join(g['rules'])})" if g["rules"] else ""
    return f"{markdown(g['kind'], line_start=False)} {md_code(g['id'])}: {g['verdict']}{codes}"
