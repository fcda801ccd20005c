"""The old-to-new partition flows as a Mermaid ``sankey-beta`` block, for Markdown reports.

GitHub and GitLab strip inline ``<svg>`` from Markdown but draw a fenced ``mermaid``
block, so this is the picture a change ticket's reader sees.  Every node name is
made here (``p3 (now)``, ``p0-p9 (new)``), never taken from the data, so nothing
from a topic or a key reaches the diagram's syntax.  Past :data:`SANKEY_MAX_NODES`
partitions a side's partitions are grouped in equal ranges of consecutive
numbers: a diagram of hundreds of nodes draws nothing anyone can read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Most nodes on either side of the diagram; more partitions are grouped in ranges.
SANKEY_MAX_NODES = 16


def range_width(count: int, limit: int = SANKEY_MAX_NODES) -> int:
    """How many consecutive partitions one node stands for: 1 up to ``limit`` partitions."""
    return max(1, math.ceil(count / limit))


def node_name(partition: int, width: int, count: int, side: str) -> str:
    """The node holding ``partition``: ``p3 (now)``, or its range, ``p0-p9 (new)``."""
    lo = partition // width * width
    hi = min(lo + width, count) - 1
    name = f"p{lo}" if lo == hi else f"p{lo}-p{hi}"
    return f"{name} ({side})"


def sankey_flows(matrix: Sequence[Sequence[int]]) -> dict[tuple[str, str], int]:
    """Keys from each current node to each new node, nonzero only, in partition order."""
    rows, cols = len(matrix), max(map(len, matrix), default=0)
    from_width, to_width = range_width(rows), range_width(cols)
    flows: dict[tuple[str, str], int] = {}
    for i, row in enumerate(matrix):
        source = node_name(i, from_width, rows, "now")
        for j, keys in enumerate(row):
            if keys > 0:
                link = (source, node_name(j, to_width, cols, "new"))
                flows[link] = flows.get(link, 0) + keys
    return flows


def sankey_block(matrix: Sequence[Sequence[int]]) -> list[str]:
    """The fenced block's lines: ``sankey-beta``, then one CSV line per flow."""
    lines = ["```mermaid", "sankey-beta", ""]
    lines += [f'"{a}","{b}",{keys}' for (a, b), keys in sankey_flows(matrix).items()]
    return [*lines, "```"]


def grouping_note(matrix: Sequence[Sequence[int]]) -> str | None:
    """What a grouped diagram stands for, or None when each node is one partition."""
    rows, cols = len(matrix), max(map(len, matrix), default=0)
    widths = {"current": range_width(rows), "new": range_width(cols)}
    grouped = [f"{side} partitions in ranges of {w}" for side, w in widths.items() if w > 1]
    if not grouped:
        return None
    return (
        f"The diagram draws at most {SANKEY_MAX_NODES} nodes a side: "
        f"{' and '.join(grouped)}; the table has every partition."
    )
