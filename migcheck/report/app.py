"""The ``migcheck app`` report as text, Markdown and HTML, from one description of it.

:func:`_blocks` says once what the report shows (verdict first, then health,
the candidates with the error Kafka Streams will print, the sub-topologies,
the state that moves); the two renderers only lay those blocks out.  The
``--state`` analysis's topic entries are in the JSON; here each store shows
its own figures, and the route its state can take instead of a rebuild.
"""

from __future__ import annotations

from collections.abc import Iterator

from migcheck.frameworks.base import Framework
from migcheck.frameworks.registry import FRAMEWORKS
from migcheck.model.app import (
    TOPOLOGY_SETTLES,
    AppCandidate,
    AppLevel,
    AppReason,
    AppReport,
    AppState,
    StateRoute,
    StoreImpact,
    together_said,
)
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import Strategy
from migcheck.report.badge import Badge
from migcheck.report.blocks import Block, blocks_markdown, blocks_text
from migcheck.report.formatting import (
    ARROW,
    format_bytes,
    format_count,
    format_estimate,
    keys_label,
    sample_facts,
)
from migcheck.report.htmlpage import blocks_html

_MEANING = {
    AppLevel.SAFE: "only the order of in-flight records changes",
    AppLevel.CORRUPT: "the app runs on, with state split between old and new tasks (wrong answers)",
    AppLevel.CRASH: "{name} fails at its next rebalance, whether it is stopped or running",
}


def _framework(r: AppReport) -> Framework | None:
    """The report's framework (Kafka Streams in reports written before it was named);
    None for a name this migcheck does not know."""
    value = r.get("framework", ReaderKind.KAFKA_STREAMS.value)
    kind = next((k for k in FRAMEWORKS if k.value == value), None)
    return None if kind is None else FRAMEWORKS[kind]


def _name(r: AppReport) -> str:
    framework = _framework(r)
    return framework.name if framework else "The app"


def _blocks(r: AppReport) -> Iterator[Block]:
    yield Block("h", f"migcheck app: {r['application_id']}")
    counts = ", ".join(str(c["partitions"]) for c in r["candidates"])
    framework = _framework(r)
    crash = framework.crash_words if framework and r["verdict"] == AppLevel.CRASH else None
    meaning = (crash or _MEANING[r["verdict"]]).format(name=_name(r))
    yield Block(
        "p",
        f"Verdict: {r['verdict']} for {', '.join(r['changes'])} to {counts} "
        f"partitions ({meaning}).",
    )
    g = r["group"]
    yield Block(
        "p",
        f"{_name(r)} app. Group: {g['type']} ({g['state'] or 'no group'}, {g['members']} "
        f"members); protocol {r['protocol']}; model from {r['basis']}.",
    )
    if r["basis_note"]:
        yield Block("p", f"Note: {r['basis_note']}.")
    yield from _health(r["health"])
    for group in r.get("together") or []:
        yield Block("p", together_said(group))
    for cand in r["candidates"]:
        yield from _candidate(cand, _name(r), r["state"])
    if r["state"]:
        sampled = [(t["topic"], f) for t in r["state"]["topics"] for _, f in sample_facts(t)]
        if sampled:
            yield Block("list", items=[f"{topic}: intervals {f}" for topic, f in sampled])
        yield from _routes(r["state"].get("routes"))
    yield Block("h", "Sub-topologies today")
    yield Block(
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
    yield Block(
        "table",
        header=("topic", "role", "partitions", "cleanup.policy"),
        rows=[
            (t["topic"], t["role"], str(t["partitions"]), t["cleanup_policy"]) for t in r["topics"]
        ],
    )
    if r["notes"]:
        yield Block("list", items=r["notes"])


#: What a movable store's size on disk says when no broker described its log.
_NO_LOG_DIRS = (
    "bytes unknown: no broker described its log dirs (DescribeLogDirs needs DESCRIBE on the "
    "cluster)"
)


def _routes(routes: list[StateRoute] | None) -> Iterator[Block]:
    """Each store's route (issue 70): moved, with its changelog's size, or why not."""
    if not routes:
        return
    yield Block(
        "h", f"Moving the state instead (migcheck runbook --strategy {Strategy.MOVE_STATE})"
    )
    yield Block("list", items=[_route_line(x) for x in routes])


def _route_line(x: StateRoute) -> str:
    if not x["movable"]:
        return f"{x['store']}: not movable: {x['reason']}"
    records = f"{format_count(x['records'] or 0)} records"
    if x["bytes"] is None:
        return f"{x['store']}: movable ({x['changelog']}: {records}; {_NO_LOG_DIRS})"
    return f"{x['store']}: movable ({x['changelog']}: {records}, {format_bytes(x['bytes'])})"


def _health(reasons: list[AppReason]) -> Iterator[Block]:
    if not reasons:
        yield Block("p", "Health today: every internal topic matches its sources.")
        return
    yield Block("h", "Health today: already broken")
    yield Block("p", "Internal topics disagree with their sources: a topic was already altered.")
    yield Block("list", items=[_reason_line(x) for x in reasons])


def _moved_lines(state: AppState, n: int) -> Iterator[str]:
    for t in state["topics"]:
        cand = next((x for x in t["candidates"] if x["partitions"] == n), None)
        if cand is not None:
            label = keys_label(cand, "moved_keys")
            keys = format_estimate(cand["moved_keys"], cand["moved_keys_interval"], label=label)
            yield f"{t['topic']}: {keys} keys change partition (no store is visible to measure)"


def _candidate(c: AppCandidate, name: str, state: AppState | None) -> Iterator[Block]:
    yield Block("h", f"{c['partitions']} partitions: {c['verdict']}")
    words = c.get("error_releases")
    said = f" (as {words} word it)" if words else ""
    when = c.get("error_when")
    if c["error"]:
        yield Block("p", f"{name} will fail with{said}" + (f", {when}:" if when else ":"))
        yield Block("code", c["error"])
    cands = c.get("error_candidates") or []
    if cands:
        yield Block(
            "p",
            "Whether topics are joined decides the first error, and the cluster does not "
            f"show it. In the order Kafka Streams checks them, {name} fails with{said}"
            + (f", {when}:" if when else ":"),
        )
        for x in cands:
            yield Block("p", f"If {x['condition']}:")
            yield Block("code", x["error"] or f"no error: {x['verdict']}")
        yield Block("p", f"{TOPOLOGY_SETTLES[0].upper()}{TOPOLOGY_SETTLES[1:]}.")
    if c.get("after_cleanup"):
        yield Block("p", f"Then: {c.get('after_cleanup')}")
    if c.get("lost_history"):
        yield Block("p", f"Remedy: {c.get('lost_history')}")
    shown = {c["error"], *(x["error"] for x in cands)}
    others = [x for x in c["reasons"] if x["text"] not in shown]  # the errors are shown above
    if others:
        yield Block("list", items=[_reason_line(x) for x in others])
    yield Block(
        "table",
        header=("sub-topology", "tasks", f"tasks {ARROW}", "verdict"),
        rows=[
            (str(s["id"]), str(s["tasks"]), str(s["new_tasks"]), s["verdict"])
            for s in c["subtopologies"]
        ],
    )
    if c["stores"] == [] and state is not None:  # no store visible: what moves is the topics'
        yield Block("list", items=list(_moved_lines(state, c["partitions"])))
    elif c["stores"] is not None:
        yield Block(
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
        format_estimate(
            s["moved_keys"], s["moved_keys_interval"], label=keys_label(s, "moved_keys")
        ),
        format_estimate(s["moved_bytes"], s["moved_bytes_interval"], format_bytes),
        restore,
    ]


def _reason_line(x: AppReason) -> str:
    where = "today" if x["subtopology"] is None else f"sub-topology {x['subtopology']}"
    if x.get("condition"):  # a shape of the app the evidence cannot rule out
        where = f"only if {x.get('condition')}"
    stores = f" (stores: {', '.join(x['stores'])})" if x["stores"] else ""
    return f"{x['level']} [{where}] {x['text']}{stores}"


def render_app_text(report: AppReport) -> str:
    """The app report for a terminal or a CI log: plain text, aligned tables."""
    return blocks_text(_blocks(report))


def render_app_markdown(report: AppReport) -> str:
    """The app report for a change ticket: every value escaped where it lands."""
    return blocks_markdown(_blocks(report))


def render_app_html(report: AppReport) -> str:
    """The app report as one self-contained HTML page (inline CSS and SVG), for a browser;
    its verdict first, as a badge."""
    changes = ", ".join(report["changes"])
    return blocks_html(_blocks(report), Badge(report["verdict"], changes))
