"""``migcheck runbook``: the exact procedure to widen a topic under a Kafka Streams app
(``--application-id``) or for the plain consumer groups that read it in per-key order
(``--group``, or every group found reading it)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import click
from click.core import ParameterSource

from migcheck.cli.common import (
    PARTITION_COUNT,
    accept_lost_history_option,
    application_id_option,
    bootstrap_server_option,
    command_config_option,
    connection_of,
    cutover_timeout_option,
    fixed_repartition_option,
    format_option,
    framework_option,
    partitioner_option,
    spark_of,
    spark_options,
    topics_option,
    topologies_of,
    topology_option,
    writable_output,
    write_outcome,
)
from migcheck.commands.groups_runbook import GroupsRunbookOptions, run_groups_runbook
from migcheck.commands.outcome import Outcome
from migcheck.commands.runbook import RunbookOptions, run_apps_runbook, run_runbook
from migcheck.errors import UsageError
from migcheck.model.migrate import MigrateTuning
from migcheck.model.runbook import (
    ASSIGN_TIMEOUT,
    COMMIT_TIMEOUT,
    GROUP_TIMEOUT,
    LAG_TIMEOUT,
    Runbook,
    SplitRefusal,
    Strategy,
)


class Mode(Enum):
    """Which runbook a call writes: ``--application-id`` picks an app's, else the plain
    consumer groups'."""

    APP = "app"
    GROUPS = "groups"


_APP, _GROUPS, _BOTH = frozenset({Mode.APP}), frozenset({Mode.GROUPS}), frozenset(Mode)


@dataclass(frozen=True)
class Takes:
    """The runbooks that take an option, and those in which it goes only with --strategy
    online (where it reaches migrate, or moves at its barrier)."""

    modes: frozenset[Mode]
    online_in: frozenset[Mode] = frozenset()


_APP_ONLY = (
    "topology_files", "new_topic", "group_timeout", "accept_split_history", "accept_lost_history",
    "state_dir", "fixed_repartition", "framework", "master", "conf", "remote", "remote_config",
    "left",
)  # fmt: skip

#: The one declaration of which runbook takes each option that not every runbook takes.
#: An option given for another runbook, or without the strategy it goes with, is refused
#: in one line (:func:`_check_modes`), never ignored; the rest go to every runbook.
TAKES: Mapping[str, Takes] = {
    **dict.fromkeys(_APP_ONLY, Takes(_APP)),
    "accept_loss_risk": Takes(_GROUPS),
    **dict.fromkeys(("output_topics", "downstream_groups"), Takes(_APP, online_in=_APP)),
    "groups": Takes(_BOTH),  # an app's runbook moves them too, on every route
    **dict.fromkeys(("partitioner", "cutover_timeout"), Takes(_BOTH, online_in=_BOTH)),
}

#: Why an option is refused, by the runbook that takes it: each text written once.
_ELSEWHERE = {
    Mode.APP: "is for a stateful app's runbook: give --application-id (without --group)",
    Mode.GROUPS: "is for plain consumer groups, not with --application-id",
}
_ONLINE_ONLY = {
    Mode.APP: "goes with an app's --strategy online, where one barrier moves it all",
    Mode.GROUPS: "goes with --strategy online (migrate's step)",
}


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
@bootstrap_server_option(
    help="The Kafka cluster: read (read-only) to write the runbook; its script, run with "
    "--execute, changes it (alters or creates topics, copies, commits offsets)."
)
@command_config_option
@application_id_option(
    required=False,
    help="A Kafka Streams app's application.id, a ksqlDB query's, or a Quix Streams "
    "app's consumer group: its reprocess runbook.  Repeatable: every app of the topics "
    "moves in one procedure (each stops, the topics change once, each restarts; with "
    "--strategy online, at migrate's one barrier, each with --topology ID=FILE).",
    several=True,
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="A plain consumer group reading TOPIC in per-key order (repeatable); without it "
    "and --application-id, every group with committed offsets on TOPIC.  With an app's "
    "runbook it moves with the app: to the copy's end at a quiet point where the route "
    "copies, in order through the alter in place, or at migrate's barrier (online).",
)
@click.option(
    "--leave-group",
    "left",
    multiple=True,
    metavar="GROUP",
    help="A reader of TOPIC besides the app, left as it is on purpose (repeatable), for an "
    "app's runbook: any other reader is refused in one line, never stranded (with --strategy "
    "online, migrate's --leave-group).",
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
@topology_option(
    help="The text Topology#describe() prints; without it the topology is inferred "
    "(APP_ID=FILE for each of several --application-id).",
    several=True,
)
@topics_option(
    "The topic to widen; repeated, a set widened in one change (every side of a join), for "
    "an app's runbook."
)
@click.option(
    "--to", required=True, type=PARTITION_COUNT, metavar="N", help="Its new partition count."
)
@click.option(
    "--new-topic",
    "--into",
    "new_topic",
    multiple=True,
    metavar="TOPIC",
    help="The wider copy (default <topic>-p<N>); --into, as copy and migrate name it; "
    "repeated, each --topic's copy in order.  Given with --strategy move-state, the state "
    "moves onto the copies, which the producers switch to, and the topics are left as they "
    "were; without it, they are altered in place.",
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
    "the producers paused for seconds.  move-state (Kafka Streams key-value stores): "
    "moves the app's changelogs to the new count and restarts it as <app>-p<N>, "
    "reprocessing nothing; auto picks it where a source lost records, or where the "
    "sources hold at least 1 M records and 3x the changelogs'.",
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
    "--group in place: how long the script waits for every group to own the new partitions "
    "(their metadata.max.age.ms, 5 min by default, and a margin).",
)
@_seconds(
    "--commit-timeout",
    COMMIT_TIMEOUT,
    "--group in place: how long the script waits for a group's members to commit an offset on "
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
    help="The app's state directory on this host, to wipe: Kafka Streams' state.dir (of "
    "several apps, the one they share), or the framework's own (docs/runbooks.md).",
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
@spark_options
def runbook_cmd(**params: Any) -> int:
    """Write the runbook for widening TOPIC: under a stateful app (--application-id), or
    keeping per-key order for plain consumer groups (--group, or every group reading it).

    Exit 0 when it is written; 1 when it is refused: --strategy in-place where keyed
    history would split (the keys are listed in the output), or a reprocess of sources
    that lost records (one line); 2 on bad input.
    """
    apps = params["app_ids"]
    mode = Mode.APP if apps else Mode.GROUPS
    strategy = Strategy(params["strategy"])
    _check_modes(mode, strategy is Strategy.ONLINE)
    topic, *also = _topics(mode, params["topics"])
    files = _topologies(apps, params, strategy is Strategy.ONLINE) if apps else {}
    given = {
        "topic": topic,
        "connection": connection_of(params["bootstrap"], params["command_config"]),
        "strategy": strategy,
        "tuning": MigrateTuning(params["partitioner"], params["cutover_timeout"]),
    }
    outcome: Outcome[Runbook | SplitRefusal]
    if mode is Mode.GROUPS:
        outcome = run_groups_runbook(_options(GroupsRunbookOptions, params, given))
    else:
        spark = spark_of(
            params["master"], params["conf"], params["remote"], params["remote_config"]
        )
        repartition = list(params["fixed_repartition"])
        into = params["new_topic"]
        if into and len(into) != len(params["topics"]):
            raise UsageError(
                f"--into names each --topic's copy, in order: give one for each of the "
                f"{len(params['topics'])} topics, or none (each <topic>-p<N>)"
            )
        app = {**given, "also": tuple(also), "spark": spark, "fixed_repartition": repartition,
               "app_id": apps[0], "topology_file": files.get(apps[0]),
               "new_topic": into[0] if into else None, "also_into": tuple(into[1:])}  # fmt: skip
        options = _options(RunbookOptions, params, app)
        several = len(apps) > 1
        outcome = run_apps_runbook(options, apps, files) if several else run_runbook(options)
    return write_outcome(outcome, params["fmt"], params["output"])


def _topologies(apps: tuple[str, ...], params: Mapping[str, Any], online: bool) -> dict[str, str]:
    """Each app's --topology file, by its id (absolute: the script runs elsewhere).
    Several apps online each need their file: migrate reads each one's outputs from its
    sinks, taking no --output-topic then; offline, each app's is optional, as one app's."""
    repeated = [a for a in dict.fromkeys(apps) if apps.count(a) > 1]
    if repeated:
        raise UsageError(f"--application-id {repeated[0]!r} is given twice: name each app once")
    files = topologies_of(params["topology_files"], apps)
    unknown = sorted(set(files) - set(apps))
    if unknown:
        raise UsageError(f"--topology {unknown[0]}=FILE names no --application-id given")
    if len(apps) > 1 and online:
        if params["output_topics"]:
            raise UsageError(
                "--output-topic names one app's outputs: with several --application-id give "
                "each app's --topology APP_ID=FILE (its sinks are its outputs)"
            )
        missing = [a for a in apps if a not in files]
        if missing:
            raise UsageError(
                f"--topology {missing[0]}=FILE is missing: with several --application-id "
                "migrate reads each app's outputs from its topology's sinks"
            )
    return {a: os.path.abspath(f) for a, f in files.items()}


def _topics(mode: Mode, topics: Sequence[str]) -> list[str]:
    """The change's topics, each once; a set only for an app's runbook."""
    repeated = [t for t in dict.fromkeys(topics) if topics.count(t) > 1]
    if repeated:
        raise UsageError(f"--topic {repeated[0]!r} is given twice: name each topic once")
    if mode is Mode.GROUPS and len(topics) > 1:
        raise UsageError(
            "the plain consumer groups' runbook widens one topic: pass one --topic, or "
            "--application-id for an app's runbook of several"
        )
    return list(topics)


def _options(cls: type[Any], params: Mapping[str, Any], given: Mapping[str, Any]) -> Any:
    """``cls`` (an options dataclass) from the parameters named as its fields, and
    ``given``, the fields the CLI builds (the connection, Spark, the strategy)."""
    names = {f.name for f in dataclasses.fields(cls)} - set(given)
    return cls(**{n: params[n] for n in names if n in params}, **given)


def _check_modes(mode: Mode, online: bool) -> None:
    """One line for the first option given that this runbook does not take (:data:`TAKES`),
    or that goes only with --strategy online."""
    ctx = click.get_current_context()
    for param in ctx.command.params:
        name = param.name or ""
        takes = TAKES.get(name)
        source = ctx.get_parameter_source(name)
        if takes is None or source in (None, ParameterSource.DEFAULT, ParameterSource.ENVIRONMENT):
            continue  # a setting of the environment (MIGCHECK_REMOTE) is not an option given
        if mode not in takes.modes:
            (other,) = takes.modes
            raise UsageError(f"{param.opts[0]} {_ELSEWHERE[other]}")
        if mode in takes.online_in and not online:
            raise UsageError(f"{param.opts[0]} {_ONLINE_ONLY[mode]}")
