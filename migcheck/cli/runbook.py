"""``migcheck runbook``: the exact procedure to widen a topic under a Kafka Streams app."""

from __future__ import annotations

from typing import Any

import click

from migcheck.cli.common import (
    PARTITION_COUNT,
    application_id_option,
    bootstrap_option,
    command_config_option,
    conf_option,
    connection_of,
    fixed_repartition_option,
    master_option,
    spark_of,
    topology_option,
    write_text,
)
from migcheck.commands.runbook import RunbookOptions, run_runbook
from migcheck.model.runbook import IN_PLACE, NEW_TOPIC


@click.command("runbook")
@bootstrap_option
@command_config_option
@application_id_option()
@topology_option()
@click.option("--topic", required=True, metavar="TOPIC", help="The topic to widen.")
@click.option(
    "--to", required=True, type=PARTITION_COUNT, metavar="N", help="Its new partition count."
)
@click.option(
    "--new-topic", default=None, metavar="TOPIC", help="The wider copy (default <topic>-p<N>)."
)
@click.option(
    "--strategy",
    type=click.Choice([NEW_TOPIC, IN_PLACE]),
    default=NEW_TOPIC,
    show_default=True,
    help="new-topic: copy, reset, reprocess; in-place: alter, reset (stateless apps only).",
)
@click.option(
    "--accept-split-history",
    is_flag=True,
    help="Write an in-place runbook even though keyed state would split.",
)
@click.option(
    "--state-dir", default=None, metavar="DIR", help="The app's state.dir, to wipe on this host."
)
@fixed_repartition_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "sh"]),
    default="markdown",
    show_default=True,
    help="markdown for the change ticket, sh for a script (prints; acts with --execute).",
)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write it here.")
@master_option
@conf_option
def runbook_cmd(
    output: str | None,
    fixed_repartition: tuple[str, ...],
    **opts: Any,
) -> int:
    """Write the reset-and-reprocess runbook for widening TOPIC under a Streams app.

    Exit 0 when it is written; 1 when --strategy in-place is refused (the keys whose
    history would split are listed in the output); 2 on bad input.
    """
    options = RunbookOptions(
        connection=connection_of(opts),
        spark=spark_of(opts),
        fixed_repartition=list(fixed_repartition),
        **opts,
    )
    outcome = run_runbook(options)
    write_text(outcome.text, output)
    if outcome.message:
        click.echo(f"migcheck: {outcome.message}", err=True)
    return outcome.exit_code
