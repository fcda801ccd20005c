"""``migcheck migrate``: widen a live topic online, with the operator at the manual steps."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import click

from migcheck.cli.common import (
    accept_lost_history_option,
    bootstrap_server_option,
    command_config_option,
    command_output,
    connection_of,
    cutover_timeout_option,
    partitioner_option,
    spark_of,
    spark_options,
    topics_option,
    topologies_of,
    topology_option,
)
from migcheck.commands.migrate import MigrateOptions, Operator, run_migrate
from migcheck.model.migrate import ShadowState
from migcheck.model.partitioner import PartitionerChoice
from migcheck.online.control import USAGE, Desk, serving
from migcheck.untrusted import visible


@click.command("migrate")
@bootstrap_server_option(
    help="The Kafka cluster: migrate creates the new topic there, copies into it and "
    "commits the moved groups' offsets (it changes the cluster)."
)
@command_config_option
@topics_option(
    "The topic to widen (repeatable: a set, such as every side of a join, each widened to "
    "--to and cut over at one barrier)."
)
@click.option("--to", "to", required=True, type=int, metavar="N", help="The new partition count.")
@click.option(
    "--into",
    default=None,
    metavar="TOPIC",
    help="The new topic (default: TOPIC-pN; a set's are each TOPIC-pN).",
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="A plain consumer group of the topic, moved to the new topic at the barrier "
    "(repeatable; default: every group found reading it; a stateful app's group is refused).",
)
@click.option(
    "--leave-group",
    "left",
    multiple=True,
    metavar="GROUP",
    help="A reader of the topic left on it on purpose (repeatable): the reverse copy keeps "
    "the topic current for it until the migration completes.  Any reader neither moved nor "
    "left is refused at the start, never waited on.",
)
@click.option(
    "--checkpoint",
    required=True,
    type=click.Path(dir_okay=False),
    help="The copy's checkpoint: a stopped migration resumes from it (a set's copies keep "
    "theirs beside it, one per topic).",
)
@click.option(
    "--application-id",
    "app_ids",
    multiple=True,
    metavar="ID",
    help="A Kafka Streams app of the topic (repeatable: every app moves at the one "
    "barrier): a shadow of it rebuilds its state on the new topic before the switch, and "
    "serves after it.",
)
@click.option(
    "--shadow-application-id",
    default=None,
    metavar="ID",
    help="The shadow's application.id, of one --application-id (default: ID-pN).",
)
@click.option(
    "--output-topic",
    "outputs",
    multiple=True,
    metavar="TOPIC",
    help="An output topic of the app (repeatable; --output-topic '' when it writes none); the "
    "shadow writes TOPIC-pN instead.",
)
@topology_option(
    help="An app's Topology#describe() text: its sinks are its outputs (repeatable: "
    "APP_ID=FILE for each of several apps; FILE alone for one).",
    several=True,
)
@click.option(
    "--downstream-group",
    "downstream",
    multiple=True,
    metavar="GROUP",
    help="A group reading the app's outputs, moved to the shadow's at the barrier (repeatable).",
)
@click.option(
    "--max-shadow-lag",
    type=int,
    default=10_000,
    show_default=True,
    help="The shadow's lag (records, repartition topics included, by its commits) under "
    "which the cut-over is offered: above the producers' rate times its commit interval.",
)
@click.option(
    "--shadow-state",
    "shadow_state",
    type=click.Choice([s.value for s in ShadowState]),
    default=ShadowState.AUTO.value,
    show_default=True,
    help="Where the shadow's state comes from: rebuild (it reads the new topic from the "
    "start before the cut-over), move (the old app's changelogs moved into its own after "
    "the switch, where it starts from the barrier: a source trimmed by retention loses "
    "nothing; Kafka Streams key-value stores), or auto (move where every store can move "
    "and a source lost records, or the sources hold at least 1 M records and 3x the "
    "changelogs'; else rebuild).",
)
@partitioner_option
@click.option(
    "--max-lag-records",
    type=int,
    default=10_000,
    show_default=True,
    help="The copy's lag in records under which the cut-over is offered (with --max-lag).",
)
@click.option(
    "--max-lag",
    "max_lag_s",
    type=float,
    default=2.0,
    show_default=True,
    metavar="SECONDS",
    help="The copy's lag in seconds under which the cut-over is offered (gh-ost's "
    "--max-lag-millis, 1.5 s).",
)
@cutover_timeout_option
@accept_lost_history_option
@click.option(
    "--yes",
    is_flag=True,
    help="Answer y at every manual step up to the switch; a reverted cut-over then ends "
    "the run.  It never completes nor answers a deletion: the rollback window waits for "
    "your answer on stdin, or for --complete-after.",
)
@click.option(
    "--postpone-cut-over-flag-file",
    "postpone_flag",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="PATH",
    help="While this file exists the run waits at ready, the copy and the shadow kept "
    "current, and offers no cut-over; remove it to go on (gh-ost's flag of that name).",
)
@click.option(
    "--hooks-dir",
    "hooks_dir",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="Run DIR/on-<phase> (on-barrier, on-switch, on-move-readers...) as each phase "
    "starts, told the migration in MIGCHECK_* variables: automation pauses and switches "
    "the producers there.  A failing on-barrier reverts the cut-over; one failing earlier "
    "stops the run; after the switch, a failure is reported and the run goes on.",
)
@click.option(
    "--control-socket",
    "control_socket",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="PATH",
    help="Also take commands on this Unix socket (owner-only; each logged): status, "
    "answer WORD, postpone, unpostpone.  Either it or stdin answers a prompt, the run "
    "goes on once stdin closes, and it ignores SIGHUP: it survives its terminal.",
)
@click.option(
    "--complete-after",
    "complete_after",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="The rollback window's length: complete this long after the switch, without "
    "asking, then list what is left to remove (default: ask on stdin).",
)
@spark_options
def migrate_cmd(
    bootstrap: str | None,
    command_config: str | None,
    topics: tuple[str, ...],
    to: int,
    into: str | None,
    groups: tuple[str, ...],
    left: tuple[str, ...],
    checkpoint: str,
    app_ids: tuple[str, ...],
    shadow_application_id: str | None,
    outputs: tuple[str, ...],
    topology_files: tuple[str, ...],
    downstream: tuple[str, ...],
    max_shadow_lag: int,
    shadow_state: str,
    partitioner: PartitionerChoice,
    max_lag_records: int,
    max_lag_s: float,
    cutover_timeout: float,
    accept_lost_history: bool,
    yes: bool,
    complete_after: float | None,
    postpone_flag: str | None,
    hooks_dir: str | None,
    control_socket: str | None,
    master: str | None,
    conf: tuple[str, ...],
    remote: str | None,
    remote_config: str | None,
) -> int:
    """Widen --topic online (or a set of topics, --topic repeated): copy and follow each
    into a new topic while its readers go on, and rebuild an --application-id's state in
    a shadow of it there; cut the producers over at one barrier, then move each --group
    there and each --downstream-group to the shadow's outputs.

    Then a reverse copy keeps the old topic (and the old app on it) current until the
    operator completes (y) or rolls back (rollback): the same cut-over the other way.

    Every manual step prints one MANUAL: line and waits for y on stdin (or through
    --control-socket).  Exit 0 once it
    completed or rolled back, 1 when it stopped at a step or a check failed, or an
    app's shadow would rebuild from sources that lost records, 2 on bad input.  Run it
    again with the same --checkpoint after a stop: before the cut-over the copy resumes;
    after it, the run resumes at the recorded barrier.
    """
    options = MigrateOptions(
        connection=connection_of(bootstrap, command_config),
        spark=spark_of(master, conf, remote, remote_config),
        topics=topics,
        to=to,
        into=into,
        groups=groups,
        left=left,
        checkpoint=checkpoint,
        partitioner=partitioner,
        max_lag_records=max_lag_records,
        max_lag_s=max_lag_s,
        cutover_timeout_s=cutover_timeout,
        yes=yes,
        application_ids=app_ids,
        shadow_application_id=shadow_application_id,
        outputs=outputs,
        topologies=topologies_of(topology_files, app_ids),
        downstream_groups=downstream,
        max_shadow_lag=max_shadow_lag,
        shadow_state=ShadowState(shadow_state),
        accept_lost_history=accept_lost_history,
        complete_after_s=complete_after,
        hooks_dir=hooks_dir,
    )

    with operated(yes, sys.stdin, postpone_flag, control_socket) as operator:
        outcome = run_migrate(options, operator)
    click.echo(command_output().formats["text"](outcome.report), nl=False)
    return outcome.exit_code


def say(line: str) -> None:
    """A line of the run's progress on its output (names escaped)."""
    click.echo(visible(line))


@contextlib.contextmanager
def operated(
    yes: bool, stdin: TextIO, postpone_flag: str | None, control_socket: str | None
) -> Iterator[Operator]:
    """The operator for the command's length: at this terminal, or also at the control
    socket (--control-socket), whose thread and file end with the block.  With a socket
    the run ignores SIGHUP meanwhile: it outlives its terminal, answered from anywhere."""
    if control_socket is None:
        yield operator_of(yes, stdin, postpone_flag)
        return
    desk = Desk(flagged(postpone_flag), released(postpone_flag))
    with serving(control_socket, desk, _fd(stdin), say), _hangup_ignored():
        say(f"control: listening on {control_socket} ({USAGE})")
        yield operator_of(yes, stdin, postpone_flag, desk)


def operator_of(
    yes: bool, stdin: TextIO, postpone_flag: str | None = None, desk: Desk | None = None
) -> Operator:
    """The operator at this terminal: each MANUAL line printed, its answer read from
    ``stdin`` (or, with a control ``desk``, from stdin or the socket, whichever answers
    first); with ``yes``, every step up to the switch answered y, but never a decision
    that gives up the way back (completion, the old side's removal).  While
    ``postpone_flag`` names a file that exists (or the socket says postpone), they hold
    the cut-over back."""

    def decide(line: str) -> str:
        click.echo(f"MANUAL: {visible(line)}")
        return desk.prompt(line) if desk else stdin.readline().strip()

    def choose(line: str) -> str:
        if not yes:
            return decide(line)
        click.echo(f"MANUAL: {visible(line)}")
        return "y"

    if desk is None:
        return Operator(
            lambda line: choose(line) == "y", choose, decide, say, flagged(postpone_flag)
        )
    return Operator(
        lambda line: choose(line) == "y", choose, decide, say, desk.postponed, desk.entered
    )


def flagged(postpone_flag: str | None) -> Callable[[], bool]:
    """Whether --postpone-cut-over-flag-file's file exists (never, without one)."""
    return lambda: postpone_flag is not None and Path(postpone_flag).exists()


def released(postpone_flag: str | None) -> Callable[[], None]:
    """``unpostpone``: the flag file removed, as gh-ost's unpostpone removes its own."""

    def release() -> None:
        if postpone_flag is not None:
            Path(postpone_flag).unlink(missing_ok=True)

    return release


def _fd(stdin: TextIO) -> int | None:
    """stdin's file descriptor, which the control's thread watches; None when it has none
    (an in-memory stream): the socket alone answers then."""
    try:
        return stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def _hangup_ignored() -> Iterator[None]:
    """SIGHUP ignored in this process while the block runs, the previous handler put
    back after: the terminal closing does not end a run the socket answers.  Only the
    main thread may set a handler; elsewhere (a test's thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_DFL if previous is None else previous)
