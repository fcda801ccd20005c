"""``migcheck partition``'s answer: a table for a terminal, or JSON."""

from __future__ import annotations

import json

from migcheck.hashing.keys import printable
from migcheck.model.partition import Placements


def render_partition_json(placements: Placements) -> str:
    """The rows as a JSON list (:class:`~migcheck.model.partition.KeyRow`)."""
    return json.dumps(placements.rows, indent=2) + "\n"


def _cell(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def render_partition_text(placements: Placements) -> str:
    """The rows as a table; a note when some key is not hashed."""
    rows, partitions, to = placements.rows, placements.partitions, placements.to
    header = ["KEY", f"PARTITION({partitions})"]
    if to is not None:
        header += [f"PARTITION({to})", "MOVED"]
    table = [header]
    for row in rows:
        line = [printable(bytes.fromhex(row["key_hex"])), _cell(row["partition"])]
        if to is not None:
            line += [_cell(row.get("new_partition")), _cell(row.get("moved"))]
        table.append(line)
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    out = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in table]
    if any(row["partition"] is None for row in rows):
        out.append("- : the partitioner does not hash this key (sticky/random placement)")
    return "\n".join(out) + "\n"
