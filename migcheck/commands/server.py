"""``migcheck server``: the Spark Connect server checks reach with ``--remote``, started and
stopped only here (:mod:`migcheck.analysis.connect_server` says why it exists)."""

from __future__ import annotations

from collections.abc import Mapping

from migcheck.analysis import connect_server
from migcheck.analysis.remote import DEFAULT_PORT
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_GATE, EXIT_OK
from migcheck.model.server import ConnectServer, ServerState

__all__ = ["DEFAULT_PORT", "run_server_start", "run_server_status", "run_server_stop"]


def run_server_start(port: int, master: str, conf: Mapping[str, str]) -> Outcome[ConnectServer]:
    """Start the server (one already running on ``port`` is reported as running)."""
    return Outcome(connect_server.start(port, master, conf), EXIT_OK)


def run_server_status() -> Outcome[ConnectServer]:
    """Where the server runs; exit 1 when none does, so that a script can ask."""
    found = connect_server.status()
    return Outcome(found, EXIT_GATE if found.state is ServerState.NONE else EXIT_OK)


def run_server_stop() -> Outcome[ConnectServer]:
    """Stop the server and its workers; none running is not an error."""
    return Outcome(connect_server.stop(), EXIT_OK)
