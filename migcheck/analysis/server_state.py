"""The state file of the Spark Connect server this machine runs (:mod:`connect_server`),
read by the commands that start and stop it and by a check that reaches it.

A module of its own: a check (:mod:`remote`) reads the token here without importing
what starts a server.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from migcheck.files import cache_root

#: Spark's own class for a standalone Spark Connect server (``start-connect-server.sh``).
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: The address it binds: this machine alone.
LOOPBACK = "127.0.0.1"
#: The host a check names it by: pyspark sends a token without TLS only to ``localhost``.
LOCAL_HOST = "localhost"


def state_path() -> Path:
    """The running server's state: its address, process, master, log and token."""
    return cache_root() / "connect" / "server.json"


def log_path() -> Path:
    return cache_root() / "connect" / "server.log"


def read_state() -> dict[str, Any] | None:
    """The state file of a server that is still running; a stale one is removed."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        state = json.loads(state_path().read_text())
        if alive(int(state["pid"])):
            return dict(state)
        state_path().unlink()
    return None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs a Spark Connect server (not a process that reused the pid)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return SERVER_CLASS.encode() in command


def local_token(host: str, port: int) -> str | None:
    """The token of the server this machine runs at ``port``, for a check that names it by
    ``host``; None for any other server."""
    state = read_state()
    if state is None or host not in (LOCAL_HOST, LOOPBACK) or int(state["port"]) != port:
        return None
    return str(state["token"])
