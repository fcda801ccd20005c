"""``migcheck partition``: where does a key go, now and under a proposed count?"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from migcheck.cli.common import (
    PARTITION_COUNT,
    command_output,
    format_option,
    partitioner_choices,
    partitioner_member,
)
from migcheck.commands.partition import run_partition
from migcheck.errors import UsageError
from migcheck.hashing.keys import KEY_ENCODINGS, KEY_TYPES
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.topics import check_can_grow


def _read_keys(args: Sequence[str]) -> list[str]:
    """Key arguments, where ``-`` stands for stdin, one key per line."""
    keys: list[str] = []
    for arg in args:
        if arg == "-":
            keys.extend(line.rstrip("\r\n") for line in sys.stdin)
        else:
            keys.append(arg)
    return keys


@click.command("partition")
@click.option(
    "--partitions",
    "partitions",
    type=PARTITION_COUNT,
    required=True,
    help="The topic's current partition count.",
)
@click.option(
    "--to",
    "to",
    type=PARTITION_COUNT,
    default=None,
    help="A proposed partition count: also show where each key goes and if it moves.",
)
@click.option(
    "--partitioner",
    type=partitioner_choices(auto=False),
    default=PartitionerChoice.MURMUR2.value,
    show_default=True,
    callback=partitioner_member,
    help="The producing client's partitioner.",
)
@click.option(
    "--key-encoding",
    type=click.Choice(KEY_ENCODINGS),
    default="utf8",
    show_default=True,
    help="How raw (--key-type bytes) keys are written.",
)
@click.option(
    "--key-type",
    type=click.Choice(KEY_TYPES),
    default="bytes",
    show_default=True,
    help="Parse each key as this Java type and serialize it as Kafka's serializer does.",
)
@format_option(("text", "json"), "text for a terminal, json for machines.")
@click.argument("keys", nargs=-1, required=True)
def partition_cmd(
    partitions: int,
    to: int | None,
    partitioner: PartitionerChoice,
    key_encoding: str,
    key_type: str,
    fmt: str,
    keys: tuple[str, ...],
) -> None:
    """Print the partition of each KEY (a KEY of '-' reads keys from stdin, one per line)."""
    if to is not None:
        check_can_grow(partitions, [to])
    if key_type != "bytes" and key_encoding != "utf8":
        raise UsageError("--key-encoding applies to --key-type bytes only")
    texts = _read_keys(keys)
    outcome = run_partition(texts, partitions, to, partitioner, key_type, key_encoding)
    click.echo(command_output().formats[fmt](outcome.report), nl=False)
