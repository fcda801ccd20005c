"""``migcheck gate``: the approval check where partition changes are proposed."""

from __future__ import annotations

import click

from migcheck.cli.common import (
    bootstrap_option,
    command_config_option,
    connection_of,
    full_option,
    id_file_pairs,
    output_option,
    plain_groups_option,
    report_format_option,
    sample_option,
    spark_of,
    spark_options,
    write_outcome,
)
from migcheck.commands.gate import GateOptions, run_gate


def _files(name: str, help: str):
    """A repeatable input file (or directory, for manifests)."""
    return click.option(name, multiple=True, metavar="PATH", help=help)


@click.command("gate")
@bootstrap_option
@command_config_option
@_files("--terraform-plan", "terraform (or tofu) show -json output (repeatable).")
@_files(
    "--manifests", "Strimzi KafkaTopic or Conduktor Topic YAML: files or directories (repeatable)."
)
@_files("--kafka-gitops-plan", "A kafka-gitops plan JSON (repeatable).")
@click.option(
    "--change", "changes", multiple=True, metavar="TOPIC=N", help="A plain proposal (repeatable)."
)
@plain_groups_option
@click.option(
    "--topology",
    "topologies",
    multiple=True,
    metavar="APP_ID=FILE",
    help="A Kafka Streams app's Topology#describe() (repeatable): settles state that its "
    "topics cannot show (an app without internal topics).",
)
@click.option(
    "--accept",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="YAML acceptances: a change accepted on purpose, each with a reason.",
)
@click.option(
    "--max-moved-fraction",
    type=click.FloatRange(0, 1),
    default=None,
    metavar="X",
    help="Block a change whose readers are safe when more than this share of keys moves.",
)
@full_option
@sample_option
@report_format_option
@output_option
@spark_options
def gate_cmd(
    bootstrap: str | None,
    command_config: str | None,
    terraform_plan: tuple[str, ...],
    manifests: tuple[str, ...],
    kafka_gitops_plan: tuple[str, ...],
    changes: tuple[str, ...],
    groups: tuple[str, ...],
    topologies: tuple[str, ...],
    accept: str | None,
    max_moved_fraction: float | None,
    full: bool,
    sample_per_partition: int,
    fmt: str,
    output: str | None,
    master: str | None,
    conf: tuple[str, ...],
    remote: str | None,
    remote_config: str | None,
) -> int:
    """Judge every proposed partition change against the live cluster and every reader
    of the topic: DATA_LOSS, CRASH, CORRUPT, STALL, LOSS_RISK, UNKNOWN, ORDER, REFUSED,
    MOVES or SAFE, each reason with its rule code.  --format markdown is the PR comment.

    Exit 0 when every change is SAFE, a MOVES that does not block, or accepted; 1 when
    any other remains; 2 for bad input; 3 when a placement cannot be predicted.
    """
    options = GateOptions(
        terraform_plans=terraform_plan,
        manifests=manifests,
        gitops_plans=kafka_gitops_plan,
        changes=changes,
        groups=groups,
        topologies=id_file_pairs(topologies, "--topology"),
        accept=accept,
        max_moved_fraction=max_moved_fraction,
        full=full,
        sample_per_partition=sample_per_partition,
        connection=connection_of(bootstrap, command_config),
        spark=spark_of(master, conf, remote, remote_config),
    )
    return write_outcome(run_gate(options), fmt, output)
