"""Spark Connect: checks on a session that outlives them (``--remote sc://HOST:PORT``).

Each check run on ``--master`` is a new Spark application, and its start (a JVM, on a
cluster its executors and their Python) costs more than a small check's work.  A Spark
Connect server keeps one application running; a check with ``--remote`` opens a session
on it over gRPC and starts no JVM of its own (docs/cluster.md, "Spark Connect").

What this module decides, and why:

- **Secrets never come from the command line.**  A Spark Connect URL may carry
  ``;token=`` and ``;use_ssl=``; a command line is visible to every user of the machine
  (``ps``) and lands in shell histories and CI logs.  So ``--remote`` refuses both, and
  :func:`remote_address` adds them from a ``--remote-config`` properties file.  The
  address with the token is handed to pyspark alone and never printed.
- **An unreachable server fails at once.**  pyspark's client retries an unavailable
  server for minutes; :func:`check_reachable` opens one TCP connection first, bounded.
- **A check reattaches to a warm session** (:mod:`remote_sessions`): a new one starts
  Python workers of its own on the server, which cost more than a small check's work.
- **Its jobs end with it** (:func:`release_opened`): a job a Ctrl-C or a failure left
  running would go on on the server.  A session of the pool stays for the next check,
  its ``--conf`` settings unset by that check; any other is released.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from migcheck.analysis import remote_sessions
from migcheck.analysis.remote_sessions import Slot
from migcheck.analysis.server_state import LOCAL_HOST, local_token
from migcheck.analysis.session import PROGRESS_SETTINGS
from migcheck.errors import MigcheckError, UsageError
from migcheck.kafka.config import parse_properties
from migcheck.untrusted import visible

SCHEME = "sc://"
#: Spark Connect's own default port, as its server and client take it.
DEFAULT_PORT = 15002
#: URL parameters that carry a secret or say how the channel is secured: read from the
#: ``--remote-config`` file alone, never from the command line.
SECURED = ("token", "use_ssl")
#: Spark Connect's other URL parameters, which may be given in ``--remote``.
PLAIN = ("user_id", "user_agent", "grpc_max_message_size")
#: The oldest Spark a server may run: the hash is an ``arrow_udf`` (Spark 4.1+).
MINIMUM_SPARK = (4, 1)

#: How long the first connection to the server may take before the check gives up.
CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Remote:
    """A Spark Connect server to run on: ``--remote`` (checked by :func:`check_url`) and
    the ``--remote-config`` file its token and TLS setting come from, if any; ``implied``:
    it came from the environment (``MIGCHECK_REMOTE``), where a Spark session already
    running in this process (spark-submit's, a notebook's) wins over it."""

    url: str
    config: str | None = None
    implied: bool = False


@dataclass(frozen=True)
class Endpoint:
    """A checked ``--remote`` URL, split: its host, its port and its plain parameters."""

    host: str
    port: int
    params: tuple[tuple[str, str], ...] = ()


def secured_refusal(key: str) -> str:
    """The one line for a secured setting met on the command line."""
    return (
        f"--remote carries {key}=, which is read from a file alone (the command line is "
        f"visible to every user of this machine): put {key}=... in a properties file and "
        f"pass it as --remote-config FILE"
    )


def check_url(url: str) -> Endpoint:
    """``url`` as Spark Connect writes it (``sc://host[:port][/;key=value...]``), split,
    or one line naming what is wrong with it."""
    text = url.strip()
    if not text.startswith(SCHEME):
        raise UsageError(f"--remote {visible(url)}: a Spark Connect URL starts with {SCHEME}")
    address, _, tail = text[len(SCHEME) :].partition("/")
    host, port = _host_port(url, address)
    params = []
    for part in filter(None, tail.split(";")):
        key, sep, value = part.partition("=")
        if key in SECURED:
            raise UsageError(secured_refusal(key))
        if not sep or key not in PLAIN:
            raise UsageError(
                f"--remote {visible(url)}: {visible(part)} is not one of Spark Connect's URL "
                f"parameters migcheck takes ({', '.join(PLAIN)})"
            )
        params.append((key, value))
    return Endpoint(host, port, tuple(params))


def _host_port(url: str, address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":") if not address.endswith("]") else (address, "", "")
    if not sep:
        host, port = address, str(DEFAULT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(
            f"--remote {visible(url)}: give the server as sc://HOST:PORT (its port is "
            f"{DEFAULT_PORT} unless it was started on another)"
        )
    return host, int(port)


def read_config(path: str | None) -> dict[str, str]:
    """The secured parameters of ``--remote-config`` (a properties file of ``token=`` and
    ``use_ssl=``); empty without one.  Its values are never put in a message."""
    if path is None:
        return {}
    try:
        props = parse_properties(Path(path).read_text())
    except OSError as e:
        raise UsageError(f"--remote-config {visible(path)}: {e.strerror}") from None
    unknown = sorted(set(props) - set(SECURED))
    if unknown:
        raise UsageError(
            f"--remote-config {visible(path)}: {visible(unknown[0])} is not a Spark Connect "
            f"setting it takes ({', '.join(SECURED)})"
        )
    if props.get("use_ssl", "true").lower() not in ("true", "false"):
        raise UsageError(f"--remote-config {visible(path)}: use_ssl is true or false")
    return props


def remote_address(endpoint: Endpoint, secured: Mapping[str, str], session_id: str) -> str:
    """The URL pyspark connects with: the endpoint's parameters, the secured ones and the
    session's id.  It may hold a token: hand it to pyspark, never print it."""
    params = [*endpoint.params, *sorted(secured.items()), ("session_id", session_id)]
    tail = "".join(f";{key}={value}" for key, value in params)
    return f"{SCHEME}{endpoint.host}:{endpoint.port}/{tail}"


def shown(endpoint: Endpoint) -> str:
    """The server as a message names it: host and port, no parameter."""
    return visible(f"{SCHEME}{endpoint.host}:{endpoint.port}")


def check_reachable(endpoint: Endpoint, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """One TCP connection to the server, or the one line saying it does not answer."""
    try:
        with socket.create_connection((endpoint.host.strip("[]"), endpoint.port), timeout_s):
            return
    except OSError as e:
        reason = e.strerror or type(e).__name__
    raise MigcheckError(
        f"no Spark Connect server answers at {shown(endpoint)} ({reason}): start one "
        f"(migcheck server start) or give the address a running one listens on"
    )


def uses_tls(endpoint: Endpoint, secured: Mapping[str, str]) -> bool:
    """Whether pyspark's channel to the server is TLS: ``use_ssl=true``, or a token to any
    host but ``localhost`` (where pyspark sends a token over a local channel)."""
    return secured.get("use_ssl", "").lower() == "true" or (
        "token" in secured and endpoint.host != LOCAL_HOST
    )


def check_handshake(endpoint: Endpoint, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """One TLS handshake with the server, by gRPC's own TLS (the roots pyspark's channel
    trusts), or the one line saying why none came: pyspark retries a failed handshake
    for minutes, as if the server were down.  gRPC's own log of the failure is kept to
    errors (``GRPC_VERBOSITY``, unless the user set it), so the line stays the only one."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    import grpc

    channel = grpc.secure_channel(
        f"{endpoint.host}:{endpoint.port}", grpc.ssl_channel_credentials()
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
    except grpc.FutureTimeoutError:
        raise MigcheckError(
            f"no TLS session with the Spark Connect server at {shown(endpoint)} within "
            f"{timeout_s:.0f} s: this machine does not trust its certificate (name the CA's "
            f"PEM file in GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), or it does not speak TLS (set "
            f"use_ssl=false in --remote-config)"
        ) from None
    finally:
        channel.close()


def check_version(version: str, endpoint: Endpoint) -> None:
    """Refuse a server older than :data:`MINIMUM_SPARK`, in one line."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < MINIMUM_SPARK:
        least = ".".join(map(str, MINIMUM_SPARK))
        raise MigcheckError(
            f"the Spark Connect server at {shown(endpoint)} runs Spark {visible(version)}; "
            f"migcheck needs Spark {least} or later (its hash is an Arrow UDF): upgrade "
            f"the server, or run with --master"
        )


def open_session(remote: Remote, conf: Mapping[str, str]) -> Any:
    """A session on the server ``remote`` names (the pool's first free one), with the
    user's ``--conf`` settings, its Spark checked; its jobs end when this process does
    (:func:`release_opened`).  Asked again in one process, the same session."""
    if remote.url in _OPENED:
        return _OPENED[remote.url][0]
    endpoint, secured = _secured(check_url(remote.url), remote.config)
    check_reachable(endpoint)
    if uses_tls(endpoint, secured):
        check_handshake(endpoint)
    slot = remote_sessions.take(endpoint.host, endpoint.port)
    spark, version = _attach(endpoint, secured, slot)
    if slot.pooled:  # what runs in it now is a killed check's, left on the server
        spark.interruptAll()
    if not _OPENED:
        atexit.register(release_opened)
        _release_on_sigterm()
    _OPENED[remote.url] = (spark, slot)
    check_version(version, endpoint)
    _settings(spark, slot, {**PROGRESS_SETTINGS, **conf})
    return spark


def opened_slot(remote: Remote) -> Slot:
    """The pool's slot of the session :func:`open_session` opened for ``remote``."""
    return _OPENED[remote.url][1]


def _secured(endpoint: Endpoint, config: str | None) -> tuple[Endpoint, dict[str, str]]:
    """The secured parameters: ``--remote-config``'s, else, for the server this machine
    runs (:mod:`connect_server`), its token, sent to it as ``localhost`` (where pyspark
    sends a token without TLS)."""
    secured = read_config(config)
    token = None if config else local_token(endpoint.host, endpoint.port)
    if token is None:
        return endpoint, secured
    return replace(endpoint, host=LOCAL_HOST), {"token": token}


def _attach(endpoint: Endpoint, secured: Mapping[str, str], slot: Slot) -> tuple[Any, str]:
    """The slot's session and the server's Spark version; a new session under a new id
    where the server no longer has the slot's (it expired, or was released)."""
    from pyspark.sql import SparkSession

    for attempt in (1, 2):
        address = remote_address(endpoint, secured, slot.session_id)
        try:
            spark = SparkSession.builder.remote(address).create()
            return spark, spark.version  # the first call: it reaches the server
        except Exception as e:  # pyspark's message may quote the address, token and all
            if "INVALID_HANDLE" in str(e) and attempt == 1:
                remote_sessions.renew(slot)
                continue
            raise MigcheckError(_refusal(endpoint, str(e))) from None
    raise AssertionError("unreachable")


def _refusal(endpoint: Endpoint, error: str) -> str:
    """Why the server refused a session, in one line that never quotes pyspark's message
    (it may hold the address, token and all)."""
    if "UNAUTHENTICATED" in error:
        return (
            f"the Spark Connect server at {shown(endpoint)} refused the token: give the one "
            f"it was started with as token= in --remote-config"
        )
    return (
        f"the Spark Connect server at {shown(endpoint)} refused a session (read its log): "
        f"check --remote, and --remote-config's token= and use_ssl="
    )


def _settings(spark: Any, slot: Slot, conf: Mapping[str, str]) -> None:
    """``conf`` on the session (the user's ``--conf`` over migcheck's own), and those the
    last check set unset."""
    for key in slot.conf_keys:
        if key not in conf:
            with contextlib.suppress(Exception):
                spark.conf.unset(key)
    slot.conf_keys = sorted(conf)
    remote_sessions.save(slot)
    for key, value in conf.items():
        _set(spark, key, value)


def _set(spark: Any, key: str, value: str) -> None:
    """A ``--conf`` setting on a remote session: a session's runtime settings only."""
    try:
        spark.conf.set(key, value)
    except Exception:
        raise UsageError(
            f"--conf {visible(key)}: a Spark Connect session takes runtime settings only; "
            f"set this one where the server starts"
        ) from None


def _release_on_sigterm() -> None:
    """A SIGTERM ends the check as before, but its jobs on the server first: the signal's
    default kills the process without running :func:`release_opened`.  Only where nothing
    else handles it (``copy --follow`` does) and only from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def end(signum: int, frame: object) -> None:
        release_opened()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, end)


#: The sessions this process opened, by ``--remote``, and their slots.
_OPENED: dict[str, tuple[Any, Slot]] = {}


def release_opened() -> None:
    """End the running jobs of every session this process opened: at exit, and on Ctrl-C
    (``stop_now``).  A session outside the pool is released too (its cached frames with
    it); a pooled one stays for the next check."""
    while _OPENED:
        _, (spark, slot) = _OPENED.popitem()
        with contextlib.suppress(Exception):
            spark.interruptAll()
        if not slot.pooled:
            with contextlib.suppress(Exception):
                spark.stop()
