"""The command group and the entry point that turns every user error into one line.

Option names follow Kafka's own tools (``--bootstrap-server``,
``--command-config``, ``--partitions``).  Bad input never shows a traceback:
:func:`main` turns every :class:`~migcheck.errors.MigcheckError` and Click
usage error into one line on stderr and exit code 2, the way an operator tool
should fail in a script or CI gate.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from migcheck.errors import EXIT_OK, EXIT_USAGE, MigcheckError, NothingChanges, Refused
from migcheck.untrusted import visible
from migcheck.version import __version__

#: Each command and where it lives, in the order ``--help`` lists them.
COMMANDS = {
    "partition": "migcheck.cli.partition:partition_cmd",
    "analyze": "migcheck.cli.analyze:analyze_cmd",
    "render": "migcheck.cli.render:render_cmd",
    "app": "migcheck.cli.app:app_cmd",
    "plan": "migcheck.cli.plan:plan_cmd",
    "runbook": "migcheck.cli.runbook:runbook_cmd",
    "copy": "migcheck.cli.copy:copy_cmd",
    "migrate": "migcheck.cli.migrate:migrate_cmd",
    "readers": "migcheck.cli.readers:readers_cmd",
    "gate": "migcheck.cli.gate:gate_cmd",
    "warm": "migcheck.cli.warm:warm_cmd",
    "server": "migcheck.cli.server:server_cmd",
}


VERBOSE_HELP = "Show Spark's own output (else in its log file, in $TMPDIR)."


def _be_verbose(ctx: click.Context, param: click.Parameter, verbose: bool) -> None:
    """``--verbose``, wherever it is given: Spark's output and the libraries' warnings."""
    if verbose:
        os.environ["MIGCHECK_VERBOSE"] = "1"
        logging.basicConfig(level=logging.WARNING, force=True)  # the libraries' warnings too


def _global_options() -> list[click.Option]:
    """The group's options, for each command too: ``migcheck analyze --verbose`` works as
    ``migcheck --verbose analyze`` does (a user adds a flag at the end of the line)."""
    return [
        click.Option(
            ["--verbose"], is_flag=True, expose_value=False, callback=_be_verbose,
            help=VERBOSE_HELP,
        )
    ]  # fmt: skip


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs.

    ``migcheck partition`` answers in a fraction of a second only if it does not
    first import Spark's, Arrow's and the report renderers' modules for the
    commands it is not running.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name].split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        names = {name for p in command.params for name in p.opts}
        command.params += [o for o in _global_options() if not names & set(o.opts)]
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            refuse_repeated(command, rest)
        return name, command, rest


def refuse_repeated(command: click.Command, args: Sequence[str]) -> None:
    """One line for an option that takes one value given more than once: Click keeps the
    last alone, so ``runbook --topic A --topic B`` would silently write B's runbook
    alone (issue 71).  Options that take many are declared ``multiple``."""
    single = {
        opt: param
        for param in command.params
        if isinstance(param, click.Option) and not (param.multiple or param.is_flag or param.count)
        for opt in param.opts
    }
    given: dict[str, list[str]] = {}
    for arg in args:
        if arg == "--":
            break
        param = single.get(arg.split("=", 1)[0])
        if param is not None:
            given.setdefault(param.opts[0], []).append(arg)
    for opt, times in given.items():
        if len(times) > 1:
            raise click.UsageError(
                f"{opt} is given {len(times)} times, but migcheck {command.name} takes one: "
                "it would act on the last alone"
            )


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    params=_global_options(),
)
@click.version_option(__version__, prog_name="migcheck")
def cli() -> None:
    """Check what a Kafka partition-count change does to keyed data and Streams state."""


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"migcheck: error: {visible(' '.join(message.split()))}", err=True)
    sys.exit(code)


def _silence_stderr() -> None:
    """After the one line, nothing more: Spark's Python threads (its accumulator server)
    print tracebacks of their own when its JVM is gone."""
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)


def _interrupted(error: BaseException) -> bool:
    """Whether Ctrl-C is behind ``error``: a KeyboardInterrupt in the middle of a py4j
    call leaves its connection half-read, so pyspark's clean-up call fails next, and
    that failure (wrapped as a Spark error) is what reaches us, with the interrupt as
    its context."""
    stack: list[BaseException | None] = [error]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        stack += [e.__cause__, e.__context__]
    return False


def _aborted() -> NoReturn:
    click.echo("migcheck: aborted", err=True)
    _silence_stderr()
    if "pyspark" in sys.modules:  # Ctrl-C during a Spark job: end Spark with us
        from migcheck.analysis.spark import stop_now

        stop_now()
    sys.exit(130)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning every user error into one stderr line and exit 2
    (3 when it cannot predict: :class:`~migcheck.errors.UnpredictableError`)."""
    # The libraries log to Python's logging (py4j's tracebacks, kafka-python's retries);
    # without a handler Python would print them.  The user gets migcheck's own lines.
    logging.getLogger().addHandler(logging.NullHandler())
    if not (sys.argv[1:] if argv is None else argv):
        # Click's own answer to no command is a usage error (exit 2) that carries the
        # help as its message, which _fail would squash into one line.
        click.echo(cli.get_help(click.Context(cli, info_name="migcheck")))
        sys.exit(EXIT_OK)
    try:
        rv = cli.main(args=argv, prog_name="migcheck", standalone_mode=False)
    except click.exceptions.Abort:
        _aborted()
    except MigcheckError as e:
        if _interrupted(e):
            _aborted()
        if isinstance(e, NothingChanges | Refused):  # a plain statement, not an error
            click.echo(f"migcheck: {visible(' '.join(str(e).split()))}", err=True)
            sys.exit(e.exit_code)
        _fail(str(e), e.exit_code)
    except click.ClickException as e:
        _fail(e.format_message(), EXIT_USAGE if e.exit_code in (1, 2) else e.exit_code)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
