"""``migcheck analyze``: what moves, and how much state, under the proposed counts?"""

from __future__ import annotations

from typing import Any

import click

from migcheck.cli.common import (
    PARTITION_COUNT,
    bootstrap_option,
    command_config_option,
    conf_option,
    connection_of,
    full_option,
    master_option,
    output_option,
    parse_counts,
    partitioner_option,
    report_format_option,
    sample_option,
    say_why,
    spark_of,
    to_option,
    topic_option,
    write_text,
)
from migcheck.cli.progress import RecordsProgress
from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.hashing.keys import KEY_ENCODINGS
from migcheck.report import render
from migcheck.report.why import analyze_lines


@click.command("analyze")
@bootstrap_option
@command_config_option
@topic_option
@to_option
@full_option
@sample_option
@partitioner_option
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
@master_option
@conf_option
def analyze_cmd(
    to: tuple[str, ...],
    topics: tuple[str, ...],
    fmt: str,
    output: str | None,
    **opts: Any,
) -> int:
    """Report which keys, and how much state, a partition-count change would move.

    Exit 0, 1 when the gate fails, 3 when a topic cannot be predicted (no known
    partitioner placed its keys); each reason is one line on stderr.
    """
    options = AnalyzeOptions(
        candidates=parse_counts(to),
        topics=list(topics),
        connection=connection_of(opts, required=False),
        spark=spark_of(opts),
        **opts,
    )
    outcome = run_analyze(options, RecordsProgress)
    write_text(render(outcome.report, fmt), output)
    say_why(analyze_lines(outcome.report))
    return outcome.exit_code
