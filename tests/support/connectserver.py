"""A Spark Connect server started and stopped as an operator does it: ``migcheck server
start`` and ``migcheck server stop``, each a real process, the server a real Spark Connect
server (pyspark's own spark-submit and server class).

Each server keeps its state (its address, pid and token) in a cache directory of its own,
which every check that reaches it is given (``MIGCHECK_CACHE_DIR``), as an operator's
checks share their user's cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest import session_pids
from oracles import run_cli
from sparkcluster import free_ports

STARTED = re.compile(r"^migcheck server: started at (sc://\S+) \(pid (\d+),", re.M)


def free_port() -> int:
    """A port nothing listens on now."""
    return free_ports(1)[0]


def migcheck(
    env: dict[str, str], *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``migcheck ARGS`` as a process, in ``env`` (a server's cache, its token)."""
    return run_cli(*args, timeout=timeout, env=env)


#: The environment variables that send a check to a Spark Connect server.
REMOTE_ENV = ("MIGCHECK_REMOTE", "MIGCHECK_REMOTE_CONFIG")


def embedded(env: dict[str, str]) -> dict[str, str]:
    """``env`` without a Spark Connect server: for a check whose Spark must die with it (a
    test that kills a copy mid-round kills its Spark with it; on a server its tasks would
    run on)."""
    return {k: v for k, v in env.items() if k not in REMOTE_ENV}


@dataclass
class Server:
    """A server ``migcheck server start`` started: its address, its pid, the environment
    its checks run in, and a ``--remote-config`` file of its token (for checks whose
    cache is another)."""

    url: str
    pid: int
    env: dict[str, str] = field(default_factory=dict)
    config: Path | None = None

    def remote_env(self) -> dict[str, str]:
        """What sends a check run in any environment to this server."""
        return {"MIGCHECK_REMOTE": self.url, "MIGCHECK_REMOTE_CONFIG": str(self.config)}

    def check(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """A migcheck command on this server (``--remote`` added)."""
        return migcheck(self.env, *args, "--remote", self.url, timeout=timeout)

    def processes(self) -> set[int]:
        """The server's processes now: its session's (the JVM, started in a session of its
        own) and the Python workers' (whose daemon makes a group, not a session, of its own)."""
        return set(session_pids(self.pid))


def start(cache: Path, *extra: str) -> Server:
    """``migcheck server start`` on a free port, its state in ``cache``."""
    env = {**os.environ, "MIGCHECK_CACHE_DIR": str(cache)}
    r = migcheck(env, "server", "start", "--port", str(free_port()), *extra)
    found = STARTED.search(r.stdout)
    assert r.returncode == 0 and found, r.stdout + r.stderr
    token = json.loads((cache / "connect" / "server.json").read_text())["token"]
    config = cache / "remote.properties"
    config.touch(mode=0o600)
    config.write_text(f"token={token}\n")
    return Server(found[1], int(found[2]), env, config)


def stop(server: Server) -> subprocess.CompletedProcess[str]:
    return migcheck(server.env, "server", "stop")


@contextlib.contextmanager
def running(cache: Path, *extra: str) -> Iterator[Server]:
    """A server for the block, stopped after it."""
    server = start(cache, *extra)
    try:
        yield server
    finally:
        stop(server)


@dataclass
class Foreign:
    """A Spark Connect server migcheck did not start, as a team runs one: its own pyspark
    install (``venv``, PySpark's requirements and nothing of migcheck), its workers that
    install's Python (``python``), a token in its environment.  ``log``: its own output
    (INFO)."""

    url: str
    process: subprocess.Popen[bytes]
    config: Path
    log: Path
    python: Path

    def check(self, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        """A migcheck command on this server, its token from ``--remote-config``."""
        return migcheck(
            embedded(env), *args, "--remote", self.url, "--remote-config", str(self.config)
        )


@contextlib.contextmanager
def foreign(venv: Path, spark_home: Path, folder: Path) -> Iterator[Foreign]:
    """A :class:`Foreign` server for the block: spark-submit of Spark Connect's server
    class, in a session of its own and an environment of its own, every process of that
    session killed after the block."""
    port, token = free_port(), os.urandom(16).hex()
    python = venv / "bin" / "python"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(folder),
        "SPARK_HOME": str(spark_home),
        "PYSPARK_PYTHON": str(python),
        "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
        **({"JAVA_HOME": os.environ["JAVA_HOME"]} if "JAVA_HOME" in os.environ else {}),
    }
    argv = [str(spark_home / "bin" / "spark-submit"), "--master", "local[2]",
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "spark-internal"]  # fmt: skip
    log = folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    config = folder / "remote.properties"
    config.touch(mode=0o600)
    config.write_text(f"token={token}\n")
    try:
        _until_listening(port, process, log)
        yield Foreign(f"sc://localhost:{port}", process, config, log, python)
    finally:
        for pid in session_pids(process.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=30)


def _until_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Block until the server accepts a connection (a connect attempt is the event)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.2)
    raise AssertionError(f"the Spark Connect server did not listen within 120 s: {log}")
