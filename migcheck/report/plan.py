"""The ``migcheck plan`` report as text, Markdown and HTML, from one description of it.

The recommendation comes first; then today's figures, side by side with the
proposed change's when there is one, the sub-topologies, the instances and
the notes.  Every figure is the report's own: nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Iterator

from migcheck.model.plan import PlanFigures, PlanProposal, PlanReport
from migcheck.report.badge import Badge
from migcheck.report.blocks import Block, blocks_markdown, blocks_text
from migcheck.report.htmlpage import blocks_html


def _split(values: list[int]) -> str:
    return "/".join(map(str, values)) if values else "-"


def _either(values: list[int]) -> str:
    return " or ".join(map(str, values)) or "-"


def _optional(value: int | None) -> str:
    return "unknown" if value is None else str(value)


#: The figures table: a label and how to show the figure, for today and the proposal alike.
_ROWS = (
    ("tasks", lambda f: str(f["tasks"])),
    ("ceiling (largest sub-topology)", lambda f: str(f["ceiling"])),
    ("instances", lambda f: str(f["instances"])),
    ("threads", lambda f: str(f["threads"])),
    ("active threads", lambda f: str(f["active_threads"])),
    ("idle threads", lambda f: str(f["idle_threads"])),
    ("tasks per instance", lambda f: _split(f["tasks_per_instance"])),
    ("tasks per thread", lambda f: _split(f["tasks_per_thread"])),
    ("most even split", lambda f: _split(f["balance"]["even_split"])),
    (
        "instances for an even split",
        lambda f: " or ".join(map(str, f["balance"]["even_instances"])),
    ),
    ("instances for a thread per task", lambda f: str(f["instances_needed"])),
    ("threads per instance for that", lambda f: str(f["threads_needed"])),
    ("standby tasks", lambda f: str(f["standby"]["tasks"])),
    ("standby restore (records)", lambda f: _optional(f["standby"]["restore_records"])),
)


def _blocks(r: PlanReport) -> Iterator[Block]:
    yield Block("h", f"migcheck plan: {r['application_id'] or 'offline topology'}")
    yield Block("p", f"Recommendation: {r['recommendation']}")
    p = r["proposed"]
    source = "read from the group" if r["assignment"] == "observed" else "predicted"
    yield Block("p", f"Mode {r['mode']}, model from {r['basis']}; today's assignment {source}.")
    yield from _figures_table(r, p)
    if p is not None:
        yield from _proposal(p)
    yield Block("h", "Sub-topologies")
    after = {s["id"]: s["tasks"] for s in p["subtopologies"]} if p else {}
    yield Block(
        "table",
        header=("sub-topology", "sources", "stores", "tasks", *(("proposed",) if p else ())),
        rows=[
            (
                str(s["id"]),
                ", ".join(s["sources"]),
                ", ".join(s["stores"]) or "-",
                str(s["tasks"]),
                *((str(after.get(s["id"], "-")),) if p else ()),
            )
            for s in r["subtopologies"]
        ],
    )
    if r["assignment"] == "observed":  # predicted shares are in the figures table already
        yield from _members(r)
    if r["notes"]:
        yield Block("h", "Notes")
        yield Block("list", items=r["notes"])


def _figures_table(r: PlanFigures, p: PlanProposal | None) -> Iterator[Block]:
    header: tuple[str, ...] = ("figure", "today")
    if p is not None:
        changes = ", ".join(f"{t}={n}" for t, n in p["changes"].items())
        header += (f"proposed ({changes})",)
    rows = [(label, show(r), *((show(p),) if p else ())) for label, show in _ROWS]
    if p is not None:
        rows.append(("migcheck app verdict", "-", p["verdict"]))
    yield Block("table", header=header, rows=rows)


def _proposal(p: PlanProposal) -> Iterator[Block]:
    yield Block("h", "The proposed change")
    yield Block("p", p["recommendation"])
    if p["verdict_reasons"]:
        yield Block("list", items=p["verdict_reasons"])


def _members(r: PlanReport) -> Iterator[Block]:
    yield Block("h", "Instances, as the group shows them")
    yield Block(
        "table",
        header=("instance", "threads", "tasks", "tasks per thread"),
        rows=[
            (
                m["instance"],
                str(m["threads"]),
                _optional(m["tasks"]),
                "-" if m["tasks_per_thread"] is None else _split(m["tasks_per_thread"]),
            )
            for m in r["members"]
        ],
    )


def render_plan_text(report: PlanReport) -> str:
    """The plan for a terminal: plain text, aligned tables."""
    return blocks_text(_blocks(report))


def render_plan_markdown(report: PlanReport) -> str:
    """The plan for a change ticket: every value escaped where it lands."""
    return blocks_markdown(_blocks(report))


def render_plan_html(report: PlanReport) -> str:
    """The plan as one self-contained HTML page (inline CSS and SVG), for a browser; a
    proposed change's verdict first, as a badge (a plan without one has none)."""
    proposed = report["proposed"]
    badge = Badge(proposed["verdict"], "the proposed change") if proposed else None
    return blocks_html(_blocks(report), badge)
