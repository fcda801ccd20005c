"""``migcheck app``: CRASH, CORRUPT or SAFE for a Kafka Streams application, before the alter."""

from __future__ import annotations

from typing import Any

import click

from migcheck.cli.common import (
    application_id_option,
    bootstrap_option,
    command_config_option,
    conf_option,
    connection_of,
    fixed_repartition_option,
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
    topology_option,
    write_text,
)
from migcheck.commands.app import AppOptions, run_app
from migcheck.report import render
from migcheck.report.why import app_lines


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
@fixed_repartition_option
@click.option("--state", is_flag=True, help="Also measure the state that moves, per store.")
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
@master_option
@conf_option
def app_cmd(
    to: tuple[str, ...],
    topics: tuple[str, ...],
    fixed_repartition: tuple[str, ...],
    fmt: str,
    output: str | None,
    **opts: Any,
) -> int:
    """Say what a partition change does to a Kafka Streams app: CRASH, CORRUPT or SAFE.

    Exit 0 when every candidate is SAFE, 1 when any would CRASH or CORRUPT the app, 3
    when --state cannot predict a topic's placement; each reason is one line on stderr.
    """
    options = AppOptions(
        connection=connection_of(opts),
        spark=spark_of(opts),
        topics=list(dict.fromkeys(topics)),
        candidates=parse_counts(to),
        fixed_repartition=list(fixed_repartition),
        **opts,
    )
    outcome = run_app(options)
    write_text(render(outcome.report, fmt), output)
    say_why(app_lines(outcome.report))
    return outcome.exit_code
