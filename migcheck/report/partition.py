"""``migcheck partition``'s answer: a table for a terminal, or JSON."""

from __future__ import annotations

import json
from typing import Any

from migcheck.hashing.keys import printable


def render_partition_rows(
    rows: list[dict[str, Any]], partitions: int, to: int | None, fmt: str
) -> str:
    """The rows of :func:`migcheck.commands.partition.key_rows` as ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    return _table(rows, partitions, to)


def _cell(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _table(rows: list[dict[str, Any]], partitions: int, to: int | None) -> str:
    header = ["KEY", f"PARTITION({partitions})"]
    if to is not None:
        header += [f"PARTITION({to})", "MOVED"]
    table = [header]
    for row in rows:
        line = [printable(bytes.fromhex(row["key_hex"])), _cell(row["partition"])]
        if to is not None:
            line += [_cell(row["new_partition"]), _cell(row["moved"])]
        table.append(line)
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    out = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in table]
    if any(row["partition"] is None for row in rows):
        out.append("- : the partitioner does not hash this key (sticky/random placement)")
    return "\n".join(out) + "\n"
