"""``migcheck runbook``: the exact procedure to widen a topic under a Kafka Streams app
(``--application-id``) or for the plain consumer groups that read it in per-key order
(``--group``, or every group found reading it)."""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

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
from migcheck.commands.groups_runbook import GroupsRunbookOptions, run_groups_runbook
from migcheck.commands.runbook import RunbookOptions, run_runbook
from migcheck.errors import EXIT_OK, UsageError
from migcheck.model.runbook import (
    ASSIGN_TIMEOUT,
    AUTO,
    GROUP_TIMEOUT,
    IN_PLACE,
    LAG_TIMEOUT,
    NEW_TOPIC,
)
from migcheck.untrusted import visible

#: The options that only one kind of runbook takes, by parameter name: given for the
#: other kind, they are refused in one line rather than silently ignored.
STREAMS_ONLY = (
    "topology_file",
    "new_topic",
    "strategy",
    "group_timeout",
    "accept_split_history",
    "state_dir",
    "fixed_repartition",
    "master",
    "conf",
)
GROUPS_ONLY = ("groups", "assign_timeout")


@click.command("runbook")
@bootstrap_option
@command_config_option
@application_id_option(
    required=False, help="A Kafka Streams app's application.id: its reset-and-reprocess runbook."
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="A plain consumer group reading TOPIC in per-key order (repeatable); without it "
    "and --application-id, every group with committed offsets on TOPIC.",
)
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
    type=click.Choice([AUTO, NEW_TOPIC, IN_PLACE]),
    default=AUTO,
    show_default=True,
    help="new-topic: copy, reset, reprocess; in-place: alter, reset, reprocess (when no "
    "store reads TOPIC directly); auto: in-place when that holds, else new-topic.",
)
@click.option(
    "--group-timeout",
    type=click.IntRange(min=0),
    default=GROUP_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long step 2 waits for a stopped app's group to empty (its session timeout).",
)
@click.option(
    "--lag-timeout",
    type=click.IntRange(min=1),
    default=LAG_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long the script waits for a group's lag to drain to 0.",
)
@click.option(
    "--assign-timeout",
    type=click.IntRange(min=1),
    default=ASSIGN_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="--group: how long the script waits for every group to own the new partitions "
    "(their metadata.max.age.ms, 5 min by default, and a margin).",
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
    """Write the runbook for widening TOPIC: under a Streams app (--application-id), or
    keeping per-key order for plain consumer groups (--group, or every group reading it).

    Exit 0 when it is written; 1 when --strategy in-place is refused (the keys whose
    history would split are listed in the output); 2 on bad input.
    """
    streams = opts["app_id"] is not None
    _refuse_options(GROUPS_ONLY if streams else STREAMS_ONLY, streams)
    groups, assign_timeout = opts.pop("groups"), opts.pop("assign_timeout")
    if not streams:
        text = run_groups_runbook(
            GroupsRunbookOptions(
                topic=opts["topic"],
                to=opts["to"],
                groups=groups,
                lag_timeout=opts["lag_timeout"],
                assign_timeout=assign_timeout,
                fmt=opts["fmt"],
                connection=connection_of(opts),
            )
        )
        write_text(text, output)
        return EXIT_OK
    options = RunbookOptions(
        connection=connection_of(opts),
        spark=spark_of(opts),
        fixed_repartition=list(fixed_repartition),
        **opts,
    )
    outcome = run_runbook(options)
    write_text(outcome.text, output)
    if outcome.message:
        click.echo(f"migcheck: {visible(outcome.message)}", err=True)
    return outcome.exit_code


def _refuse_options(names: tuple[str, ...], streams: bool) -> None:
    """One line for the first option given that the other kind of runbook takes."""
    ctx = click.get_current_context()
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if param.name in names and source not in (None, ParameterSource.DEFAULT):
            if streams:
                raise UsageError(
                    f"{param.opts[0]} is for plain consumer groups, not with --application-id"
                )
            raise UsageError(
                f"{param.opts[0]} is for a Kafka Streams application: give --application-id "
                "(without --group) for its runbook"
            )
