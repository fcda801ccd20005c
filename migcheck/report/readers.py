"""The ``migcheck readers`` report as text, Markdown and HTML, from one description of it.

Per topic: a table of its readers (id, kind, state, members, lag, the worst risk), then
each reader's evidence, judgements and lag per partition.  Every id and topic comes from
the cluster: the blocks escape them for each format (:mod:`migcheck.report.blocks`).
"""

from __future__ import annotations

from collections.abc import Iterator

from migcheck.model.gate import GateVerdict
from migcheck.model.readers import ReaderEntry, ReaderPartition, ReadersReport, ReadersTopic
from migcheck.report.badge import Badge, worst
from migcheck.report.blocks import Block, blocks_markdown, blocks_text
from migcheck.report.htmlpage import blocks_html
from migcheck.words import plural


def _lag(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _risks(reader: ReaderEntry) -> str:
    return ", ".join(dict.fromkeys(j["risk"] for j in reader["judgements"])) or "-"


def _blocks(r: ReadersReport) -> Iterator[Block]:
    change = f", judged for {r['to']} partitions" if r["to"] else ""
    yield Block("h", f"migcheck readers: {', '.join(t['topic'] for t in r['topics'])}")
    yield Block("p", f"At {r['bootstrap_servers']}{change}.")
    for topic in r["topics"]:
        yield from _topic(topic)
    if r["notes"]:
        yield Block("h", "Notes")
        yield Block("list", items=r["notes"])


def _topic(t: ReadersTopic) -> Iterator[Block]:
    readers = t["readers"]
    yield Block(
        "h", f"{t['topic']} ({t['partitions']} partitions): {plural(len(readers), 'reader')}"
    )
    if not readers:
        yield Block("p", "No group has committed offsets on it or members assigned to it.")
        return
    yield Block(
        "table",
        header=("reader", "kind", "state", "members", "lag", "risks"),
        rows=[
            (
                g["id"],
                g["kind"],
                g["state"] or "-",
                str(g["members"]),
                _lag(g["lag"]),
                _risks(g),
            )
            for g in readers
        ],
        align="llllrr",
    )
    for reader in readers:
        yield from _reader(reader)


def _reader(g: ReaderEntry) -> Iterator[Block]:
    yield Block("sub", f"{g['id']}: {g['kind']}")
    protocol = f"{g['protocol']} protocol" if g["protocol"] else "protocol not given"
    yield Block("p", f"Evidence ({protocol}): {'; '.join(g['evidence'])}.")
    if g["judgements"]:
        yield Block("list", items=[f"{j['risk']}: {j['text']}" for j in g["judgements"]])
    yield Block("p", f"Lag per partition: {_partitions(g['partitions'])}.")


def _partitions(partitions: list[ReaderPartition]) -> str:
    return ", ".join(f"{p['partition']}: {_lag(p['lag'])}" for p in partitions) or "-"


def render_readers_text(report: ReadersReport) -> str:
    """The readers for a terminal: plain text, aligned tables."""
    return blocks_text(_blocks(report))


def render_readers_markdown(report: ReadersReport) -> str:
    """The readers for a change ticket: every value escaped where it lands."""
    return blocks_markdown(_blocks(report))


def render_readers_html(report: ReadersReport) -> str:
    """The readers as one self-contained HTML page, for a browser; the worst risk first,
    as a badge (SAFE when a proposed count was judged and no reader is at risk)."""
    risks = [j["risk"] for t in report["topics"] for g in t["readers"] for j in g["judgements"]]
    verdict = worst(risks) or (GateVerdict.SAFE if report["to"] else None)
    return blocks_html(_blocks(report), Badge(verdict, "the worst risk") if verdict else None)
