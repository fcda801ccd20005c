"""``migcheck warm``: the warm-up step after an install (see :mod:`migcheck.commands.warm`)."""

from __future__ import annotations

import click

from migcheck.cli.common import command_output
from migcheck.commands.warm import run_warm
from migcheck.untrusted import visible


def _say(step: str) -> None:
    click.echo(f"migcheck warm: {visible(step)}", err=True)


@click.command("warm")
def warm_cmd() -> None:
    """Build Spark's class archive and compile the hash kernels now, once per install,
    so that no later check builds them in front of you (a first check is otherwise
    seconds slower; every check is correct either way)."""
    outcome = run_warm(_say)
    click.echo(command_output().formats["text"](outcome.report), nl=False)
