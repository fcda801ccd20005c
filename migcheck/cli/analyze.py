"""``migcheck analyze``: what moves, and how much state, under the proposed counts?"""

from __future__ import annotations

import click

from migcheck.cli.common import (
    PARTITION_COUNT,
    bootstrap_option,
    command_config_option,
    connection_of,
    deprecated_option,
    full_option,
    output_option,
    parse_counts,
    partitioner_option,
    renamed,
    report_format_option,
    sample_option,
    spark_of,
    spark_options,
    to_option,
    topic_option,
    write_outcome,
)
from migcheck.cli.progress import RecordsProgress
from migcheck.commands.analyze import AnalyzeOptions, run_analyze
from migcheck.hashing.keys import KEY_ENCODINGS
from migcheck.model.partitioner import PartitionerChoice


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
    "--partitions",
    "partitions",
    type=PARTITION_COUNT,
    default=None,
    metavar="N",
    help="With --keys-file: the current partition count.",
)
@deprecated_option("--from", "--partitions N", "old_partitions", type=PARTITION_COUNT)
@click.option(
    "--key-encoding",
    type=click.Choice(KEY_ENCODINGS),
    default="hex",
    show_default=True,
    help="With --keys-file: how text keys are written.",
)
@spark_options
def analyze_cmd(
    bootstrap: str | None,
    command_config: str | None,
    topics: tuple[str, ...],
    to: tuple[str, ...],
    full: bool,
    sample_per_partition: int,
    partitioner: PartitionerChoice,
    fmt: str,
    output: str | None,
    moved_keys_out: str | None,
    moved_key_sample: int,
    fail_if_moved: bool,
    max_moved_fraction: float | None,
    keys_file: str | None,
    partitions: int | None,
    old_partitions: int | None,
    key_encoding: str,
    master: str | None,
    conf: tuple[str, ...],
    remote: str | None,
    remote_config: str | None,
) -> int:
    """Report which keys, and how much state, a partition-count change would move.

    Exit 0, 1 when the gate fails, 3 when a topic cannot be predicted (no known
    partitioner placed its keys); each reason is one line on stderr.
    """
    options = AnalyzeOptions(
        candidates=parse_counts(to),
        topics=list(topics),
        full=full,
        sample_per_partition=sample_per_partition,
        partitioner=partitioner,
        moved_keys_out=moved_keys_out,
        moved_key_sample=moved_key_sample,
        fail_if_moved=fail_if_moved,
        max_moved_fraction=max_moved_fraction,
        keys_file=keys_file,
        partitions=renamed(partitions, old_partitions, "--partitions", "--from"),
        key_encoding=key_encoding,
        connection=connection_of(bootstrap, command_config, required=False),
        spark=spark_of(master, conf, remote, remote_config),
    )
    return write_outcome(run_analyze(options, RecordsProgress), fmt, output)
