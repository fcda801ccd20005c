"""``migcheck plan``: whether more threads, more instances or more partitions are needed."""

from __future__ import annotations

from typing import Any

import click

from migcheck.cli.common import (
    application_id_option,
    bootstrap_option,
    command_config_option,
    connection_of,
    fixed_repartition_option,
    output_option,
    parse_topic_counts,
    report_format_option,
    say_why,
    topology_option,
    write_text,
)
from migcheck.commands.plan import PlanOptions, run_plan
from migcheck.report import render
from migcheck.report.why import plan_lines


@click.command("plan")
@application_id_option(
    required=False,
    help="The app's application.id (live: its group id and internal-topic prefix).",
)
@bootstrap_option
@command_config_option
@topology_option(help="The text Topology#describe() prints (required offline).")
@click.option(
    "--partitions",
    multiple=True,
    metavar="TOPIC=N",
    help="Offline: a source topic's partition count (repeatable); a repartition topic's "
    "when the app fixed its size.",
)
@click.option(
    "--set",
    "changes",
    multiple=True,
    metavar="TOPIC=N",
    help="A proposed partition count (repeatable): its figures beside today's, and its verdict.",
)
@click.option(
    "--instances",
    type=click.IntRange(1),
    default=None,
    help="Instances of the app (default: the group's members live, 1 offline).",
)
@click.option(
    "--threads",
    type=click.IntRange(1),
    default=None,
    help="num.stream.threads per instance (default: read from the group live, 1 offline).",
)
@click.option(
    "--standby-replicas",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="num.standby.replicas: standby tasks and the restore volume they cost.",
)
@fixed_repartition_option
@report_format_option
@output_option
def plan_cmd(
    partitions: tuple[str, ...],
    changes: tuple[str, ...],
    fixed_repartition: tuple[str, ...],
    fmt: str,
    output: str | None,
    **opts: Any,
) -> int:
    """Say whether more threads, more instances or more partitions would help a Streams app.

    Live (--application-id and --bootstrap-server) it reads the group's members and their
    tasks; offline (--topology and --partitions) it predicts them.  Exit 0, or 1 when a
    --set change would CRASH or CORRUPT the app.
    """
    options = PlanOptions(
        partitions=parse_topic_counts(partitions, "--partitions"),
        changes=parse_topic_counts(changes, "--set"),
        fixed_repartition=list(fixed_repartition),
        connection=connection_of(opts, required=False),
        **opts,
    )
    outcome = run_plan(options)
    write_text(render(outcome.report, fmt), output)
    say_why(plan_lines(outcome.report))
    return outcome.exit_code
