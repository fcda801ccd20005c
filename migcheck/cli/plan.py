"""``migcheck plan``: whether more threads, more instances or more partitions are needed."""

from __future__ import annotations

import click

from migcheck.cli.common import (
    application_id_option,
    bootstrap_option,
    command_config_option,
    connection_of,
    deprecated_option,
    fixed_repartition_option,
    output_option,
    parse_topic_counts,
    renamed,
    report_format_option,
    topology_option,
    write_outcome,
)
from migcheck.commands.plan import PlanOptions, run_plan


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
    "--to",
    "changes",
    multiple=True,
    metavar="TOPIC=N",
    help="A proposed partition count (repeatable): its figures beside today's, and its verdict.",
)
@deprecated_option("--set", "--to TOPIC=N", "old_changes", multiple=True, metavar="TOPIC=N")
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
    app_id: str | None,
    bootstrap: str | None,
    command_config: str | None,
    topology_file: str | None,
    partitions: tuple[str, ...],
    changes: tuple[str, ...],
    old_changes: tuple[str, ...],
    instances: int | None,
    threads: int | None,
    standby_replicas: int,
    fixed_repartition: tuple[str, ...],
    fmt: str,
    output: str | None,
) -> int:
    """Say whether more threads, more instances or more partitions would help a Streams app.

    Live (--application-id and --bootstrap-server) it reads the group's members and their
    tasks; offline (--topology and --partitions) it predicts them.  Exit 0, or 1 when a
    --to change would CRASH or CORRUPT the app.
    """
    options = PlanOptions(
        partitions=parse_topic_counts(partitions, "--partitions"),
        changes=parse_topic_counts(renamed(changes, old_changes, "--to", "--set"), "--to"),
        fixed_repartition=list(fixed_repartition),
        connection=connection_of(bootstrap, command_config, required=False),
        app_id=app_id,
        topology_file=topology_file,
        instances=instances,
        threads=threads,
        standby_replicas=standby_replicas,
    )
    return write_outcome(run_plan(options), fmt, output)
