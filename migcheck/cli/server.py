"""``migcheck server start|status|stop``: the Spark Connect server on this machine
(see :mod:`migcheck.commands.server`)."""

from __future__ import annotations

import click

from migcheck.cli.common import parse_conf
from migcheck.commands.outcome import Outcome
from migcheck.commands.server import (
    DEFAULT_PORT,
    run_server_start,
    run_server_status,
    run_server_stop,
)
from migcheck.model.server import ConnectServer
from migcheck.report.registry import OUTPUTS


def _write(outcome: Outcome[ConnectServer]) -> int:
    click.echo(OUTPUTS["server"].formats["text"](outcome.report), nl=False)
    return outcome.exit_code


@click.group("server")
def server_cmd() -> None:
    """A Spark Connect server on this machine, for checks given --remote: they start no JVM
    of their own and reuse its warm Python workers.  Only these commands start and stop it."""


@server_cmd.command("start")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True,
              help="The port it listens on (this machine's loopback alone).")  # fmt: skip
@click.option("--master", default="local[*]", show_default=True,
              help="The Spark master it runs on (a cluster's: migcheck ships to it).")  # fmt: skip
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE",
              help="Spark setting of the server (repeatable).")  # fmt: skip
def start_cmd(port: int, master: str, conf: tuple[str, ...]) -> int:
    """Start the server, and wait until it takes checks; it runs until `server stop`."""
    return _write(run_server_start(port, master, parse_conf(conf)))


@server_cmd.command("status")
def status_cmd() -> int:
    """Where the server runs (exit 1: none does)."""
    return _write(run_server_status())


@server_cmd.command("stop")
def stop_cmd() -> int:
    """Stop the server and its Python workers."""
    return _write(run_server_stop())
