"""``migcheck copy``: a topic's records into a wider topic, placed as its producers would."""

from __future__ import annotations

import click

from migcheck.cli.common import (
    bootstrap_server_option,
    command_config_option,
    command_output,
    connection_of,
    format_option,
    partitioner_option,
    spark_of,
    spark_options,
)
from migcheck.cli.progress import CopyProgress
from migcheck.commands.copy import CopyOptions, run_copy
from migcheck.model.copy import CopyLag
from migcheck.model.partitioner import PartitionerChoice
from migcheck.report.copy import LAG_FORMATS


@click.command("copy")
@bootstrap_server_option(
    help="The Kafka cluster: copy reads --topic there and writes the records into "
    "--into, in transactions (it changes the cluster; the other commands only read)."
)
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
@click.option(
    "--follow",
    is_flag=True,
    help="After the history, keep copying what the source's producers commit, until "
    "SIGTERM or SIGINT (then the round in flight commits, the copy is verified, exit 0 "
    "when it holds).  Needs --checkpoint; a re-run resumes from it.",
)
@click.option(
    "--check-placement",
    is_flag=True,
    help="With --partitioner: first check that it placed every keyed record of --topic "
    "under its count (since the checkpoint, if any), and refuse the copy in one line "
    "where it did not; the check's read is held for the copy, not read again.  A "
    "runbook's state move runs it with the partitioner it proved when it was written.",
)
@click.option(
    "--latest-per-key",
    is_flag=True,
    help="Copy only each key's latest record (the last by offset), and none of a key "
    "whose latest is a tombstone: a key-value store's changelog, whose restore keeps no "
    "more.  Refuses a record with a null key, and --follow; the check then compares the "
    "destination with those records.",
)
@click.option(
    "--reporting-interval",
    type=int,
    default=5000,
    show_default=True,
    metavar="MS",
    help="With --follow: print the lag (records, and seconds behind) every MS milliseconds.",
)
@format_option(
    ("text", "json"),
    "text for a terminal (with a progress bar on an interactive stderr), json for machines "
    "(docs/report-schema.md: the copy summary).",
)
@spark_options
def copy_cmd(
    bootstrap: str | None,
    command_config: str | None,
    topic: str,
    into: str,
    partitioner: PartitionerChoice,
    checkpoint: str | None,
    follow: bool,
    check_placement: bool,
    latest_per_key: bool,
    reporting_interval: int,
    fmt: str,
    master: str | None,
    conf: tuple[str, ...],
    remote: str | None,
    remote_config: str | None,
) -> int:
    """Copy every committed record of --topic into --into, each key on its new partition.

    Exactly once, also across a killed run (with --checkpoint), in order per key,
    with timestamps and headers.  With --follow it then keeps copying what arrives,
    printing its lag, until stopped.  Exit 0 when the copy verifies, 1 when it does not, 3
    when the producers' partitioner cannot be told (force it with --partitioner),
    2 on bad input (a non-empty --into without a checkpoint is refused).
    """
    options = CopyOptions(
        connection=connection_of(bootstrap, command_config),
        spark=spark_of(master, conf, remote, remote_config),
        topic=topic,
        into=into,
        partitioner=partitioner,
        checkpoint=checkpoint,
        follow=follow,
        check_placement=check_placement,
        latest_per_key=latest_per_key,
        reporting_interval_ms=reporting_interval,
    )

    def on_lag(lag: CopyLag) -> None:
        click.echo(LAG_FORMATS[fmt](lag), nl=False)

    progress = CopyProgress if fmt == "text" and not follow else None
    outcome = run_copy(options, progress, on_lag)
    click.echo(command_output().formats[fmt](outcome.report), nl=False)
    return outcome.exit_code
