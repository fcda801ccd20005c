"""``migcheck app``: CRASH, CORRUPT or SAFE for a stream processing app (Kafka Streams,
ksqlDB, Quix Streams), before the alter."""

from __future__ import annotations

import click

from migcheck.cli.common import (
    application_id_option,
    bootstrap_option,
    command_config_option,
    connection_of,
    fixed_repartition_option,
    framework_option,
    full_option,
    output_option,
    parse_counts,
    partitioner_option,
    report_format_option,
    sample_option,
    spark_of,
    spark_options,
    to_option,
    topology_option,
    write_outcome,
)
from migcheck.commands.app import AppOptions, run_app
from migcheck.model.partitioner import PartitionerChoice


@click.command("app")
@bootstrap_option
@command_config_option
@application_id_option(help="The app's application.id: its group id and internal-topic prefix.")
@topology_option()
@click.option(
    "--topic",
    "topics",
    multiple=True,
    required=True,
    metavar="TOPIC",
    help="A topic whose partition count would change (repeatable).",
)
@to_option
@framework_option
@fixed_repartition_option
@click.option(
    "--state",
    is_flag=True,
    help="Also measure the state that moves, per store, and the route each store's state "
    "can take (moved, with its changelog's size, or why not).",
)
@full_option
@sample_option
@partitioner_option
@report_format_option
@output_option
@click.option(
    "--moved-keys-out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="With --state --full: write every moved key of the changed topics to this CSV.",
)
@spark_options
def app_cmd(
    bootstrap: str | None,
    command_config: str | None,
    app_id: str,
    topology_file: str | None,
    topics: tuple[str, ...],
    to: tuple[str, ...],
    framework: str,
    fixed_repartition: tuple[str, ...],
    state: bool,
    full: bool,
    sample_per_partition: int,
    partitioner: PartitionerChoice,
    fmt: str,
    output: str | None,
    moved_keys_out: str | None,
    master: str | None,
    conf: tuple[str, ...],
    remote: str | None,
    remote_config: str | None,
) -> int:
    """Say what a partition change does to a Kafka Streams, ksqlDB or Quix Streams app:
    CRASH, CORRUPT or SAFE.

    Exit 0 when every candidate is SAFE, 1 when any would CRASH or CORRUPT the app, 3
    when --state cannot predict a topic's placement; each reason is one line on stderr.
    """
    options = AppOptions(
        connection=connection_of(bootstrap, command_config),
        spark=spark_of(master, conf, remote, remote_config),
        topics=list(dict.fromkeys(topics)),
        candidates=parse_counts(to),
        app_id=app_id,
        topology_file=topology_file,
        fixed_repartition=list(fixed_repartition),
        state=state,
        full=full,
        sample_per_partition=sample_per_partition,
        partitioner=partitioner,
        moved_keys_out=moved_keys_out,
        framework=framework,
    )
    return write_outcome(run_app(options), fmt, output)
