"""The ``migcheck app`` report as text and Markdown, from one description of its content.

:func:`_blocks` says once what the report shows (verdict first, then health,
the candidates with the error Kafka Streams will print, the sub-topologies,
the state that moves); the two renderers only lay those blocks out.  The
``--state`` analysis's topic entries are in the JSON; here each store shows
its own figures.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from migcheck.analysis.appmodel import AppCandidate, AppReason, AppReport, StoreImpact
from migcheck.report.formatting import ARROW, format_bytes, format_count, format_estimate
from migcheck.report.markdown import md_escape, md_table


@dataclass(frozen=True)
class _Block:
    kind: str  # "h" heading, "p" paragraph, "code" verbatim, "list", "table"
    text: str = ""
    items: Sequence[str] = ()
    header: Sequence[str] = ()
    rows: Sequence[Sequence[str]] = ()


_MEANING = {
    "SAFE": "only the order of in-flight records changes",
    "CORRUPT": "the app runs on, with state split between old and new tasks (wrong answers)",
    "CRASH": "Kafka Streams refuses to start at the next rebalance",
}


def _blocks(r: AppReport) -> Iterator[_Block]:
    yield _Block("h", f"migcheck app: {r['application_id']}")
    counts = ", ".join(str(c["partitions"]) for c in r["candidates"])
    yield _Block(
        "p",
        f"Verdict: {r['verdict']} for {', '.join(r['changes'])} to {counts} "
        f"partitions ({_MEANING[r['verdict']]}).",
    )
    g = r["group"]
    yield _Block(
        "p",
        f"Group: {g['type']} ({g['state'] or 'no group'}, {g['members']} members); "
        f"protocol {r['protocol']}; model from {r['basis']}.",
    )
    if r["basis_note"]:
        yield _Block("p", f"Note: {r['basis_note']}.")
    yield from _health(r["health"])
    for cand in r["candidates"]:
        yield from _candidate(cand)
    yield _Block("h", "Sub-topologies today")
    yield _Block(
        "table",
        header=("sub-topology", "sources", "stores", "sinks", "tasks"),
        rows=[
            (
                f"{s['id']}" + (" (global)" if s["is_global"] else ""),
                ", ".join(s["sources"]),
                ", ".join(s["stores"]) or "-",
                ", ".join(s["sinks"]) or "-",
                str(s["tasks"]),
            )
            for s in r["subtopologies"]
        ],
    )
    yield _Block(
        "table",
        header=("topic", "role", "partitions", "cleanup.policy"),
        rows=[
            (t["topic"], t["role"], str(t["partitions"]), t["cleanup_policy"]) for t in r["topics"]
        ],
    )
    if r["notes"]:
        yield _Block("list", items=r["notes"])


def _health(reasons: list[AppReason]) -> Iterator[_Block]:
    if not reasons:
        yield _Block("p", "Health today: every internal topic matches its sources.")
        return
    yield _Block("h", "Health today: already broken")
    yield _Block("p", "Internal topics disagree with their sources: a topic was already altered.")
    yield _Block("list", items=[_reason_line(x) for x in reasons])


def _candidate(c: AppCandidate) -> Iterator[_Block]:
    yield _Block("h", f"{c['partitions']} partitions: {c['verdict']}")
    if c["error"]:
        yield _Block("p", "Kafka Streams will fail with:")
        yield _Block("code", c["error"])
    others = [x for x in c["reasons"] if x["text"] != c["error"]]  # the error is shown above
    if others:
        yield _Block("list", items=[_reason_line(x) for x in others])
    yield _Block(
        "table",
        header=("sub-topology", "tasks", f"tasks {ARROW}", "verdict"),
        rows=[
            (str(s["id"]), str(s["tasks"]), str(s["new_tasks"]), s["verdict"])
            for s in c["subtopologies"]
        ],
    )
    if c["stores"] is not None:
        yield _Block(
            "table",
            header=(
                "store",
                "read from",
                f"partitions {ARROW}",
                "moved keys",
                "moved bytes",
                "restore",
            ),
            rows=[_store_row(s) for s in c["stores"]],
        )


def _store_row(s: StoreImpact) -> list[str]:
    restore = (
        f"{format_count(s['restore_records'])} records, {format_bytes(s['restore_bytes'])}"
        if s["logged"]
        else "nothing (no changelog)"
    )
    return [
        s["store"],
        s["analyzed_topic"],
        f"{s['partitions']} {ARROW} {s['new_partitions']}",
        format_estimate(s["moved_keys"], s["moved_keys_interval"]),
        format_estimate(s["moved_bytes"], s["moved_bytes_interval"], format_bytes),
        restore,
    ]


def _reason_line(x: AppReason) -> str:
    where = "today" if x["subtopology"] is None else f"sub-topology {x['subtopology']}"
    stores = f" (stores: {', '.join(x['stores'])})" if x["stores"] else ""
    return f"{x['level']} [{where}] {x['text']}{stores}"


def render_app_text(report: AppReport) -> str:
    """The app report for a terminal or a CI log: plain text, aligned tables."""
    out: list[str] = []
    for b in _blocks(report):
        if b.kind == "h":
            out += ["", b.text, "-" * len(b.text)]
        elif b.kind in ("p", "code"):
            out.append(("    " if b.kind == "code" else "") + b.text)
        elif b.kind == "list":
            out += [f"  - {item}" for item in b.items]
        else:
            out += _text_table(b.header, b.rows)
    return "\n".join(out).strip("\n") + "\n"


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    lines = [
        "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)).rstrip()
        for row in [header, *rows]
    ]
    return ["", *lines]


def render_app_markdown(report: AppReport) -> str:
    """The app report for a change ticket: every value escaped where it lands."""
    out: list[str] = []
    first = True
    for b in _blocks(report):
        if b.kind == "h":
            out += ["", ("# " if first else "## ") + md_escape(b.text), ""]
            first = False
        elif b.kind == "p":
            out += [md_escape(b.text), ""]
        elif b.kind == "code":
            fence = "````" if "```" in b.text else "```"
            out += [fence, b.text.replace("\n", " "), fence, ""]
        elif b.kind == "list":
            out += [f"- {md_escape(item)}" for item in b.items] + [""]
        else:
            cells = [[md_escape(x) for x in row] for row in b.rows]
            out += [*md_table([md_escape(h) for h in b.header], ["---"] * len(b.header), cells), ""]
    return "\n".join(out).strip("\n") + "\n"
