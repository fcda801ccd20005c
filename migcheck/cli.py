"""The ``migcheck`` command line.

Option names follow Kafka's own tools (``--bootstrap-server``,
``--command-config``, ``--partitions``).  Bad input never shows a traceback:
:func:`main` turns every usage or input error into one line on stderr and exit
code 2, the way an operator tool should fail in a script or CI gate.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from migcheck import __version__
from migcheck.keys import KEY_ENCODINGS, KEY_TYPES, KeyFormatError, encode_key, printable
from migcheck.partitioning import (
    MAX_PARTITIONS,
    PARTITIONERS,
    UNHASHED,
    partition_array,
)

#: Exit codes, as documented in the README.
EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2

PARTITION_COUNT = click.IntRange(1, MAX_PARTITIONS)


class MigcheckError(click.ClickException):
    """An error the user can fix: reported as one line, exit code 2."""

    exit_code = EXIT_USAGE


def check_can_grow(current: int, targets: Sequence[int], option: str = "--to") -> None:
    """Kafka can only add partitions: refuse a target below the current count."""
    for target in targets:
        if target < current:
            raise MigcheckError(
                f"{option} {target} is below the current {current} partitions: "
                "Kafka can only add partitions"
            )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migcheck")
def cli() -> None:
    """Check what a Kafka partition-count change does to keyed data and Streams state."""


def _read_keys(args: Sequence[str]) -> list[str]:
    """Key arguments, where ``-`` stands for stdin, one key per line."""
    keys: list[str] = []
    for arg in args:
        if arg == "-":
            keys.extend(line.rstrip("\r\n") for line in sys.stdin)
        else:
            keys.append(arg)
    return keys


@cli.command("partition")
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
        raise MigcheckError("--key-encoding applies to --key-type bytes only")
    texts = _read_keys(keys)
    try:
        raw = [encode_key(t, key_type, key_encoding) for t in texts]
    except KeyFormatError as e:
        raise MigcheckError(str(e)) from None
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


def _parse_counts(values: tuple[str, ...]) -> list[int]:
    """``--to 8,12 --to 16`` -> [8, 12, 16], each a valid Kafka partition count."""
    counts: list[int] = []
    for value in values:
        for part in value.split(","):
            try:
                n = int(part.strip())
            except ValueError:
                raise MigcheckError(f"--to {part.strip()!r} is not a partition count") from None
            if not 1 <= n <= MAX_PARTITIONS:
                raise MigcheckError(f"--to {n} is out of range (1 to {MAX_PARTITIONS})")
            if n not in counts:
                counts.append(n)
    if not counts:
        raise MigcheckError("--to needs at least one partition count")
    return counts


def _parse_conf(values: tuple[str, ...]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise MigcheckError(f"--conf {value!r} is not key=value")
        conf[key.strip()] = val.strip()
    return conf


#: Options every report-writing command shares.
report_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),  # what migcheck.render.render takes
    default="text",
    show_default=True,
    help="text for a terminal, json for machines, markdown for a change ticket.",
)
output_option = click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the report here instead of stdout.",
)


@cli.command("analyze")
@click.option(
    "--bootstrap-server",
    "bootstrap",
    metavar="HOST:PORT",
    help="The Kafka cluster to read (read-only: no group, no commits).",
)
@click.option(
    "--command-config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kafka client properties (security.protocol, sasl.*, ssl.*), as for Kafka's tools.",
)
@click.option(
    "--topic", "topics", multiple=True, metavar="TOPIC", help="A topic to analyze (repeatable)."
)
@click.option(
    "--to",
    "to",
    multiple=True,
    required=True,
    metavar="N[,M...]",
    help="Proposed partition count(s), compared side by side.",
)
@click.option("--full", is_flag=True, help="Read every record instead of a sample.")
@click.option(
    "--sample-per-partition",
    type=click.IntRange(1),
    default=20_000,
    show_default=True,
    help="Records to read per partition, in windows spread over its offsets.",
)
@click.option(
    "--partitioner",
    type=click.Choice(["auto", *PARTITIONERS]),
    default="auto",
    show_default=True,
    help="The producers' partitioner; auto picks the one that placed every key.",
)
@report_format_option
@output_option
@click.option(
    "--moved-keys-out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write every moved key to this CSV (needs --full or --keys-file).",
)
@click.option(
    "--moved-key-sample",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="Moved keys to show per candidate (a stable mmh3 sample).",
)
@click.option(
    "--fail-if-moved", is_flag=True, help="Exit 1 when any key would move (approval gate)."
)
@click.option(
    "--max-moved-fraction",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit 1 when more than this fraction of keys would move (approval gate).",
)
@click.option(
    "--keys-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Analyze an offline export (Parquet, CSV, JSON lines) instead of Kafka.",
)
@click.option(
    "--from",
    "from_partitions",
    type=PARTITION_COUNT,
    default=None,
    help="With --keys-file: the current partition count.",
)
@click.option(
    "--key-encoding",
    type=click.Choice(KEY_ENCODINGS),
    default="hex",
    show_default=True,
    help="With --keys-file: how text keys are written.",
)
@click.option("--master", default=None, help="Spark master URL (default: embedded local[*]).")
@click.option(
    "--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark setting (repeatable)."
)
def analyze_cmd(
    to: tuple[str, ...], conf: tuple[str, ...], topics: tuple[str, ...], **opts: Any
) -> int:
    """Report which keys, and how much state, a partition-count change would move."""
    from migcheck.pipeline import AnalyzeOptions, run_analyze

    options = AnalyzeOptions(
        candidates=_parse_counts(to), conf=_parse_conf(conf), topics=list(topics), **opts
    )
    return run_analyze(options)


@cli.command("render")
@click.argument("report", type=click.Path(exists=True, dir_okay=False))
@report_format_option
@output_option
def render_cmd(report: str, fmt: str, output: str | None) -> None:
    """Render a saved ``analyze --format json`` REPORT again, e.g. as Markdown for a ticket."""
    from migcheck import render

    try:
        with open(report, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise MigcheckError(f"{report}: not a migcheck JSON report ({e})") from None
    if not isinstance(data, dict) or "topics" not in data:
        raise MigcheckError(f"{report}: not a migcheck JSON report (no 'topics')")
    try:
        text = render.render(data, fmt)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise MigcheckError(f"{report}: incomplete migcheck JSON report ({e!r})") from None
    write_text(text, output)


def write_text(text: str, output: str | None) -> None:
    """Write a report to ``output`` (saying where on stderr) or to stdout."""
    if output is None:
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise MigcheckError(f"--output {output}: {e.strerror}") from None
    click.echo(f"migcheck: report written to {output}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning every user error into one stderr line and exit 2."""
    try:
        rv = cli.main(args=argv, prog_name="migcheck", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("migcheck: aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        message = " ".join(e.format_message().split())
        click.echo(f"migcheck: error: {message}", err=True)
        sys.exit(EXIT_USAGE if e.exit_code in (1, 2) else e.exit_code)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
