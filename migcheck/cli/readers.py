"""``migcheck readers``: who reads a topic, what kind of reader each is, and its risks."""

from __future__ import annotations

import click

from migcheck.cli.common import (
    PARTITION_COUNT,
    bootstrap_option,
    command_config_option,
    connection_of,
    output_option,
    plain_groups_option,
    report_format_option,
    write_outcome,
)
from migcheck.commands.readers import ReadersOptions, run_readers


@click.command("readers")
@bootstrap_option
@command_config_option
@click.option(
    "--topic",
    "topics",
    multiple=True,
    required=True,
    metavar="TOPIC",
    help="A topic whose readers to list (repeatable).",
)
@click.option(
    "--to",
    "to",
    type=PARTITION_COUNT,
    default=None,
    help="The proposed partition count the judgements name.",
)
@plain_groups_option
@report_format_option
@output_option
def readers_cmd(
    bootstrap: str | None,
    command_config: str | None,
    topics: tuple[str, ...],
    to: int | None,
    groups: tuple[str, ...],
    fmt: str,
    output: str | None,
) -> int:
    """List every reader of each --topic: its kind and the evidence, its members and lag,
    and what a partition increase does to it (ORDER, LOSS_RISK, UNKNOWN, or APP for a
    stateful app, which migcheck app judges).  Read-only; exit 0.
    """
    options = ReadersOptions(
        topics=topics,
        to=to,
        groups=groups,
        connection=connection_of(bootstrap, command_config),
    )
    return write_outcome(run_readers(options), fmt, output)
