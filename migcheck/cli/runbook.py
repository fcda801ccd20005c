"""``migcheck runbook``: the exact procedure to widen a topic under a Kafka Streams app
(``--application-id``) or for the plain consumer groups that read it in per-key order
(``--group``, or every group found reading it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import click
from click.core import ParameterSource

from migcheck.cli.common import (
    PARTITION_COUNT,
    accept_lost_history_option,
    application_id_option,
    bootstrap_option,
    command_config_option,
    conf_option,
    connection_of,
    cutover_timeout_option,
    fixed_repartition_option,
    format_option,
    framework_option,
    master_option,
    partitioner_option,
    spark_of,
    topology_option,
    writable_output,
    write_outcome,
)
from migcheck.commands.groups_runbook import GroupsRunbookOptions, run_groups_runbook
from migcheck.commands.outcome import Outcome
from migcheck.commands.runbook import RunbookOptions, run_runbook
from migcheck.errors import UsageError
from migcheck.model.migrate import MigrateTuning
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.runbook import (
    ASSIGN_TIMEOUT,
    COMMIT_TIMEOUT,
    GROUP_TIMEOUT,
    LAG_TIMEOUT,
    Runbook,
    SplitRefusal,
    Strategy,
)

#: The CLI parameters whose options-dataclass field has another name.
_FIELD_OF = {"master": "spark", "conf": "spark"}


def only_in(mine: type, other: type, names: Iterable[str]) -> tuple[str, ...]:
    """The parameters of ``names`` that the options dataclass ``mine`` takes and ``other``
    does not.  The two dataclasses are the one declaration of which runbook takes which
    option: an option given for the other kind is refused in one line rather than
    silently ignored, and a new field needs no list kept by hand."""
    theirs = {f.name for f in dataclasses.fields(other)}
    ours = {f.name for f in dataclasses.fields(mine)} - theirs
    return tuple(n for n in names if _FIELD_OF.get(n, n) in ours)


def _seconds(name: str, default: int, help: str, least: int = 1):
    """A wait of the script's, in whole seconds (at least ``least``)."""
    return click.option(
        name,
        type=click.IntRange(min=least),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )


@click.command("runbook")
@bootstrap_option
@command_config_option
@application_id_option(
    required=False,
    help="A Kafka Streams app's application.id, a ksqlDB query's, or a Quix Streams "
    "app's consumer group: its reprocess runbook.",
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="A plain consumer group reading TOPIC in per-key order (repeatable); without it "
    "and --application-id, every group with committed offsets on TOPIC.  With an app's "
    "--strategy online it moves at the same barrier.",
)
@click.option(
    "--output-topic",
    "output_topics",
    multiple=True,
    metavar="TOPIC",
    help="--strategy online: an output topic of the app (repeatable; default: its "
    "--topology's sinks; --output-topic '' when it writes none); its shadow writes TOPIC-pN.",
)
@click.option(
    "--downstream-group",
    "downstream_groups",
    multiple=True,
    metavar="GROUP",
    help="--strategy online: a group reading the app's outputs, moved to the shadow's at "
    "the barrier (repeatable).",
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
    type=click.Choice([s.value for s in Strategy]),
    default=Strategy.AUTO.value,
    show_default=True,
    help="new-topic: copy, reset, reprocess; in-place: alter, reset, reprocess (when no "
    "store reads TOPIC directly); auto: in-place when that holds, else new-topic.  For "
    "plain groups: in-place (auto) pauses, drains and alters.  online (groups, Kafka "
    "Streams, ksqlDB) runs migcheck migrate: a live copy, an app's shadow rebuilt on it, "
    "the producers paused for seconds.",
)
@_seconds(
    "--group-timeout",
    GROUP_TIMEOUT,
    "How long step 2 waits for a stopped app's group to empty (its session timeout).",
    least=0,
)
@_seconds(
    "--lag-timeout", LAG_TIMEOUT, "How long the script waits for a group's lag to drain to 0."
)
@_seconds(
    "--assign-timeout",
    ASSIGN_TIMEOUT,
    "--group: how long the script waits for every group to own the new partitions "
    "(their metadata.max.age.ms, 5 min by default, and a margin).",
)
@_seconds(
    "--commit-timeout",
    COMMIT_TIMEOUT,
    "--group: how long the script waits for a group's members to commit an offset on "
    "each new partition (auto.commit.interval.ms, 5 s by default, and a margin).",
)
@click.option(
    "--accept-loss-risk",
    "accept_loss_risk",
    multiple=True,
    metavar="GROUP",
    help="--group: a group of the runbook whose members may commit no offset on the new "
    "partitions before the producers resume; the script says so instead of stopping "
    "(repeatable).",
)
@click.option(
    "--accept-split-history",
    is_flag=True,
    help="Write an in-place runbook even though keyed state would split.",
)
@accept_lost_history_option
@click.option(
    "--state-dir",
    default=None,
    metavar="DIR",
    help="The app's state directory on this host, to wipe: Kafka Streams' state.dir, or "
    "the framework's own (docs/runbooks.md).",
)
@fixed_repartition_option
@framework_option
@partitioner_option
@cutover_timeout_option
@format_option(
    ("markdown", "sh"),
    "markdown for the change ticket, sh for a script (prints; acts with --execute).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    callback=writable_output,
    help="Write it here.",
)
@master_option
@conf_option
def runbook_cmd(
    bootstrap: str | None,
    command_config: str | None,
    app_id: str | None,
    groups: tuple[str, ...],
    output_topics: tuple[str, ...],
    downstream_groups: tuple[str, ...],
    topology_file: str | None,
    topic: str,
    to: int,
    new_topic: str | None,
    strategy: str,
    group_timeout: int,
    lag_timeout: int,
    assign_timeout: int,
    commit_timeout: int,
    accept_loss_risk: tuple[str, ...],
    accept_split_history: bool,
    accept_lost_history: bool,
    state_dir: str | None,
    fixed_repartition: tuple[str, ...],
    framework: str,
    partitioner: PartitionerChoice,
    cutover_timeout: float,
    fmt: str,
    output: str | None,
    master: str | None,
    conf: tuple[str, ...],
) -> int:
    """Write the runbook for widening TOPIC: under a Streams app (--application-id), or
    keeping per-key order for plain consumer groups (--group, or every group reading it).

    Exit 0 when it is written; 1 when it is refused: --strategy in-place where keyed
    history would split (the keys are listed in the output), or a reprocess of sources
    that lost records (one line); 2 on bad input.
    """
    streams = app_id is not None
    _refuse_options(streams)
    connection = connection_of(bootstrap, command_config)
    tuning = MigrateTuning(partitioner, cutover_timeout)  # --strategy online's migrate step
    outcome: Outcome[Runbook | SplitRefusal]
    if app_id is None:
        outcome = run_groups_runbook(
            GroupsRunbookOptions(
                topic=topic,
                to=to,
                groups=groups,
                lag_timeout=lag_timeout,
                assign_timeout=assign_timeout,
                commit_timeout=commit_timeout,
                accept_loss_risk=accept_loss_risk,
                strategy=Strategy(strategy),
                tuning=tuning,
                connection=connection,
            )
        )
    else:
        outcome = run_runbook(
            RunbookOptions(
                connection=connection,
                spark=spark_of(master, conf),
                fixed_repartition=list(fixed_repartition),
                framework=framework,
                app_id=app_id,
                topology_file=topology_file,
                topic=topic,
                to=to,
                new_topic=new_topic,
                strategy=Strategy(strategy),
                group_timeout=group_timeout,
                lag_timeout=lag_timeout,
                accept_split_history=accept_split_history,
                accept_lost_history=accept_lost_history,
                state_dir=state_dir,
                output_topics=output_topics,
                downstream_groups=downstream_groups,
                groups=groups,
                tuning=tuning,
            )
        )
    return write_outcome(outcome, fmt, output)


def _refuse_options(streams: bool) -> None:
    """One line for the first option given that the other kind of runbook takes."""
    ctx = click.get_current_context()
    given = [p.name or "" for p in ctx.command.params]
    kinds: tuple[type, type] = (RunbookOptions, GroupsRunbookOptions)
    mine, other = kinds if streams else kinds[::-1]
    names = only_in(other, mine, given)
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
