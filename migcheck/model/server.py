"""``migcheck server``'s result: where the Spark Connect server of this machine runs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ServerState(StrEnum):
    """What a ``server`` command found or did."""

    STARTED = "started"  # this command started it
    RUNNING = "running"  # it was running already (start and status)
    STOPPED = "stopped"  # this command stopped it
    NONE = "none"  # no server of migcheck's runs here


@dataclass(frozen=True)
class ConnectServer:
    """The Spark Connect server ``migcheck server start`` runs on this machine: its
    address (``--remote`` reaches it), its process, its master and its log."""

    state: ServerState
    url: str | None = None
    pid: int | None = None
    master: str | None = None
    log: str | None = None
    seconds: float = 0.0  # how long the command took to start or stop it
