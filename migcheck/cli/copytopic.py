"""``migcheck copy``: a topic's records into a wider topic, placed as its producers would."""

from __future__ import annotations

from typing import Any

import click

from migcheck.cli.common import (
    bootstrap_option,
    command_config_option,
    conf_option,
    connection_of,
    master_option,
    partitioner_option,
    spark_of,
)
from migcheck.commands.copy import CopyOptions, run_copy
from migcheck.report.copy import render_copy_summary


@click.command("copy")
@bootstrap_option
@command_config_option
@click.option("--topic", required=True, metavar="TOPIC", help="The topic to copy.")
@click.option("--into", required=True, metavar="TOPIC", help="The existing, wider topic.")
@partitioner_option
@click.option(
    "--checkpoint",
    type=click.Path(dir_okay=False),
    default=None,
    help="Records the source offsets copied: a re-run copies only what arrived since.",
)
@master_option
@conf_option
def copy_cmd(**opts: Any) -> int:
    """Copy every committed record of --topic into --into, each key on its new partition.

    Exactly once, also across a killed run (with --checkpoint), in order per key,
    with timestamps and headers.  Exit 0 when the copy verifies, 1 when it does not, 3
    when the producers' partitioner cannot be told (force it with --partitioner),
    2 on bad input (a non-empty --into without a checkpoint is refused).
    """
    options = CopyOptions(connection=connection_of(opts), spark=spark_of(opts), **opts)
    result, code = run_copy(options)
    click.echo(render_copy_summary(result), nl=False)
    return code
