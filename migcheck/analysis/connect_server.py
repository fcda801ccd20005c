"""A Spark Connect server on this machine, started, found and stopped by explicit commands
(``migcheck server start|status|stop``), never by a check.

Why one: every check on ``--master`` starts a Spark application, a JVM and Python
workers, and that start costs more than a small check's work.  A server keeps one
application running; checks given ``--remote`` reach it and start no JVM.  It is
the long-lived counterpart of ``migcheck warm``: warm saves what a check's JVM loads so
that each start is shorter; the server removes the start (docs/cluster.md).

What it decides:

- **It listens on this machine alone, behind a token.**  A Spark Connect server runs
  whatever Python a client sends it as the user who started it.  So it binds the
  loopback address, and requires a random token (``SPARK_CONNECT_AUTHENTICATE_TOKEN``,
  passed in its environment, never on a command line) that only this user can read, in
  the server's state file; a check that reaches it through ``localhost`` takes the token
  from there (:func:`local_token`).
- **Its workers run this Python**, which has migcheck: on a local master nothing is
  shipped.  On a cluster's master the server ships migcheck's archive once, as a check
  on that master would (:mod:`shipping`), for every session it serves.
- **It is the only process left behind, and it is announced**: its address, its pid and
  its log are printed and kept in the state file, and ``stop`` ends its whole session
  (its Python workers with it).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from migcheck.analysis import shipping
from migcheck.analysis.server_state import (
    LOCAL_HOST,
    LOOPBACK,
    SERVER_CLASS,
    log_path,
    read_state,
    state_path,
)
from migcheck.errors import MigcheckError
from migcheck.model.server import ConnectServer, ServerState
from migcheck.untrusted import visible

#: How long a start may take before it is given up (a cold JVM on a loaded machine).
START_TIMEOUT_S = 120.0
#: How long ``stop`` waits for the server to end after SIGTERM, before SIGKILL.
STOP_TIMEOUT_S = 30.0
#: How often a start or a stop looks again.
POLL_S = 0.2


def _found(state: Mapping[str, Any], kind: ServerState, seconds: float = 0.0) -> ConnectServer:
    return ConnectServer(
        kind, state["url"], int(state["pid"]), state["master"], state["log"], seconds
    )


def status() -> ConnectServer:
    """The server that runs now, or :attr:`ServerState.NONE`."""
    state = read_state()
    return ConnectServer(ServerState.NONE) if state is None else _found(state, ServerState.RUNNING)


def start(port: int, master: str, conf: Mapping[str, str]) -> ConnectServer:
    """Start the server in the background and wait until it accepts connections; a server
    that runs already on ``port`` is reported as running."""
    running = read_state()
    if running is not None:
        if int(running["port"]) == port:
            return _found(running, ServerState.RUNNING)
        raise MigcheckError(
            f"migcheck's Spark Connect server already runs at {visible(running['url'])} "
            f"(pid {running['pid']}): stop it first (migcheck server stop)"
        )
    _check_port_free(port)
    started = time.monotonic()
    token = secrets.token_hex(24)
    proc = _launch(port, master, conf, token)
    try:
        _wait_until_up(proc, port)
    except BaseException:  # Ctrl-C or a failed start: no server left that no state names
        _kill_session(proc.pid)
        proc.wait()
        raise
    state = {
        "url": f"sc://{LOCAL_HOST}:{port}", "port": port, "pid": proc.pid, "master": master,
        "log": str(log_path()), "token": token,
    }  # fmt: skip
    _write_state(state)
    return _found(state, ServerState.STARTED, time.monotonic() - started)


def stop() -> ConnectServer:
    """End the server, then every process of its session (its Python workers, whose
    daemon makes a process group of its own): SIGTERM to the server, SIGKILL to what is
    left after :data:`STOP_TIMEOUT_S`, and return once none is left."""
    state = read_state()
    if state is None:
        return ConnectServer(ServerState.NONE)
    started, pid = time.monotonic(), int(state["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not _ended(pid, STOP_TIMEOUT_S):
        _kill_session(pid)
        _ended(pid, STOP_TIMEOUT_S)
    with contextlib.suppress(OSError):
        state_path().unlink()
    return _found(state, ServerState.STOPPED, time.monotonic() - started)


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` now (the server's: it was started in its own)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            if os.getsid(int(entry.name)) == sid:
                found.append(int(entry.name))
    return found


def _kill_session(sid: int) -> None:
    for pid in _session(sid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _ended(sid: int, timeout_s: float) -> bool:
    """Whether every process of the server's session ended within ``timeout_s`` (its
    workers end themselves once the server is gone), the server reaped if it is ours."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(sid, os.WNOHANG)
        if not _session(sid):
            return True
        time.sleep(POLL_S)
    return False


def _check_port_free(port: int) -> None:
    with socket.socket() as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError as e:
            raise MigcheckError(
                f"port {port} is taken ({e.strerror}): start the server on another "
                f"(migcheck server start --port N)"
            ) from None


def _launch(port: int, master: str, conf: Mapping[str, str], token: str) -> subprocess.Popen[bytes]:
    """spark-submit of the server class, in a session of its own (it outlives this
    command), its output in :func:`log_path`."""
    from migcheck.analysis.spark import server_settings, spark_home

    settings = server_settings(master, conf)
    settings.update({
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
    })  # fmt: skip
    home = spark_home()
    argv = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", master,
            "--name", "migcheck-connect-server"]  # fmt: skip
    for key, value in settings.items():
        argv += ["--conf", f"{key}={value}"]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_CONNECT_AUTHENTICATE_TOKEN": token}
    if shipping.is_local(master):
        env["PYSPARK_PYTHON"] = conf.get("spark.pyspark.python") or sys.executable
    log_path().parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log_path(), "wb") as log:
        return subprocess.Popen(
            [*argv, "spark-internal"], stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip


def _wait_until_up(proc: subprocess.Popen[bytes], port: int) -> None:
    """Until the server accepts a connection; if it ends or takes too long, it is ended
    and the one line names its log."""
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise MigcheckError(
                f"the Spark Connect server ended as it started (exit {proc.returncode}): "
                f"read its log, {log_path()}"
            )
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), POLL_S):
            return
        time.sleep(POLL_S)
    raise MigcheckError(
        f"the Spark Connect server did not accept connections within "
        f"{START_TIMEOUT_S:.0f} s: read its log, {log_path()}"
    )


def _write_state(state: Mapping[str, Any]) -> None:
    """The state file, readable by this user alone (it holds the token)."""
    path = state_path()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f)
