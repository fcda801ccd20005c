"""The command group and the entry point that turns every user error into one line.

Option names follow Kafka's own tools (``--bootstrap-server``,
``--command-config``, ``--partitions``).  Bad input never shows a traceback:
:func:`main` turns every :class:`~migcheck.errors.MigcheckError` and Click
usage error into one line on stderr and exit code 2, the way an operator tool
should fail in a script or CI gate.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from migcheck import __version__
from migcheck.cli.analyze import analyze_cmd
from migcheck.cli.app import app_cmd
from migcheck.cli.copytopic import copy_cmd
from migcheck.cli.partition import partition_cmd
from migcheck.cli.plan import plan_cmd
from migcheck.cli.render import render_cmd
from migcheck.cli.runbook import runbook_cmd
from migcheck.errors import EXIT_OK, EXIT_USAGE, MigcheckError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migcheck")
@click.option(
    "--verbose", is_flag=True, help="Show Spark's own output (else in its log file, in $TMPDIR)."
)
def cli(verbose: bool) -> None:
    """Check what a Kafka partition-count change does to keyed data and Streams state."""
    if verbose:
        os.environ["MIGCHECK_VERBOSE"] = "1"


cli.add_command(partition_cmd)
cli.add_command(analyze_cmd)
cli.add_command(render_cmd)
cli.add_command(app_cmd)
cli.add_command(plan_cmd)
cli.add_command(runbook_cmd)
cli.add_command(copy_cmd)


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"migcheck: error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning every user error into one stderr line and exit 2."""
    try:
        rv = cli.main(args=argv, prog_name="migcheck", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("migcheck: aborted", err=True)
        sys.exit(130)
    except MigcheckError as e:
        _fail(str(e), e.exit_code)
    except click.ClickException as e:
        _fail(e.format_message(), EXIT_USAGE if e.exit_code in (1, 2) else e.exit_code)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
