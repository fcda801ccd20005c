"""``migcheck analyze``: what moves, and how much state, under the proposed counts?"""

from __future__ import annotations

from typing import Any

import click

from migcheck.analysis.pipeline import AnalyzeOptions, run_analyze
from migcheck.cli.common import (
    PARTITION_COUNT,
    output_option,
    parse_conf,
    parse_counts,
    report_format_option,
    write_text,
)
from migcheck.cli.progress import RecordsProgress
from migcheck.hashing.keys import KEY_ENCODINGS
from migcheck.hashing.partitioners import PARTITIONERS
from migcheck.report import render


@click.command("analyze")
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
    to: tuple[str, ...],
    conf: tuple[str, ...],
    topics: tuple[str, ...],
    fmt: str,
    output: str | None,
    **opts: Any,
) -> int:
    """Report which keys, and how much state, a partition-count change would move."""
    options = AnalyzeOptions(
        candidates=parse_counts(to), conf=parse_conf(conf), topics=list(topics), **opts
    )
    outcome = run_analyze(options, RecordsProgress)
    write_text(render(outcome.report, fmt), output)
    return outcome.exit_code
