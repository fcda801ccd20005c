"""``migcheck partition``: where does a key go, now and under a proposed count?"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import click

from migcheck.cli.common import PARTITION_COUNT
from migcheck.errors import UsageError
from migcheck.hashing.keys import KEY_ENCODINGS, KEY_TYPES, encode_key, printable
from migcheck.hashing.partitioners import PARTITIONERS, UNHASHED, check_can_grow, partition_array


def _read_keys(args: Sequence[str]) -> list[str]:
    """Key arguments, where ``-`` stands for stdin, one key per line."""
    keys: list[str] = []
    for arg in args:
        if arg == "-":
            keys.extend(line.rstrip("\r\n") for line in sys.stdin)
        else:
            keys.append(arg)
    return keys


@click.command("partition")
@click.option(
    "--partitions",
    "partitions",
    type=PARTITION_COUNT,
    required=True,
    help="The topic's current partition count.",
)
@click.option(
    "--to",
    "to",
    type=PARTITION_COUNT,
    default=None,
    help="A proposed partition count: also show where each key goes and if it moves.",
)
@click.option(
    "--partitioner",
    type=click.Choice(list(PARTITIONERS)),
    default="murmur2",
    show_default=True,
    help="The producing client's partitioner.",
)
@click.option(
    "--key-encoding",
    type=click.Choice(KEY_ENCODINGS),
    default="utf8",
    show_default=True,
    help="How raw (--key-type bytes) keys are written.",
)
@click.option(
    "--key-type",
    type=click.Choice(KEY_TYPES),
    default="bytes",
    show_default=True,
    help="Parse each key as this Java type and serialize it as Kafka's serializer does.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.argument("keys", nargs=-1, required=True)
def partition_cmd(
    partitions: int,
    to: int | None,
    partitioner: str,
    key_encoding: str,
    key_type: str,
    fmt: str,
    keys: tuple[str, ...],
) -> None:
    """Print the partition of each KEY (``-`` reads keys from stdin, one per line)."""
    if to is not None:
        check_can_grow(partitions, [to])
    if key_type != "bytes" and key_encoding != "utf8":
        raise UsageError("--key-encoding applies to --key-type bytes only")
    texts = _read_keys(keys)
    raw = [encode_key(t, key_type, key_encoding) for t in texts]
    now = partition_array(raw, partitions, partitioner)
    new = partition_array(raw, to, partitioner) if to is not None else None

    rows = []
    for i, (text, key) in enumerate(zip(texts, raw, strict=True)):
        row: dict[str, object] = {"key": text, "key_hex": key.hex()}
        p = int(now[i])
        row["partition"] = None if p == UNHASHED else p
        if new is not None:
            q = int(new[i])
            row["new_partition"] = None if q == UNHASHED else q
            row["moved"] = None if p == UNHASHED else p != q
        rows.append(row)

    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    _echo_partition_table(rows, raw, partitions, to)


def _echo_partition_table(
    rows: list[dict[str, object]], raw: list[bytes], partitions: int, to: int | None
) -> None:
    def cell(v: object) -> str:
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "yes" if v else "no"
        return str(v)

    header = ["KEY", f"PARTITION({partitions})"]
    if to is not None:
        header += [f"PARTITION({to})", "MOVED"]
    table = [header]
    for row, key in zip(rows, raw, strict=True):
        line = [printable(key), cell(row["partition"])]
        if to is not None:
            line += [cell(row["new_partition"]), cell(row["moved"])]
        table.append(line)
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    for r in table:
        click.echo("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    if any(row["partition"] is None for row in rows):
        click.echo("- : the partitioner does not hash this key (sticky/random placement)")
