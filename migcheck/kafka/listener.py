"""Ask each bootstrap address, before kafka-python does, whether a Kafka listener that
migcheck's client can talk to answers there.

Why: kafka-python retries a refused connection, a name that does not resolve and a
listener that speaks another protocol alike until its bootstrap timeout, then says
only "Unable to bootstrap".  One plain connection per address, with a short timeout,
tells the cases apart in well under a second and names the fix.  The probe is
read-only: an ApiVersions and an empty Metadata request (no topic), the first two
requests any Kafka client sends.

What a listener answers a PLAINTEXT client, as Apache Kafka 4.3 does (tried against
``scripts/kafka-local start --sasl``):

- PLAINTEXT: both requests, as answers with the request's correlation id;
- SASL_PLAINTEXT: ApiVersions (allowed before a login), then it closes the connection at
  the Metadata request ("Unexpected Kafka request of type METADATA during SASL handshake");
- SSL: it reads the request as a broken TLS record and answers a TLS alert, or closes.
"""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass

from migcheck.errors import ReadError

#: How long one address may take to resolve and to accept a connection: a reachable
#: broker does each in milliseconds, and the two together stay within issue 43's 5 s
#: even for an address that swallows packets.
PROBE_TIMEOUT_S = 2.0

#: How long a listener that accepted the connection may take to answer a request: as
#: long as kafka-python's bootstrap may take (config.BOOTSTRAP_TIMEOUT_MS), since a busy
#: broker answers late, and one that never answers is not misnamed after a short wait.
ANSWER_TIMEOUT_S = 8.0

#: Kafka's API keys and the versions the probe sends (each has been in every broker
#: since 0.10, and 4.x still takes them).
API_VERSIONS = (18, 0)
METADATA = (3, 1)

#: The first byte of a TLS record: a handshake (22) or an alert (21), with the record's
#: major version 3 in the next byte.
TLS_RECORD_TYPES = (21, 22)

FIX = "migcheck spoke PLAINTEXT; give --command-config a file that sets"

#: What to put in --command-config for each listener that wants more than PLAINTEXT.
SASL_KEYS = (
    "security.protocol=SASL_PLAINTEXT (SASL_SSL over TLS), sasl.mechanism (PLAIN, "
    "SCRAM-SHA-256 or SCRAM-SHA-512) and sasl.jaas.config (its username and password)"
)
TLS_KEYS = (
    "security.protocol=SSL (SASL_SSL with a login), ssl.truststore.type=PEM and "
    "ssl.truststore.location (the CA's PEM file)"
)


@dataclass(frozen=True)
class Verdict:
    """One address's answer: ``None`` as ``problem`` when a usable listener answered."""

    address: str
    problem: str | None


def _host_port(address: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` (Kafka's default port 9092 when none is given)."""
    host, sep, port = address.strip().rpartition(":")
    if not sep or "]" in port:
        host, port = address.strip(), "9092"
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise ReadError(
            f"--bootstrap-server {address}: {port!r} is not a port (HOST:PORT)"
        ) from None


def _resolve(host: str, port: int) -> list[tuple] | None:
    """``getaddrinfo`` bounded by :data:`PROBE_TIMEOUT_S` (it has no timeout of its own,
    and a resolver that does not answer would hang it): ``None`` when it takes longer."""
    found: list[list[tuple] | OSError] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as e:
            found.append(e)

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(PROBE_TIMEOUT_S)
    if not found:
        return None
    if isinstance(found[0], OSError):
        raise found[0]
    return found[0]


def _request(api: tuple[int, int], correlation: int, body: bytes) -> bytes:
    """One request frame: header v1 (key, version, correlation id, client id)."""
    client = b"migcheck"
    header = struct.pack(">hhih", *api, correlation, len(client)) + client
    return struct.pack(">i", len(header) + len(body)) + header + body


def _ask(sock: socket.socket, request: bytes) -> bytes | None:
    """The first bytes of the listener's answer to ``request``: b"" when it closed the
    connection (before or after the request reached it), ``None`` when it said nothing
    within :data:`ANSWER_TIMEOUT_S`."""
    try:
        sock.sendall(request)
        return sock.recv(8)
    except TimeoutError:
        return None
    except OSError:  # reset, or a broken pipe: closed
        return b""


def _speaks_tls(head: bytes | None) -> bool:
    return head is not None and len(head) >= 2 and head[0] in TLS_RECORD_TYPES and head[1] == 3


def _drain(sock: socket.socket, head: bytes) -> None:
    """Read the rest of the response whose first bytes are ``head``, so that the next
    request's answer starts at its own size field."""
    (size,) = struct.unpack(">i", head[:4])
    left = size + 4 - len(head)
    while left > 0:
        chunk = sock.recv(min(left, 65536))
        if not chunk:
            return
        left -= len(chunk)


def _plaintext_problem(sock: socket.socket, address: str) -> str | None:
    """What a PLAINTEXT client meets at ``address``: ``None`` for a PLAINTEXT listener."""
    sock.settimeout(ANSWER_TIMEOUT_S)
    head = _ask(sock, _request(API_VERSIONS, 1, b""))
    if _speaks_tls(head):
        return f"{address} is a TLS listener: {FIX} {TLS_KEYS}"
    if head is None or len(head) < 8 or head[4:8] != struct.pack(">i", 1):
        return (
            f"cannot reach Kafka at {address}: it accepted a connection but did not answer "
            "Kafka's first request (not a Kafka listener? check --bootstrap-server)"
        )
    _drain(sock, head)
    head = _ask(sock, _request(METADATA, 2, struct.pack(">i", 0)))
    if head is None or (len(head) >= 8 and head[4:8] == struct.pack(">i", 2)):
        return None  # a slow answer: kafka-python's own bootstrap will tell
    return (
        f"{address} is a SASL listener, which answers no request before a login: {FIX} {SASL_KEYS}"
    )


def _probe(address: str, plaintext: bool) -> Verdict:
    host, port = _host_port(address)
    where = f"cannot reach Kafka at {address}"
    try:
        infos = _resolve(host, port)
    except OSError:
        return Verdict(
            address, f"{where}: the host name {host} does not resolve (check --bootstrap-server)"
        )
    if infos is None:
        return Verdict(
            address, f"{where}: the host name {host} did not resolve within {PROBE_TIMEOUT_S:g} s"
        )
    family, kind, proto, _, sockaddr = infos[0]
    try:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(PROBE_TIMEOUT_S)
            sock.connect(sockaddr)
            return Verdict(address, _plaintext_problem(sock, address) if plaintext else None)
    except ConnectionRefusedError:
        reason = "connection refused: no broker listens there (check --bootstrap-server)"
    except TimeoutError:
        reason = (
            f"no answer within {PROBE_TIMEOUT_S:g} s (a wrong address, or a firewall? "
            "check --bootstrap-server)"
        )
    except OSError as e:
        reason = f"{(e.strerror or 'cannot connect').lower()} (check --bootstrap-server)"
    return Verdict(address, f"{where}: {reason}")


#: The bootstrap lists already probed in this process: a command opens several clients.
_probed: set[tuple[str, bool]] = set()
_probing = threading.Lock()


def check_listeners(bootstrap_servers: str, security_protocol: str) -> None:
    """Raise a :class:`ReadError` naming the cause and its fix unless some bootstrap
    address answers as a listener for ``security_protocol``; once per process and list.

    Only a PLAINTEXT client's listener is asked what it speaks: a TLS or SASL client
    meets a mismatch in its own handshake, and kafka-python names a refused login."""
    plaintext = security_protocol.upper() == "PLAINTEXT"
    key = (bootstrap_servers, plaintext)
    with _probing:
        if key in _probed:
            return
        verdicts = []
        for address in bootstrap_servers.split(","):
            verdict = _probe(address, plaintext)
            if verdict.problem is None:
                _probed.add(key)
                return
            verdicts.append(verdict)
    raise ReadError("; ".join(v.problem for v in verdicts if v.problem))
